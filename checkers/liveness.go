// liveness.go: the liveness checker, the second phase of a run.
//
// What it checks: after the last fault healed and every broker was
// (re)started, the cluster recovered within the liveness timeout
// (kafkasim.liveness.timeout.ms of simulated time): every partition has a
// leader, every assigned replica is back in its leader's ISR, a probe
// produce with acks=all succeeded on every partition, and every consumer
// group with a running member is Stable with its members caught up to the
// HW. These are the liveness properties of Vanlightly's TLA+ models of
// Kafka replication and TigerBeetle's "liveness mode": safety checkers say
// nothing went wrong; this one says the system got going again.
//
// How it decides: the runner samples the conditions periodically during
// the phase and records, in Final.Liveness, each sample whose set of unmet
// conditions differs from the previous one (and always the last). The
// verdict is OK when some sample had no unmet condition; a violation (never
// permitted: Kafka's contract promises recovery once faults end — except
// for a partition Kafka keeps leaderless by design, Liveness.Offline:
// KIP-966 with no eligible replica and unclean election off; and a group
// lagging behind a last stable offset an unclean election left stuck,
// Liveness.StuckLSO: KAFKA-20716; and a partition with fewer replicas than
// its min.insync.replicas, which refuses every acks=all write, with the
// groups whose offsets live there, Liveness.Unwritable and Groups) naming
// each condition still unmet at the deadline and since when it has been
// unmet without a break; Unknown when no phase was recorded, it was
// skipped, or it ended before the deadline without every condition holding.
//
// What it simplifies: the conditions are sampled, not watched event by
// event, so "since" is the first sample of the unbroken unmet run (at most
// one sampling period late); a condition that held between two samples and
// broke again is not seen to have held.

package checkers

