package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/mutant"
)

// The tests below use facts of Kafka's releases that hold in any
// generation of the catalog: num.replica.fetchers is a broker property of
// every release since 0.8, zookeeper.connect left with 4.0 (KIP-500),
// max.compaction.lag.ms is a topic property (2.3+, KIP-354) and
// buffer.memory a producer one.

func TestUnmodelledPropertiesAreAcceptedAndListed(t *testing.T) {
	c, err := Parse(map[string]string{
		"num.replica.fetchers":         "4",
		"topic.max.compaction.lag.ms":  "60000",
		"producer.buffer.memory":       "2097152",
		"min.insync.replicas":          "2",
		PropInterBrokerProtocolVersion: "3.9",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"num.replica.fetchers=4", "producer.buffer.memory=2097152", "topic.max.compaction.lag.ms=60000"}
	if !slices.Equal(c.NotModelled, want) {
		t.Errorf("NotModelled = %q, want %q", c.NotModelled, want)
	}
	if c.Topic.MinInsyncReplicas != 2 {
		t.Errorf("a modelled property next to unmodelled ones: min.insync.replicas = %d, want 2", c.Topic.MinInsyncReplicas)
	}
}

func TestAPropertyOfOtherReleasesNamesThem(t *testing.T) {
	_, err := Parse(map[string]string{"zookeeper.connect": "localhost:2181", PropInterBrokerProtocolVersion: "4.1"})
	e, ok := err.(*Error)
	if !ok || e.Kind != NotInRelease {
		t.Fatalf("zookeeper.connect under 4.1: err = %v, want a NotInRelease error", err)
	}
	for _, w := range []string{"zookeeper.connect", "not a broker property of Kafka 4.1", "3.9"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if strings.Contains(e.Allowed, "4.0") || strings.Contains(e.Allowed, "4.1") {
		t.Errorf("error %q names a release without ZooKeeper as having zookeeper.connect", err)
	}
	if _, err := Parse(map[string]string{"zookeeper.connect": "localhost:2181", PropInterBrokerProtocolVersion: "3.9"}); err != nil {
		t.Errorf("zookeeper.connect under 3.9: %v, want accepted", err)
	}
}

func TestUnmodelledValuesAreValidated(t *testing.T) {
	_, err := Parse(map[string]string{"unclean.leader.election.enable": "true", "auto.create.topics.enable": "maybe"})
	if err == nil {
		// auto.create.topics.enable is modelled: its own validator speaks.
		t.Fatal("auto.create.topics.enable=maybe accepted")
	}
	_, err = Parse(map[string]string{"num.replica.fetchers": "four"})
	if e, ok := err.(*Error); !ok || e.Kind != BadValue || e.Property != "num.replica.fetchers" {
		t.Errorf("num.replica.fetchers=four: err = %v, want a BadValue naming it", err)
	}
}

func TestMisspeltPropertySuggestsTheReleasesNames(t *testing.T) {
	_, err := Parse(map[string]string{"num.replica.fetcher": "4"})
	e, ok := err.(*Error)
	if !ok || e.Kind != UnknownProperty {
		t.Fatalf("err = %v, want UnknownProperty", err)
	}
	if e.Suggestion != "num.replica.fetchers" {
		t.Errorf("suggestion %q, want num.replica.fetchers (%v)", e.Suggestion, err)
	}
	// A name far from every property gets no suggestion rather than a
	// misleading one.
	_, err = Parse(map[string]string{"qqqqqqqqqqqqqqq": "1"})
	if e, ok := err.(*Error); !ok || len(e.Suggestions) != 0 || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("err = %v, want no suggestion", err)
	}
}

func TestSuggest(t *testing.T) {
	cands := []string{"log.retention.bytes", "min.insync.replicas", "num.replica.fetchers", "topic.min.insync.replicas"}
	for _, tc := range []struct {
		key  string
		want []string
	}{
		{"min.insync.replica", []string{"min.insync.replicas"}},
		{"compression.typ", nil},
		{"replica.fetchers", []string{"num.replica.fetchers"}},
	} {
		if got := suggest(tc.key, cands); !slices.Equal(got, tc.want) {
			t.Errorf("suggest(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

func TestMutantSwitches(t *testing.T) {
	c, err := Parse(map[string]string{"kafkasim.mutant.fsync-lies": "true", "kafkasim.mutant.index-off-by-one": "false"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Broker.Mutants.On(mutant.FsyncLies) || c.Broker.Mutants.On(mutant.IndexOffByOne) {
		t.Fatalf("Mutants = %q", c.Broker.Mutants)
	}
	if _, err := Parse(map[string]string{"kafkasim.mutant.fsync-lies": "yes"}); err == nil || !strings.Contains(err.Error(), "true, false") {
		t.Errorf("a bad value: %v", err)
	}
	if _, err := Parse(map[string]string{"kafkasim.mutant.fsync-lie": "true"}); err == nil || !strings.Contains(err.Error(), "kafkasim.mutant.fsync-lies") {
		t.Errorf("a misspelt mutant: %v", err)
	}
	if got := DefaultBroker().Mutants; got != 0 {
		t.Errorf("default Mutants = %q", got)
	}
}
