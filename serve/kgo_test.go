package serve

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKgoThroughALeaderCrash: franz-go's client, unmodified, against the
// served cluster. Two consumers of one group share t's partitions; an
// idempotent acks=all producer writes through a crash of t/0's leader;
// the consumers read everything; one leaves and the group rebalances its
// partitions to the other. At stop the checkers find nothing acknowledged
// lost and the group's assignments sound, and the tape replays to the
// same trace.
func TestKgoThroughALeaderCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("real client over TCP: skipped with -short")
	}
	var tape strings.Builder
	s := startServer(t, 5, &tape, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	prod, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.DefaultProduceTopic("t"), kgo.ClientID("app"),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			r := &kgo.Record{Value: []byte(fmt.Sprintf("v%d", i))}
			if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce v%d: %v", i, err)
			}
		}
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	assigned := map[string]map[int32]bool{} // each consumer's partitions of t now
	consumer := func(name string) *kgo.Client {
		assigned[name] = map[int32]bool{}
		drop := func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			mu.Lock()
			for _, p := range m["t"] {
				delete(assigned[name], p)
			}
			mu.Unlock()
		}
		c, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"), kgo.ClientID(name),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
				mu.Lock()
				for _, p := range m["t"] {
					assigned[name][p] = true
				}
				mu.Unlock()
			}),
			kgo.OnPartitionsRevoked(drop), kgo.OnPartitionsLost(drop))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for ctx.Err() == nil {
				fs := c.PollFetches(ctx)
				if fs.IsClientClosed() {
					return
				}
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					seen[string(r.Value)] = true
					mu.Unlock()
				})
			}
		}()
		return c
	}
	// The group first: __consumer_offsets is created on the first
	// FindCoordinator, and not while a broker is down (Kafka refuses to
	// create it with fewer live brokers than offsets.topic.replication.factor).
	c1, c2 := consumer("c1"), consumer("c2")
	waitFor(t, ctx, "the group to assign t's 3 partitions", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(assigned["c1"])+len(assigned["c2"]) == 3
	})
	produce(0, 60)
	if a := s.Command("crash-leader t/0"); !strings.HasPrefix(a, "ok") {
		t.Fatalf("crash-leader: %s", a)
	}
	produce(60, 120)

	waitFor(t, ctx, "both consumers to read all 120 records", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 120
	})
	c2.Close() // leaves the group
	waitFor(t, ctx, "the group to rebalance all 3 partitions to c1", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(assigned["c1"]) == 3
	})
	c1.Close()
	prod.Close()

	res := stopAndWait(t, s)
	if acked := ackedSends(res, "app"); acked < 120 {
		t.Fatalf("the history holds %d acknowledged sends of app, want at least 120", acked)
	}
	judged := map[string]checkers.Verdict{}
	for _, v := range res.Verdicts {
		judged[v.Checker] = v
		if v.Checker == "acked-loss" && v.Result != checkers.ResultOK {
			t.Fatalf("acked-loss: %v", v)
		}
		if v.ContractBroken() {
			t.Errorf("%s: %v", v.Checker, v)
		}
	}
	// The group's assignments, as the SyncGroup answers gave them, are
	// judged; what the consumers' application processed is not.
	if g := judged[checkers.NameGroup]; g.Result != checkers.ResultOK || g.NotJudged || len(g.Notes) == 0 || strings.HasPrefix(g.Notes[0], "judged 0 ") {
		t.Errorf("group: %v, want ok over the group's assignments", g)
	}
	if c := judged[checkers.NameConsumer]; !c.NotJudged {
		t.Errorf("consumer: %v, want not judged", c)
	}
	replaysTo(t, tape.String(), res, 1)
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