import (
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// NameLiveness is the liveness checker's name.
const NameLiveness = "liveness"

// The kinds of liveness conditions.
const (
	LivenessNoLeader      = "no-leader"          // the partition has no live leader at the current epoch
	LivenessNotInISR      = "not-in-isr"         // an assigned replica is outside the leader's ISR
	LivenessProbeFailed   = "probe-not-acked"    // no acks=all probe produce succeeded yet
	LivenessBrokerDown    = "broker-not-running" // a broker is down or halted after the end phase restarted it
	LivenessGroupUnstable = "group-not-stable"   // a consumer group is not Stable
	LivenessGroupLagging  = "group-lagging"      // a member's position is below the partition's HW
)

// LivenessCondition is one condition that did not hold at a sample.
type LivenessCondition struct {
	// Kind is one of the Liveness* kinds.
	Kind string
	// Topic and Partition locate a partition condition; Broker names the
	// replica or broker (-1 when none); Group the consumer group.
	Topic     string `json:",omitempty"`
	Partition int32  `json:",omitempty"`
	Broker    int32
	Group     string `json:",omitempty"`
	// Description says what was seen, e.g. "ISR [0 1], leader 0 e2".
	Description string `json:",omitempty"`
}

// key identifies the condition across samples (the description may change).
func (c LivenessCondition) key() string {
	return c.Kind + "|" + c.Topic + "|" + strconv.Itoa(int(c.Partition)) + "|" + strconv.Itoa(int(c.Broker)) + "|" + c.Group
}

// LivenessSample is the set of unmet conditions at one instant.
type LivenessSample struct {
	Time  sim.Time
	Unmet []LivenessCondition `json:",omitempty"`
}

// Liveness is what the runner observed in the liveness phase.
type Liveness struct {
	// Start is when the phase began (faults healed, every broker started);
	// Deadline is Start plus kafkasim.liveness.timeout.ms.
	Start, Deadline sim.Time
	// Samples are the samples whose unmet set changed, in time order, and
	// the last one taken.
	Samples []LivenessSample `json:",omitempty"`
	// Skipped says why the phase did not run (the run broke first); the
	// verdict is then Unknown.
	Skipped string `json:",omitempty"`
	// Replay is the command that replays the run (named by a violation).
	Replay string `json:",omitempty"`
	// Offline lists the partitions the cluster keeps leaderless by design
	// (Facts.Offline): their conditions are permitted, naming why.
	Offline []OfflinePartition `json:",omitempty"`
	// StuckLSO lists the partitions whose last stable offset an unclean
	// election left stuck (KAFKA-20716: a transaction's data kept, its
	// marker lost): a group lagging there (read_committed stops at the
	// LSO) is permitted, naming why; their other conditions are not.
	StuckLSO []OfflinePartition `json:",omitempty"`
	// Unwritable lists the partitions with fewer replicas than their
	// min.insync.replicas: Kafka refuses every acks=all write to them
	// (NOT_ENOUGH_REPLICAS), so their probe is permitted to fail, naming
	// why; Groups the consumer groups whose __consumer_offsets partition
	// is one of them: every group write (SyncGroup's assignment, a commit)
	// fails, so the group is permitted never to become Stable and never
	// to catch up.
	Unwritable []OfflinePartition `json:",omitempty"`
	Groups     []UnwritableGroup  `json:",omitempty"`
}

// UnwritableGroup is a consumer group whose coordinator cannot write: see
// Liveness.Groups.
type UnwritableGroup struct {
	Group string
	Why   string
}

// CheckLiveness judges a run's liveness phase (see the file comment).
func CheckLiveness(l *Liveness) Verdict {
	switch {
	case l == nil:
		return verdict(NameLiveness, nil, true, "no liveness phase was recorded (a history saved before liveness, or a run without an end phase)")
	case l.Skipped != "":
		return verdict(NameLiveness, nil, true, "the liveness phase did not run: "+l.Skipped)
	case len(l.Samples) == 0:
		return verdict(NameLiveness, nil, true, "the liveness phase took no sample")
	}
	timeout := l.Deadline.Sub(l.Start)
	for _, s := range l.Samples {
		if len(s.Unmet) == 0 {
			return verdict(NameLiveness, nil, false, "every condition held at "+s.Time.String()+", "+s.Time.Sub(l.Start).String()+
				" after the phase began at "+l.Start.String()+" (timeout "+timeout.String()+")")
		}
	}
	last := l.Samples[len(l.Samples)-1]
	if last.Time < l.Deadline {
		return verdict(NameLiveness, nil, true, "the phase ended at "+last.Time.String()+", before its deadline "+l.Deadline.String()+
			", with "+strconv.Itoa(len(last.Unmet))+" condition(s) unmet: cannot tell stuck from slow")
	}
	var anomalies []Anomaly
	for _, c := range last.Unmet {
		since := last.Time
		for i := len(l.Samples) - 1; i >= 0 && hasCondition(l.Samples[i].Unmet, c.key()); i-- {
			since = l.Samples[i].Time
		}
		a := Anomaly{Kind: c.Kind, Topic: c.Topic, Partition: c.Partition, Times: []sim.Time{since}}
		if c.Broker >= 0 {
			a.Replicas = []int32{c.Broker}
		}
		desc := describeLiveness(c)
		if c.Description != "" {
			desc += " (" + c.Description + ")"
		}
		a.Description = desc + ", stuck since " + since.String() + " until the deadline " + l.Deadline.String() +
			" (" + timeout.String() + " after the phase began at " + l.Start.String() + ")"
		if why := offlineWhy(l.Offline, c.Topic, c.Partition); why != "" && c.Topic != "" {
			a.Description += "; " + why
			a.Permitted = true
		}
		if why := offlineWhy(l.StuckLSO, c.Topic, c.Partition); why != "" && c.Topic != "" && c.Kind == LivenessGroupLagging && !a.Permitted {
			a.Description += "; " + why
			a.Permitted = true
		}
		if why := offlineWhy(l.Unwritable, c.Topic, c.Partition); why != "" && c.Topic != "" && c.Kind == LivenessProbeFailed && !a.Permitted {
			a.Description += "; " + why
			a.Permitted = true
		}
		if i := slices.IndexFunc(l.Groups, func(g UnwritableGroup) bool { return g.Group == c.Group }); i >= 0 && c.Group != "" && !a.Permitted {
			a.Description += "; " + l.Groups[i].Why
			a.Permitted = true
		}
		anomalies = append(anomalies, a)
	}
	var notes []string
	if l.Replay != "" {
		notes = append(notes, "replay: "+l.Replay)
	}
	return verdict(NameLiveness, anomalies, false, notes...)
}

func hasCondition(cs []LivenessCondition, key string) bool {
	for _, c := range cs {
		if c.key() == key {
			return true
		}
	}
	return false
}

func describeLiveness(c LivenessCondition) string {
	b := "b" + strconv.Itoa(int(c.Broker))
	switch c.Kind {
	case LivenessNoLeader:
		return "no live leader"
	case LivenessNotInISR:
		return "replica on " + b + " not back in the ISR"
	case LivenessProbeFailed:
		return "no acks=all probe produce succeeded"
	case LivenessBrokerDown:
		return b + " is not running"
	case LivenessGroupUnstable:
		return "group " + c.Group + " is not Stable"
	case LivenessGroupLagging:
		return "group " + c.Group + " has not consumed up to the HW"
	}
	return c.Kind
}
