package harness

import (
	"slices"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
)

// unwritableScript is Kafka's shipped kraft/server.properties under a
// scenario with min.insync.replicas=2: __consumer_offsets gets one
// replica, so the group coordinator's acks=-1 writes all fail.
const unwritableScript = `
brokers 3
topic t partitions=1 rf=3
set min.insync.replicas=2 offsets.topic.num.partitions=2 group.initial.rebalance.delay.ms=0 kafkasim.liveness.timeout.ms=15000
variant rf1 offsets.topic.replication.factor=1
variant rf3 offsets.topic.replication.factor=3
run 2s
consumer c1 group.id=g topic=t session.timeout.ms=6000 heartbeat.interval.ms=1000
producer p1 acks=all
send p1 t/0 10 interval=100ms
run 5s
`

// TestOffsetsTopicBelowMinISR: with offsets.topic.replication.factor
// below min.insync.replicas the group never becomes Stable, as in Kafka;
// the run says so up front and the liveness checker permits it, naming
// why. With three replicas the same group is Stable and nothing is noted.
func TestOffsetsTopicBelowMinISR(t *testing.T) {
	s, err := scenarios.Parse("unwritable.txt", "unwritable", strings.NewReader(unwritableScript))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, "rf1", Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.ConfigNotes, func(n string) bool {
		return strings.HasPrefix(n, "offsets.topic.replication.factor=1 is below min.insync.replicas=2")
	}) {
		t.Errorf("notes %q lack the offsets topic's", res.ConfigNotes)
	}
	v := verdictOf(t, res, checkers.NameLiveness)
	if v.Result != checkers.ResultViolation || len(v.Anomalies) == 0 {
		t.Fatalf("liveness %s: want the group stuck", v)
	}
	for _, a := range v.Anomalies {
		if !a.Permitted || !strings.Contains(a.Description, "NOT_ENOUGH_REPLICAS") {
			t.Errorf("%s: want permitted, naming NOT_ENOUGH_REPLICAS", a)
		}
	}
	if res.Exit() != ExitOK {
		t.Errorf("exit %d, want %d: Kafka's contract permits it", res.Exit(), ExitOK)
	}

	res, err = Run(s, "rf3", Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v := verdictOf(t, res, checkers.NameLiveness); v.Result != checkers.ResultOK {
		t.Errorf("rf3: liveness %s, want ok", v)
	}
	if len(res.ConfigNotes) != 0 {
		t.Errorf("rf3: notes %q, want none", res.ConfigNotes)
	}
}

// TestTransactionStateBelowMinISR: transaction.state.log.replication.factor=1
// under the default transaction.state.log.min.isr=2, as a user's file
// might give it: no transaction commits, as in Kafka (InitProducerId times
// out); the run notes it and permits the missing outputs and the stuck
// pipeline group, naming the partition; nothing fails the run.
func TestTransactionStateBelowMinISR(t *testing.T) {
	s, err := scenarios.Load("txn-exactly-once")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, "tv1", Options{Seed: 1, Set: map[string]string{"transaction.state.log.replication.factor": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.ConfigNotes, func(n string) bool {
		return strings.HasPrefix(n, "transaction.state.log.replication.factor=1 is below transaction.state.log.min.isr=2")
	}) {
		t.Errorf("notes %q lack __transaction_state's", res.ConfigNotes)
	}
	for _, name := range []string{checkers.NameTransactions, checkers.NameLiveness} {
		v := verdictOf(t, res, name)
		if v.Result != checkers.ResultViolation {
			t.Fatalf("%s: %s, want the pipeline stuck", name, v)
		}
		for _, a := range v.Anomalies {
			if !a.Permitted || !strings.Contains(a.Description, "__transaction_state-") {
				t.Errorf("%s: %s: want permitted, naming __transaction_state", name, a)
			}
		}
	}
	if res.Exit() != ExitOK {
		t.Errorf("exit %d, want %d", res.Exit(), ExitOK)
	}
}
