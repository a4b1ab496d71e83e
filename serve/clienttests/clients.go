package clienttests

import (
	"strconv"
	"strings"
)

// Client is a Kafka client whose own integration tests the harness runs:
// a Go module fetched through the module proxy at a pinned version.
type Client struct {
	// Name is the table's name: "kgo", "kafka-go".
	Name string
	// Module and Version pin what go mod download fetches.
	Module, Version string
	// Packages are the module's packages, relative to its root, whose
	// tests include integration tests ("./pkg/kgo").
	Packages []string
	// Markers find the integration tests among each package's tests.
	Markers Markers
	// Port is the cluster's base port: broker bN listens on Port+N.
	Port int
	// Env is the environment the tests read, for a cluster on Port that
	// advertises release (e.g. "3.9").
	Env func(c Client, release string) []string
	// ServeSet are serve's -set overrides for this client's tests, and
	// KfakeArgs kfake's flags: the settings of the client's own CI cluster
	// that differ from each one's defaults.
	ServeSet, KfakeArgs []string
	// Skip is go test's -skip pattern: tests that hang against some
	// cluster without a deadline of their own, and would stop the rest of
	// the package at its -timeout. Each is named in docs/clienttests.md.
	Skip string
	// Subset is the -run pattern of the short run (-short, and the CI
	// test): a few fast tests of its suite that pass against serve.
	Subset string
}

// Kgo is franz-go's client, pkg/kgo. Its integration tests read KGO_SEEDS
// (the seed brokers), KGO_TEST_RF (the replication factor of the topics
// they create; 3, since the served cluster's min.insync.replicas=2
// refuses every acks=all produce to an RF-1 topic, as Kafka would) and
// KGO_TEST_RECORDS (records per ETL test; its default is 500,000)
// (pkg/kgo/helpers_test.go). franz-go runs them against its kfake with
// group.consumer.heartbeat.interval.ms=1000 (pkg/kfake/run_tests.sh).
var Kgo = Client{
	Name:     "kgo",
	Module:   "github.com/twmb/franz-go",
	Version:  "v1.22.3",
	Packages: []string{"./pkg/kgo"},
	Markers:  Markers{Helpers: []string{"adm", "newTestClient", "testClientOpts", "getSeedBrokers"}},
	Port:     9092,
	Env: func(c Client, release string) []string {
		seeds := make([]string, 3)
		for i := range seeds {
			seeds[i] = "127.0.0.1:" + strconv.Itoa(c.Port+i)
		}
		return []string{"KGO_SEEDS=" + strings.Join(seeds, ","), "KGO_TEST_RF=3"}
	},
	KfakeArgs: []string{"-c", "group.consumer.heartbeat.interval.ms=1000"},
	Subset:    "^(TestPing|TestIssue325|TestIssue337|TestUnknownGroupOffsetFetchPinned|TestIssueProduceSyncManualPartitionNegativeDoesNotPanic)$",
}

// KafkaGo is segmentio's kafka-go. Its tests dial localhost:9092 (a single
// broker, in its CI with auto.create.topics.enable, delete.topic.enable
// and message.max.bytes=200000000) and a SASL listener on localhost:9093,
// create topics with RF 1, and read KAFKA_VERSION to skip what the
// broker's release lacks; its CI sets KAFKA_SKIP_NETTEST=1 (.circleci).
// The cluster's base port is 9090, so that its b2 is localhost:9092 and
// nothing listens on 9093, as for a Kafka without SASL. serve runs with
// min.insync.replicas=1 so that acks=all to an RF-1 topic is accepted.
var KafkaGo = Client{
	Name:    "kafka-go",
	Module:  "github.com/segmentio/kafka-go",
	Version: "v0.4.51",
	// NB: ./sasl's TestSASL is left out: it needs a SASL listener on
	// localhost:9093, and neither serve nor kfake (without EnableSASL)
	// has one.
	Packages: []string{".", "./compress", "./topics"},
	Markers: Markers{
		Helpers:   []string{"newLocalClient", "newLocalClientAndTopic", "newLocalClientWithTopic", "createTopic", "makeTopic"},
		Addresses: []string{"localhost:909"},
	},
	Port: 9090,
	Env: func(c Client, release string) []string {
		return []string{"KAFKA_VERSION=" + release + ".0", "KAFKA_SKIP_NETTEST=1"}
	},
	ServeSet: []string{"min.insync.replicas=1"},
	// Against serve kraft, a Produce and a ListOffsets sent concurrently
	// on one connection wait forever for their answers.
	Skip:      "^TestConn$/^writing_and_reading_messages_concurrently_should_preserve_the_order$",
	KfakeArgs: []string{"-auto-create", "-c", "message.max.bytes=200000000"},
	Subset:    "^(TestClientMetadata|TestClientProduce|TestClientFetch|TestClientListOffsets|TestClientProduceAndConsume)$",
}

// Clients are the suites of a full run.
var Clients = []Client{Kgo, KafkaGo}
