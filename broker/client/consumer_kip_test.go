package client

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

// readerApp assigns itself t-0 (no group) and polls every 100ms.
type readerApp struct {
	cfg       config.Consumer
	bootstrap []int32
	maxAge    sim.Duration
	c         *Consumer
	got       []ConsumerRecord
	errs      []error
	truncs    []string
}

func (a *readerApp) Start(ctx *sim.Context) {
	var err error
	if a.c, err = NewConsumer(a.cfg, a.bootstrap); err != nil {
		panic(err)
	}
	if a.maxAge > 0 {
		a.c.MetadataMaxAge = a.maxAge
	}
	a.c.OnTruncation = func(_ *sim.Context, tp TopicPartition, position, divergent int64) {
		a.truncs = append(a.truncs, fmt.Sprintf("%v %d->%d", tp, position, divergent))
	}
	a.c.Start(ctx)
	if err := a.c.Assign(ctx, []TopicPartition{{Topic: "t", Partition: 0}}); err != nil {
		panic(err)
	}
	ctx.SetTimer(100*sim.Millisecond, "app-poll")
}

func (a *readerApp) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	a.c.HandleMessage(ctx, from, m)
}

func (a *readerApp) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	if a.c.HandleTimer(ctx, id, name) {
		return
	}
	recs, err := a.c.Poll(ctx)
	if err != nil {
		a.errs = append(a.errs, err)
	}
	a.got = append(a.got, recs...)
	ctx.SetTimer(100*sim.Millisecond, "app-poll")
}

func addReader(t *testing.T, w *sim.World, name string, bootstrap []int32, maxAge sim.Duration, props map[string]string) (*readerApp, sim.NodeID) {
	t.Helper()
	all := map[string]string{"client.id": name, "auto.offset.reset": "earliest", "request.timeout.ms": "2000"}
	for k, v := range props {
		all[k] = v
	}
	cfg, err := config.ParseConsumer(all)
	must(t, err)
	a := &readerApp{cfg: cfg, bootstrap: bootstrap, maxAge: maxAge}
	id, err := w.AddNode(name, func() sim.Node { return a }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: id}))
	return a, id
}

func addProducer(t *testing.T, w *sim.World, name string, bootstrap []int32, acks config.Acks) (*app, sim.NodeID) {
	t.Helper()
	cfg := config.DefaultProducer()
	cfg.EnableIdempotence = false
	cfg.Acks = acks
	cfg.RequestTimeout = 2 * sim.Second
	a := &app{cfg: cfg, bootstrap: bootstrap, results: map[string]result{}}
	id, err := w.AddNode(name, func() sim.Node { return a }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: id}))
	return a, id
}

// fetchesTo counts the Fetch requests node `from` sent, by destination.
func fetchesTo(w *sim.World, from string) map[string]int {
	out := map[string]int{}
	for _, r := range w.Trace().Records() {
		if r.Kind != "send" || r.Name != from {
			continue
		}
		if m, _ := r.Get("msg"); m == "Fetch" || m == "FetchRequest" {
			to, _ := r.Get("to")
			out[to]++
		}
	}
	return out
}

