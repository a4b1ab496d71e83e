package harness

// This file executes 'alter-config topic NAME property=value ...': a
// change of a topic's configs during the run, as kafka-configs.sh --alter
// makes it (broker/cluster/topic_config.go: every node gets it at once,
// and every node started later; each running broker traces a
// topic-config record). A change that allows unclean election
// counts for the run's facts as the topic's static setting does.

import (
	"fmt"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/sim"
)

// alterConfig executes an alter-config step.
func (r *Runner) alterConfig(st scenarios.Step) error {
	if len(st.Args) != 2 || st.Args[0] != "topic" {
		return fmt.Errorf("alter-config: want 'alter-config topic NAME property=value ...'")
	}
	topic := st.Args[1]
	t, err := r.Cluster.AlterTopicConfig(topic, st.KV)
	if err != nil {
		return err
	}
	if t.UncleanLeaderElectionEnable {
		r.Observer.Facts.UncleanElectionEnabled = true
	}
	if len(r.s.Topics) > 0 && r.s.Topics[0].Name == topic {
		r.Observer.Facts.MinInsyncReplicas = t.MinInsyncReplicas
	}
	return nil
}

// markCompacted sets PartitionFinal.Compacted for the partitions whose log
// cleaner removed records (the brokers' log-cleaned trace records).
func markCompacted(f *checkers.Final, recs []sim.Record) {
	cleaned := map[string]bool{}
	for _, r := range recs {
		if r.Kind == "log-cleaned" {
			p, _ := r.Get("partition")
			cleaned[p] = true
		}
	}
	for i := range f.Partitions {
		p := &f.Partitions[i]
		if cleaned[storage.TopicPartition{Topic: p.Topic, Partition: p.Partition}.String()] {
			p.Compacted = true
		}
	}
}
