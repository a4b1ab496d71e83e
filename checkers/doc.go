// Package checkers records client histories (Jepsen style: invoke, then
// ok, fail or info) and judges a simulated run with six checkers, each with
// a stable name and a three-valued Verdict (ok, violation, unknown) carrying
// evidence (record, offsets, replicas, trace steps, times) and, per anomaly,
// whether Kafka's contract permits it:
//
//   - linearizability: porcupine over model's partition-log model, within a
//     wall-time budget; past it: unknown, never ok (Linearizability);
//   - acked-loss: every acknowledged send is in the final committed log at
//     its offset (AckedLoss);
//   - divergence: replicas agree below their HWs, and converge once the
//     cluster healed (Divergence);
//   - invariants: HW, LEO and epoch invariants on snapshots taken after every
//     event (Monitor);
//   - duplicates: no value at two offsets (Duplicates);
//   - ordering: a producer's acknowledged offsets follow its send order
//     (Ordering).
//
// The scenario runner fills three things: a History (through a Recorder),
// a Final (the cluster's end state and the run's Facts), and a Monitor
// (Observe after every event). CheckAll runs everything.
//
// It never imports broker (the judge must not share code with the judged);
// it uses model for the sequential specification and sim for virtual time.
//
// A short example, the KIP-101 scenario 1 loss:
//
//	rec := checkers.NewRecorder()
//	m1 := rec.Send(0, "p1", "t", 0, "", "m1", -1)
//	rec.Acked(m1, 2*ms, 0)
//	m2 := rec.Send(3*ms, "p1", "t", 0, "", "m2", -1)
//	rec.Acked(m2, 5*ms, 1)
//	h := rec.Finish(10 * ms)
//	final := checkers.Final{Partitions: []checkers.PartitionFinal{{
//		Topic: "t", Partition: 0, Leader: 1, LeaderEpoch: 1,
//		Replicas: []checkers.Replica{{
//			ReplicaState: checkers.ReplicaState{Broker: 1, Alive: true, Role: checkers.Leader, LeaderEpoch: 1, LEO: 1, HW: 1},
//			Log:          []checkers.Entry{{Offset: 0, LeaderEpoch: 0, Value: "m1"}},
//		}},
//	}}}
//	v := checkers.AckedLoss(h, final) // violation: m2 lost, not permitted
package checkers
