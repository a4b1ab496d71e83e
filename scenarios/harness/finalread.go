package harness

// This file is the end phase's final reads (Jepsen's final polls): after
// the liveness phase, a reader node ("final-reader") runs Kafka's consumer
// (package client) with Assign of every partition of the scenario's
// topics, no group and auto.offset.reset=earliest, and reads each from its
// log start to the HW the fetch responses report, through the real
// ListOffsets and Fetch path. The history records, per partition, one Poll
// (invoked when the reader starts, its FetchOffset the log start the
// consumer found, completed OK with every record read once the position
// reached the HW) and one HW read (the HW of the last fetch response), so
// the client-view checkers see what survived: a lost acknowledged record is
// missing from a complete read, or sits under another value.
//
// The reads are bounded: a partition not read up to its HW within
// finalReadTimeout of simulated time is completed as Info (the records it
// did see kept as evidence), never OK.
//
// What it simplifies: the run's consumer configuration is used (consumer.*
// properties apply), with group.id, auto-commit and client.rack cleared;
// __consumer_offsets is not read.

import (
	"fmt"

	"github.com/kafkasim/kafkasim/broker/client"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

const (
	finalReaderName  = "final-reader"
	finalReadTimeout = 30 * sim.Second
	finalReadTick    = 20 * sim.Millisecond
	timerFinalRead   = "final-read"
)

// finalRead is the read of one partition.
type finalRead struct {
	tp       client.TopicPartition
	poll, hw checkers.OpID
	from     int64 // the log start the consumer found; -1 until known
	records  []checkers.Record
	done     bool
}

// finalReader is the reader node.
type finalReader struct {
	cfg       config.Consumer
	bootstrap []int32
	rec       *checkers.Recorder
	deadline  sim.Time
	reads     []*finalRead
	open      int
	c         *client.Consumer
}

func (f *finalReader) Start(ctx *sim.Context) {
	c, err := client.NewConsumer(f.cfg, f.bootstrap)
	if err != nil {
		panic(err) // NB: the run's consumer configuration was validated by config.Parse
	}
	f.c = c
	c.Start(ctx)
	var tps []client.TopicPartition
	for _, rd := range f.reads {
		tps = append(tps, rd.tp)
		rd.poll = f.rec.Poll(ctx.Now(), finalReaderName, rd.tp.Topic, rd.tp.Partition, -1)
		rd.hw = f.rec.ReadHW(ctx.Now(), finalReaderName, rd.tp.Topic, rd.tp.Partition)
	}
	if err := c.Assign(ctx, tps); err != nil {
		panic(err)
	}
	f.open = len(f.reads)
	ctx.SetTimer(finalReadTick, timerFinalRead)
}

func (f *finalReader) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	f.c.HandleMessage(ctx, from, m)
}

// Disconnected implements sim.Disconnectable.
func (f *finalReader) Disconnected(ctx *sim.Context, peer sim.NodeID) {
	f.c.HandleDisconnect(ctx, peer)
}

func (f *finalReader) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	if f.c.HandleTimer(ctx, id, name) || name != timerFinalRead {
		return
	}
	now := ctx.Now()
	// The position is read before Poll hands out records: the first one
	// known is where the read starts (the log start).
	for _, rd := range f.reads {
		if pos, ok := f.c.Position(rd.tp); ok && rd.from < 0 && !rd.done {
			rd.from = pos
			f.rec.SetFetchOffset(rd.poll, pos)
		}
	}
	recs, _ := f.c.Poll(ctx)
	for _, cr := range recs {
		for _, rd := range f.reads {
			if rd.tp.Topic == cr.Topic && rd.tp.Partition == cr.Partition && !rd.done {
				rd.records = append(rd.records, fetchedRecord(cr, f.cfg.IsolationLevel == config.ReadCommitted))
			}
		}
	}
	for _, rd := range f.reads {
		if rd.done {
			continue
		}
		pos, havePos := f.c.Position(rd.tp)
		hw, haveHW := f.c.HighWatermark(rd.tp)
		switch {
		case havePos && haveHW && rd.from >= 0 && pos >= hw:
			f.rec.Polled(rd.poll, now, rd.records)
			f.rec.HW(rd.hw, now, hw)
			ctx.Log("final-read", sim.S("partition", rd.tp.String()), sim.I("from", rd.from), sim.I("hw", hw), sim.I("records", int64(len(rd.records))), sim.S("outcome", "ok"))
		case now >= f.deadline:
			why := "final read did not reach the HW within " + finalReadTimeout.String()
			f.rec.PolledInfo(rd.poll, now, rd.records, why)
			f.rec.Info(rd.hw, now, why)
			ctx.Log("final-read", sim.S("partition", rd.tp.String()), sim.I("from", rd.from), sim.I("hw", hw), sim.I("records", int64(len(rd.records))), sim.S("outcome", "info"))
		default:
			continue
		}
		rd.done = true
		f.open--
	}
	if f.open > 0 {
		ctx.SetTimer(finalReadTick, timerFinalRead)
	} else {
		f.c.Close(ctx)
	}
}

// finalReads runs the final reads to their end (every partition read, or
// the deadline).
func (r *Runner) finalReads() error {
	w := r.World
	if err := r.endMark(sim.S("phase", "final-read")); err != nil {
		return err
	}
	cfg := r.Cluster.Spec.Config.Consumer
	cfg.GroupID, cfg.ClientID, cfg.ClientRack = "", finalReaderName, ""
	cfg.Mutants = 0 // the checkers' reader is never mutated
	cfg.AutoOffsetReset, cfg.EnableAutoCommit = config.ResetEarliest, false
	f := &finalReader{cfg: cfg, rec: r.Recorder, deadline: w.Now().Add(finalReadTimeout)}
	for i := range r.Cluster.Brokers {
		f.bootstrap = append(f.bootstrap, int32(i))
	}
	for _, tp := range r.Observer.Partitions {
		if tp.Topic == coordinator.OffsetsTopic || r.topicDeleted(tp) {
			continue
		}
		f.reads = append(f.reads, &finalRead{tp: client.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}, from: -1})
	}
	id, err := w.AddNode(finalReaderName, func() sim.Node { return f }, sim.NodeOptions{})
	if err != nil {
		return err
	}
	if err := w.Inject(sim.Start{Node: id}); err != nil {
		return err
	}
	for f.open > 0 {
		if w.Now() > f.deadline.Add(sim.Second) {
			return fmt.Errorf("the final reader stopped before its deadline %v", f.deadline)
		}
		if err := r.Advance(w.Now().Add(finalReadTick)); err != nil {
			return err
		}
	}
	return nil
}
