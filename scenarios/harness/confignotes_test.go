package harness

import (
	"slices"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/scenarios"
)

// notesScript declares a producer with a property kafkasim does not model
// and sends with acks from a script variable; its variant v41 runs Kafka
// 4.1, which has no ZooKeeper, under a script set line written for every
// release.
const notesScript = `
brokers 2
topic t partitions=1 rf=2
set zookeeper.session.timeout.ms=6000
variant v39 $acks=all
variant v41 $acks=all inter.broker.protocol.version=4.1
run 3s
producer p1 buffer.memory=1048576
produce c1 t/0 m0 acks=$acks
run 1s
`

func notesRun(t *testing.T, variant string, set map[string]string) *Result {
	t.Helper()
	s, err := scenarios.Parse("notes.txt", "notes", strings.NewReader(notesScript))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, variant, Options{Seed: 1, Set: set})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestAStepThatFixesAPropertyIsNamed: -set acks=1 does not reach a send
// whose step says acks=$acks; the run names the step and the variable.
func TestAStepThatFixesAPropertyIsNamed(t *testing.T) {
	res := notesRun(t, "v39", map[string]string{"acks": "1"})
	want := "acks=1 from -set is overridden by notes.txt:9 (produce acks=$acks); set $acks=1"
	if !slices.Contains(res.ConfigNotes, want) {
		t.Errorf("notes %q lack %q", res.ConfigNotes, want)
	}
	if res := notesRun(t, "v39", map[string]string{"acks": "all"}); len(res.ConfigNotes) != 0 {
		t.Errorf("-set acks=all, as the step sends: notes %q, want none", res.ConfigNotes)
	}
	if res := notesRun(t, "v39", map[string]string{"acks": "1", "$acks": "1"}); len(res.ConfigNotes) != 0 {
		t.Errorf("with $acks=1 too: notes %q, want none", res.ConfigNotes)
	}
}

// TestDeclaredClientsListTheirUnmodelledProperties: a producer's own
// buffer.memory is accepted, not modelled, and listed with its producer.
func TestDeclaredClientsListTheirUnmodelledProperties(t *testing.T) {
	res := notesRun(t, "v39", nil)
	if !slices.Contains(res.NotModelled, "producer p1: buffer.memory=1048576") {
		t.Errorf("not modelled %q lacks producer p1's buffer.memory", res.NotModelled)
	}
	res = notesRun(t, "v39", map[string]string{"producer.buffer.memory": "2097152"})
	if !slices.Contains(res.NotModelled, "producer.buffer.memory=2097152") {
		t.Errorf("not modelled %q lacks the run's producer.buffer.memory", res.NotModelled)
	}
}

// TestTheScenariosOwnPropertyOfOtherReleasesIsIgnored: under 4.1 the
// script's zookeeper.session.timeout.ms is ignored with a note, while the
// same property from -set is refused, naming the releases that have it.
func TestTheScenariosOwnPropertyOfOtherReleasesIsIgnored(t *testing.T) {
	res := notesRun(t, "v41", nil)
	found := false
	for _, n := range res.ConfigNotes {
		found = found || strings.Contains(n, "zookeeper.session.timeout.ms: not a broker property of Kafka 4.1") && strings.Contains(n, "ignored")
	}
	if !found {
		t.Errorf("notes %q do not say zookeeper.session.timeout.ms is ignored under 4.1", res.ConfigNotes)
	}
	if notes := notesRun(t, "v39", nil).ConfigNotes; len(notes) != 0 {
		t.Errorf("under 3.9: notes %q, want none", notes)
	}
	s, err := scenarios.Parse("notes.txt", "notes", strings.NewReader(notesScript))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(s, "v41", Options{Seed: 1, Set: map[string]string{"zookeeper.connect": "localhost:2181"}})
	if err == nil || !strings.Contains(err.Error(), "zookeeper.connect: not a broker property of Kafka 4.1 (the releases that have it: 0.9.0 to 3.9)") {
		t.Errorf("-set zookeeper.connect under 4.1: %v", err)
	}
}

// TestConsumerPropertiesWithoutConsumers: a consumer.properties' group.id
// configures nothing in a script without consumers, and says so, rather
// than refusing the run over __consumer_offsets' replication factor.
func TestConsumerPropertiesWithoutConsumers(t *testing.T) {
	res := notesRun(t, "v39", map[string]string{"consumer.group.id": "g"})
	if !slices.Contains(res.ConfigNotes, "the consumer properties group.id=g configure no consumer: the scenario declares none") {
		t.Errorf("notes %q", res.ConfigNotes)
	}
}

// TestTopicLineConfigsFollowTheRelease: a topic line's unmodelled topic
// config is listed as not modelled under a release that has it, and
// refused at its line under one that does not (max.compaction.lag.ms came
// with 2.3, KIP-354).
func TestTopicLineConfigsFollowTheRelease(t *testing.T) {
	const script = "brokers 3\ntopic t rf=3 config.max.compaction.lag.ms=60000 min.insync.replicas=2\nvariant v22 inter.broker.protocol.version=2.2\nvariant v39 inter.broker.protocol.version=3.9\nrun 2s\n"
	s, err := scenarios.Parse("tl.txt", "tl", strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, "v39", Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.NotModelled, "topic t: max.compaction.lag.ms=60000") || !slices.Contains(res.Config, "topic t: min.insync.replicas=2") {
		t.Errorf("not modelled %q, config %q", res.NotModelled, res.Config)
	}
	_, err = Run(s, "v22", Options{Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "tl.txt:2: topic t: config: max.compaction.lag.ms: not a topic property of Kafka 2.2 (the releases that have it: 2.3 to 4.1)") {
		t.Errorf("under 2.2: %v", err)
	}
}

// TestUnworkableNotes: Kafka's quickstart files (one voter, internal
// topics with one replica) under a scenario's min.insync.replicas=2 are
// each noted; three voters and matching min ISRs are not.
func TestUnworkableNotes(t *testing.T) {
	s, err := scenarios.Parse("u.txt", "u", strings.NewReader("brokers 3\ntopic t rf=3\nrun 1s\nconsumer c1 group.id=g topic=t\nrun 1s\n"))
	if err != nil {
		t.Fatal(err)
	}
	notes := func(props map[string]string) []string {
		t.Helper()
		cfg, err := config.Parse(props)
		if err != nil {
			t.Fatal(err)
		}
		return unworkableNotes(s, cfg.Broker)
	}
	quickstart := map[string]string{"process.roles": "broker,controller", "controller.quorum.voters": "1@localhost:9093", "min.insync.replicas": "2",
		"offsets.topic.replication.factor": "1", "kafkasim.transactions": "true", "transaction.state.log.replication.factor": "1", "inter.broker.protocol.version": "3.9"}
	got := notes(quickstart)
	for i, prefix := range []string{"offsets.topic.replication.factor=1 is below min.insync.replicas=2", "transaction.state.log.replication.factor=1 is below transaction.state.log.min.isr=2",
		"controller.quorum.voters names one voter, node 1 (b1)"} {
		if i >= len(got) || !strings.HasPrefix(got[i], prefix) {
			t.Errorf("note %d: %q, want %q...", i, got, prefix)
		}
	}
	quickstart["controller.quorum.voters"] = "0@a:9093,1@b:9093,2@c:9093"
	quickstart["offsets.topic.replication.factor"], quickstart["transaction.state.log.replication.factor"] = "3", "2"
	if got := notes(quickstart); len(got) != 0 {
		t.Errorf("three voters, RFs at the min ISRs: %q, want none", got)
	}
}