// TestConsumerFetchFromFollower (KIP-392): a consumer in rack r1 reads t-0
// (leader b0 in r0, followers b1 in r1 and b2 in r2). With the rack-aware
// selector its fetches go to b1 (the leader redirects it again each time
// metadata.max.age.ms expires the preference), survive b1's crash (back to
// the leader), and every record is read exactly once, in order; without
// the selector every fetch goes to the leader.
func TestConsumerFetchFromFollower(t *testing.T) {
	for _, selector := range []bool{true, false} {
		props := map[string]string{"zookeeper.session.timeout.ms": "6000"}
		if selector {
			props["replica.selector.class"] = "RackAwareReplicaSelector"
		}
		bcfg, err := config.Parse(props)
		must(t, err)
		w, err := sim.New(sim.Config{Seed: 11, KeepTrace: true})
		must(t, err)
		c, err := cluster.Build(w, cluster.Spec{Brokers: 3, Racks: []string{"r0", "r1", "r2"}, Config: bcfg,
			Topics: []cluster.Topic{{Name: "t", Partitions: 1, ReplicationFactor: 3, Assignment: [][]int32{{0, 1, 2}}}}})
		must(t, err)
		run(t, w, 10*sim.Second)
		r, _ := addReader(t, w, "c1", []int32{0, 1, 2}, 3*sim.Second, map[string]string{"client.rack": "r1"})
		p, pid := addProducer(t, w, "p1", []int32{0, 1, 2}, config.AcksAll)
		const n = 300
		for i := range n {
			if i == 200 {
				must(t, w.Inject(sim.Crash{Node: c.Brokers[1]}))
			}
			send(t, w, pid, p, rec(0, fmt.Sprintf("v%04d", i)))
			run(t, w, 50*sim.Millisecond)
		}
		run(t, w, 30*sim.Second)
		log := leaderLog(t, c, storage.TopicPartition{Topic: "t", Partition: 0})
		for i := range n {
			v := fmt.Sprintf("v%04d", i)
			if r := p.results[v]; r.err != nil || log[r.md.Offset] != v {
				t.Fatalf("selector=%v: %s acknowledged at %d (%v), the log has %q there", selector, v, r.md.Offset, r.err, log[r.md.Offset])
			}
		}
		if len(r.got) != len(log) {
			t.Errorf("selector=%v: consumed %d records, the log has %d", selector, len(r.got), len(log))
		}
		for i, rec := range r.got {
			if rec.Offset != int64(i) || string(rec.Value) != log[int64(i)] {
				t.Fatalf("selector=%v: record %d is %d=%s, the log has %q", selector, i, rec.Offset, rec.Value, log[int64(i)])
			}
		}
		if len(r.errs) > 0 {
			t.Errorf("selector=%v: poll errors %v", selector, r.errs)
		}
		f := fetchesTo(w, "c1")
		redirects := len(traceKinds(w, "consumer-read-replica"))
		t.Logf("selector=%v: fetches %v, redirects %d", selector, f, redirects)
		if selector {
			if f["b1"] <= f["b0"] || f["b2"] != 0 {
				t.Errorf("fetches %v: want most to b1 (the consumer's rack), none to b2", f)
			}
			if redirects < 5 {
				t.Errorf("%d redirects: want one after each metadata.max.age.ms", redirects)
			}
			if len(traceKinds(w, "consumer-read-replica-cleared")) == 0 {
				t.Error("the preferred replica was never cleared (expiry, crash)")
			}
		} else if f["b1"] != 0 || f["b2"] != 0 || f["b0"] == 0 || redirects != 0 {
			t.Errorf("fetches %v, redirects %d: want every fetch on the leader b0", f, redirects)
		}
	}
}

