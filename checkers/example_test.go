package checkers_test

import (
	"fmt"
	"time"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

// Example replays KIP-101 scenario 1: m2 is acknowledged under acks=all at
// offset 1, then the new leader b0 holds only [m1].
func Example() {
	ms := sim.Time(sim.Millisecond)
	rec := checkers.NewRecorder()
	rec.Producer(checkers.Producer{Process: "p1", MaxInFlight: 1, Retries: 3})
	m1 := rec.Send(0, "p1", "t", 0, "", "m1", -1)
	rec.Acked(m1, 2*ms, 0)
	m2 := rec.Send(3*ms, "p1", "t", 0, "", "m2", -1)
	rec.Acked(m2, 5*ms, 1)
	h := rec.Finish(10 * ms)

	final := checkers.Final{Partitions: []checkers.PartitionFinal{{
		Topic: "t", Partition: 0, Leader: 0, LeaderEpoch: 1,
		Replicas: []checkers.Replica{{
			ReplicaState: checkers.ReplicaState{Broker: 0, Alive: true, Role: checkers.Leader, LeaderEpoch: 1, LEO: 1, HW: 1},
			Log:          []checkers.Entry{{Offset: 0, LeaderEpoch: 0, Value: "m1"}},
		}},
	}}, Facts: checkers.Facts{ReplicationFactor: 2}}

	for _, v := range checkers.CheckAll(h, final, nil, checkers.Options{LinearizabilityBudget: time.Second}) {
		fmt.Println(v)
	}
	// Output:
	// linearizability: ok
	// acked-loss: violation (1 anomaly, 1 listed outside the contract)
	//   note: 2 acknowledged sends checked, 1 not in the final committed log
	//   lost t-0 m2 offsets=[1] times=[3.000ms 5.000ms]: acknowledged (acks=-1) at offset 1 at 5.000ms; judged on b0 leader e1 LEO=1 HW=1 ISR=[]: the committed log ends at 1; not permitted: no unclean election, no acks=1 leader failure, the ISR never all down at once with one member losing unflushed data, and no replica elected after losing unflushed data while in the ISR [contract broken]
	// divergence: ok
	//   note: the cluster did not heal: convergence not required
	// invariants: unknown
	//   note: no monitor observed the run
	// duplicates: ok
	// ordering: ok
	// liveness: unknown
	//   note: no liveness phase was recorded (a history saved before liveness, or a run without an end phase)
}
