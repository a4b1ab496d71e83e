package serve

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// TestTwoProducerSessionsSendingEqualValues: issue 28's two kcat runs. Two
// idempotent producer sessions (two clients, two InitProducerId answers)
// send the same 20 values to one partition: 40 records, no duplicate, and
// the run exits 0. It used to report 20 "duplicate ... not permitted
// (KIP-98)" by value, and exit 1.
func TestTwoProducerSessionsSendingEqualValues(t *testing.T) {
	if testing.Short() {
		t.Skip("real client over TCP: skipped with -short")
	}
	s := startServer(t, 5, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for run := 0; run < 2; run++ {
		cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.DefaultProduceTopic("t"), kgo.ClientID("rdkafka"),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 20; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				t.Fatalf("run %d: produce %d: %v", run, i, err)
			}
		}
		cl.Close()
	}
	res := stopAndWait(t, s)
	pids := map[int64]bool{}
	for _, op := range res.History.Ops {
		if op.Kind == checkers.Send && op.Outcome == checkers.OK {
			pids[op.ProducerID] = true
		}
	}
	if len(pids) != 2 {
		t.Errorf("producer ids %v: want two sessions with their own ids", pids)
	}
	for _, v := range res.Verdicts {
		if v.Checker == checkers.NameDuplicates && v.Result != checkers.ResultOK {
			t.Errorf("equal values of two sessions judged as duplicates:\n%s", v)
		}
	}
	if code := res.Exit(); code != harness.ExitOK {
		t.Errorf("exit %d, want 0", code)
	}
}