// TestConsumerDetectsLogTruncation (KIP-320): t-0 on b0 (leader) and b1;
// b1 falls out of the ISR, b0 commits offsets 5..9 alone (acks=1,
// min.insync.replicas=1) and the consumer reads them; b0 dies, b1 is
// elected uncleanly with offsets 0..4 and takes ten new records at 5..14
// while the consumer is cut off. Then:
//   - with truncation detection and auto.offset.reset=earliest, the
//     consumer validates its position 10 after the leader change, learns
//     the log diverges at 5, and reads the new records from 5;
//   - with auto.offset.reset=none, Poll fails with ErrLogTruncation naming
//     position 10 and divergent offset 5;
//   - without detection (a pre-2.1 client), it fetches at 10 and silently
//     skips the new records at 5..9.
func TestConsumerDetectsLogTruncation(t *testing.T) {
	for _, tc := range []struct {
		name, reset string
		detect      bool
	}{{"detect-earliest", "earliest", true}, {"detect-latest", "latest", true}, {"detect-none", "none", true}, {"no-detection", "earliest", false}} {
		t.Run(tc.name, func(t *testing.T) {
			bcfg, err := config.Parse(map[string]string{"unclean.leader.election.enable": "true", "min.insync.replicas": "1",
				"replica.lag.time.max.ms": "2000", "zookeeper.session.timeout.ms": "6000"})
			must(t, err)
			w, err := sim.New(sim.Config{Seed: 5, KeepTrace: true})
			must(t, err)
			c, err := cluster.Build(w, cluster.Spec{Brokers: 2, Config: bcfg,
				Topics: []cluster.Topic{{Name: "t", Partitions: 1, ReplicationFactor: 2, Assignment: [][]int32{{0, 1}}}}})
			must(t, err)
			run(t, w, 10*sim.Second)
			p, pid := addProducer(t, w, "p1", []int32{0, 1}, config.AcksLeader)
			for i := range 5 {
				send(t, w, pid, p, rec(0, fmt.Sprintf("a%d", i)))
			}
			run(t, w, 2*sim.Second)
			props := map[string]string{"kafkasim.truncation.detection": fmt.Sprint(tc.detect)}
			if tc.reset == "none" {
				// auto.offset.reset=none needs a starting position: seek.
				props["auto.offset.reset"] = "none"
			}
			r, rid := addReader(t, w, "c1", []int32{0, 1}, 0, props)
			if tc.reset == "none" {
				run(t, w, sim.Millisecond)
				must(t, w.Act(rid, func(*sim.Context) { must(t, r.c.Seek(TopicPartition{Topic: "t", Partition: 0}, 0)) }))
			}
			must(t, w.Inject(sim.Cut{From: c.Brokers[0], To: c.Brokers[1], BothWays: true}))
			run(t, w, 5*sim.Second) // b1 leaves the ISR
			for i := 5; i < 10; i++ {
				send(t, w, pid, p, rec(0, fmt.Sprintf("a%d", i)))
			}
			run(t, w, 3*sim.Second)
			if len(r.got) != 10 {
				t.Fatalf("consumed %d records before the crash, want 10: %v", len(r.got), r.got)
			}
			if tc.reset == "latest" {
				r.c.cfg.AutoOffsetReset = config.ResetLatest // from here on: the truncation reset uses it
			}
			cid, _ := w.Lookup("c1")
			must(t, w.Inject(sim.Crash{Node: c.Brokers[0]}))
			must(t, w.Inject(sim.Heal{}))
			must(t, w.Inject(sim.Cut{From: cid, To: c.Brokers[1], BothWays: true}))
			run(t, w, 15*sim.Second) // b1 elected uncleanly
			for i := range 10 {
				send(t, w, pid, p, rec(0, fmt.Sprintf("n%d", i)))
			}
			run(t, w, 10*sim.Second)
			b1, _ := c.Broker(1).Partition(storage.TopicPartition{Topic: "t", Partition: 0})
			if b1.LogEndOffset() != 15 || b1.HighWatermark() != 15 {
				t.Fatalf("b1 LEO %d HW %d, want 15: the unclean election and new writes did not happen", b1.LogEndOffset(), b1.HighWatermark())
			}
			must(t, w.Inject(sim.Heal{}))
			run(t, w, 10*sim.Second)
			must(t, w.Inject(sim.Restart{Node: c.Brokers[0]})) // truncates to b1's log
			run(t, w, 10*sim.Second)
			var vals []string
			for _, rec := range r.got[10:] {
				vals = append(vals, fmt.Sprintf("%d=%s", rec.Offset, rec.Value))
			}
			all := []string{"5=n0", "6=n1", "7=n2", "8=n3", "9=n4", "10=n5", "11=n6", "12=n7", "13=n8", "14=n9"}
			switch {
			case tc.reset == "none":
				var lt *LogTruncationError
				if len(r.errs) != 1 || !errors.Is(r.errs[0], ErrLogTruncation) || !errors.As(r.errs[0], &lt) || lt.Position != 10 || lt.DivergentOffset != 5 {
					t.Errorf("poll errors %v: want one log truncation at position 10, divergent offset 5", r.errs)
				}
				if len(vals) != 0 {
					t.Errorf("consumed %v after the truncation; want nothing until a seek", vals)
				}
			case tc.detect:
				if !slices.Equal(vals, all) || len(r.errs) != 0 || !slices.Equal(r.truncs, []string{"t-0 10->5"}) {
					t.Errorf("after the truncation consumed %v (errors %v, truncations %v), want %v", vals, r.errs, r.truncs, all)
				}
			default:
				if !slices.Equal(vals, all[5:]) || len(r.truncs) != 0 || len(traceKinds(w, "consumer-validate")) != 0 {
					t.Errorf("without detection consumed %v (truncations %v), want the silent skip to %v", vals, r.truncs, all[5:])
				}
			}
		})
	}
}
