package harness

// This file says, before a run starts, about how much memory and how many
// events it will take, from its plan alone: the brokers, the partitions
// and their replicas, the records its steps will send and the consumers
// that read them. Commands refuse a run whose estimate passes their
// -max-memory (cmd/kafkasim/resources.go), so that an oversized cluster is
// said to be one before it is built rather than found by the kernel's OOM
// killer.
//
// The estimate is a fit to measured peaks, not an account of every
// allocation: peak resident memory of `kafkasim run` (GOGC=400, the
// command's default) on scripts of 1 to 30,000 partition replicas and 0 to
// 60,000 sent records (docs/commands.md, "Memory", has the table). It
// errs high: a run rarely needs more than it says, often less (a record
// refused, a swarm's client crashed for a while). What it leaves out: the
// linearizability search (bounded in wall time by -budget, not in
// memory), what a -report's timeline keeps per event (counted, roughly,
// as estimateTracedEvent), the explorer's visited set.

import (
	"strconv"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/sim"
)

// The fitted constants, in bytes (docs/commands.md, "Memory").
const (
	estimateBase = 24 << 20 // the program, the checkers
	// A broker or controller: its node, fetcher threads' sessions, the
	// metadata cache (64 brokers cost ~350 MiB more than 6 with the same
	// 30,000 replicas).
	estimateNode = 6 << 20
	// A partition replica: its log, indexes, fetcher and replica states,
	// the observer's view. Past ~10,000 replicas each costs a little more
	// again (estimateReplicaSquared: the fetch sessions and the metadata
	// answers grow with the partitions of each broker).
	estimateReplica        = 28 << 10
	estimateReplicaSquared = 1.2 // bytes × replicas²
	// A sent record: its history operation, the checkers' indexes of it,
	// and each replica's copy (record batch, index entries).
	estimateRecord        = 2560
	estimateRecordReplica = 1024
	// A consumer: its node, fetch buffers and group state.
	estimateConsumer = 2 << 20
	// A consumer's view of a record: the polls in its history.
	estimateConsumedRecord = 700
	// An event kept in a whole trace (-report, -trace, await on a trace
	// record): the record and its fields.
	estimateTracedEvent = 200
)

// Estimate is a run's expected peak memory and events, from its plan.
type Estimate struct {
	Brokers           int   `json:"brokers"`
	PartitionReplicas int   `json:"partition_replicas"`
	Records           int   `json:"records"`   // the records the steps send
	Consumers         int   `json:"consumers"` // consumers the steps declare
	Bytes             int64 `json:"bytes"`
	Events            int64 `json:"events"`

	maxRF     int     // the largest replication factor
	simulated float64 // seconds the steps run
	traced    bool
}

// EstimateRun estimates the run of s under variant with set, as Run would
// run it; traced says the whole trace is kept (-report, -trace). The
// error is Prepare's (bad input).
func EstimateRun(s *scenarios.Script, variant string, set map[string]string, traced bool) (Estimate, error) {
	v, cfg, err := Prepare(s, variant, set)
	if err != nil {
		return Estimate{}, err
	}
	vars := scenarios.ScriptVars(v, set)
	e := Estimate{Brokers: s.Brokers + s.Controllers}
	for _, t := range s.Topics {
		e.PartitionReplicas += t.Partitions * t.ReplicationFactor
		e.maxRF = max(e.maxRF, t.ReplicationFactor)
	}
	ctp, transactional := false, false
	var simulated float64 // seconds: the run and swarm steps', and the end phase's few
	for _, st := range s.Steps {
		st = st.Substitute(vars)
		switch st.Op {
		case "run":
			simulated += float64(st.Dur) / 1e9
		case "produce":
			e.Records++
		case "send":
			if len(st.Args) > 2 {
				n, _ := strconv.Atoi(st.Args[2])
				e.Records += max(n, 0)
			}
		case "swarm":
			clients, _ := intArg(st.KV, "clients", 2)
			interval, _ := durArg(st.KV, "interval", 20*sim.Millisecond)
			if v, ok := vars["$clients"]; ok {
				clients, _ = strconv.Atoi(v)
			}
			if v, ok := vars["$interval"]; ok {
				if d, err := durArg(map[string]string{"interval": v}, "interval", 20*sim.Millisecond); err == nil {
					interval = d
				}
			}
			simulated += float64(st.Dur) / 1e9
			if interval > 0 {
				e.Records += max(clients, 0) * int(st.Dur/interval)
			}
		case "consumer":
			e.Consumers++
			if st.KV["pattern"] == scenarios.PatternCTP {
				ctp = true
			}
			transactional = transactional || st.KV["transactional.id"] != ""
		case "producer":
			transactional = transactional || st.KV["transactional.id"] != ""
		}
	}
	if ctp {
		e.Records *= 2 // each input's output
	}
	// The internal topics, created once a group or a transaction asks
	// for them: their partitions are replicas like any other.
	internalRF := func(rf int) int { return max(min(rf, s.Brokers), 1) }
	if e.Consumers > 0 {
		e.PartitionReplicas += cfg.Broker.OffsetsTopicNumPartitions * internalRF(cfg.Broker.OffsetsTopicReplicationFactor)
	}
	if transactional {
		e.PartitionReplicas += cfg.Broker.Txn.StateLogNumPartitions * internalRF(cfg.Broker.Txn.StateLogReplicationFactor)
	}
	e.simulated, e.traced = simulated, traced
	return e.sum(), nil
}

// WithRecords is e with n records sent in place of the steps' (explore's
// workload on the script's cluster).
func (e Estimate) WithRecords(n int) Estimate {
	e.Records = n
	return e.sum()
}

// sum computes Bytes and Events from the plan's counts.
func (e Estimate) sum() Estimate {
	maxRF, simulated, traced := e.maxRF, e.simulated, e.traced
	pr, rec := float64(e.PartitionReplicas), float64(e.Records)
	bytes := estimateBase + estimateNode*float64(e.Brokers) + estimateConsumer*float64(e.Consumers) + estimateReplica*pr + estimateReplicaSquared*pr*pr +
		rec*float64(estimateRecord+estimateRecordReplica*maxRF) + rec*float64(e.Consumers)*estimateConsumedRecord
	// Events: about 7 to set up each replica, 2.3 plus 1.7 per replica for
	// each record, 1.5 per consumer per record (its fetches), and the
	// brokers' idle fetches.
	events := 7*pr + rec*(2.3+1.7*float64(maxRF)) + 1.5*rec*float64(e.Consumers) + float64(e.Brokers*e.Brokers)*4*(simulated+10)
	if traced {
		bytes += estimateTracedEvent * events
	}
	e.Bytes, e.Events = int64(bytes), int64(events)
	return e
}
