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

// topicDeleted reports whether DeleteTopics deleted topic during the run
// (and it was not created again since: the controller has it).
func (r *Runner) topicDeleted(topic string) bool {
	recs := r.World.Trace().Records()
	for ; r.deletedScan < len(recs); r.deletedScan++ {
		switch rec := recs[r.deletedScan]; rec.Kind {
		case "controller-delete-topic", "topic-deleted":
			if t, ok := rec.Get("topic"); ok {
				if r.deleted == nil {
					r.deleted = map[string]bool{}
				}
				r.deleted[t] = true
			}
		}
	}
	if !r.deleted[topic] {
		return false
	}
	_, _, why := r.leaderOf(storage.TopicPartition{Topic: topic, Partition: 0})
	return why != ""
}
