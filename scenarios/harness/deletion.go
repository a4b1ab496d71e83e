package harness

// This file reads the deletions clients asked for from the trace, for
// the checkers (checkers/deletion.go: deleting is not losing): a topic
// deleted by DeleteTopics (the ZooKeeper controller's
// controller-delete-topic record, the KRaft controller's topic-deleted
// record once its RemoveTopicRecord committed) sets its partitions'
// PartitionFinal.DeletedAt; a DeleteRecords (the leader's delete-records
// record) their DeletedBelow.
//
// The end phase owes nothing to a deleted topic: its partitions are
// neither probed nor read, and their conditions are not liveness's (a
// partition that no longer exists has no leader to wait for).

import (
	"strconv"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

// deletionKinds are the trace kinds markDeleted reads (kept by every run).
var deletionKinds = []string{"controller-delete-topic", "topic-deleted", "delete-records"}

// markDeleted sets the deletion facts of f's partitions from recs.
func markDeleted(f *checkers.Final, recs []sim.Record) {
	deletedAt := map[string]sim.Time{}
	below := map[string]int64{}
	for _, r := range recs {
		switch r.Kind {
		case "controller-delete-topic", "topic-deleted":
			if t, ok := r.Get("topic"); ok {
				deletedAt[t] = r.Time
			}
		case "delete-records":
			p, _ := r.Get("partition")
			s, _ := r.Get("log-start")
			if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > below[p] {
				below[p] = n
			}
		}
	}
	if len(deletedAt) == 0 && len(below) == 0 {
		return
	}
	for i := range f.Partitions {
		p := &f.Partitions[i]
		p.DeletedAt = deletedAt[p.Topic]
		p.DeletedBelow = below[p.Topic+"-"+strconv.Itoa(int(p.Partition))]
	}
}

// scanDeletions counts the deletions of each topic in the trace so far
// (Runner.deletions).
func (r *Runner) scanDeletions() {
	recs := r.World.Trace().Records()
	for ; r.deletedScan < len(recs); r.deletedScan++ {
		switch rec := recs[r.deletedScan]; rec.Kind {
		case "controller-delete-topic", "topic-deleted":
			if t, ok := rec.Get("topic"); ok {
				if r.deletions == nil {
					r.deletions = map[string]int{}
				}
				r.deletions[t]++
			}
		}
	}
}

// topicDeleted reports whether DeleteTopics deleted tp's topic during the
// run (and it was not created again since: the controller has it), or tp
// is a partition the topic no longer has since it was created again with
// fewer.
func (r *Runner) topicDeleted(tp storage.TopicPartition) bool {
	if r.Observer.gone[tp] {
		return true
	}
	r.scanDeletions()
	if r.deletions[tp.Topic] == 0 {
		return false
	}
	_, _, why := r.leaderOf(storage.TopicPartition{Topic: tp.Topic, Partition: 0})
	return why != ""
}

// ForgetDeleted removes from the recorder the operations that the
// deletions in the trace so far already set aside (checkers.Recorder.Forget):
// those on a partition of a deleted topic that the run observes, invoked
// before the topic's last deletion and completed; and the invariants
// monitor's watch of its partitions, whose ever-committed records the
// end would not look for (checkers.deletedByRequest). The end of the run
// would set each of them aside (markDeleted takes a topic's last deletion,
// never an earlier one), and counts them in its note all the same
// (checkers.SetAsideDeletedAfter), so the verdicts do not change; a
// served run that goes on for hours, whose clients create and delete
// topics, keeps only what its verdicts will read. Call it while clients
// are served only: the end phase's operations are never on a deleted
// topic.
func (r *Runner) ForgetDeleted() int {
	recs := r.World.Trace().Records()
	fresh := false
	for ; r.forgetScan < len(recs); r.forgetScan++ {
		switch rec := recs[r.forgetScan]; rec.Kind {
		case "controller-delete-topic", "topic-deleted":
			if t, ok := rec.Get("topic"); ok {
				if r.deletedAt == nil {
					r.deletedAt = map[string]sim.Time{}
				}
				r.deletedAt[t] = rec.Time
				fresh = true
				r.Observer.forgetMonitored(t)
			}
		}
	}
	if !fresh {
		return 0
	}
	return r.Recorder.Forget(func(op *checkers.Op) bool {
		at, ok := r.deletedAt[op.Topic]
		if !ok || op.Invoke >= at {
			return false
		}
		_, observed := r.Observer.Replicas[storage.TopicPartition{Topic: op.Topic, Partition: op.Partition}]
		return observed
	})
}
