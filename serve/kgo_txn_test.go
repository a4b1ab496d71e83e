package serve

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKgoTransactions: franz-go's transactional producer against the
// served cluster. One transaction is committed and one aborted; a
// read_committed consumer sees the committed records only.
func TestKgoTransactions(t *testing.T) {
	if testing.Short() {
		t.Skip("real client over TCP: skipped with -short")
	}
	s := startServer(t, 5, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.DefaultProduceTopic("t"), kgo.TransactionalID("tx-app"),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	txn := func(prefix string, commit kgo.TransactionEndTry) {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		for i := 0; i < 6; i++ {
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("%s%d", prefix, i))}).FirstErr(); err != nil {
				t.Fatalf("produce %s%d: %v", prefix, i, err)
			}
		}
		if err := prod.EndTransaction(ctx, commit); err != nil {
			t.Fatalf("end transaction (%v): %v", commit, err)
		}
	}
	txn("c", kgo.TryCommit)
	txn("a", kgo.TryAbort)
	txn("d", kgo.TryCommit)

	cons, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.ConsumeTopics("t"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []string
	for len(got) < 12 && ctx.Err() == nil {
		cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	// Anything aborted that slipped through would show up in a second poll.
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	cons.PollFetches(short).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	cancelShort()
	joined := strings.Join(got, " ")
	if len(got) != 12 || strings.Contains(joined, "a") {
		t.Fatalf("read_committed saw %v, want c0..c5 and d0..d5 only", got)
	}
	cons.Close()
	prod.Close()
	res := stopAndWait(t, s)
	for _, v := range res.Verdicts {
		t.Logf("%s: %s", v.Checker, v.Result)
		if v.ContractBroken() {
			t.Errorf("%s: %v", v.Checker, v)
		}
	}
}
