package catalog

import (
	"slices"
	"strings"
	"testing"
)

// kafkasimReleases are the releases broker/config names; the tables cover
// 0.9.0 on (0.8.x documented no types, see internal/gen/kafkaprops).
var kafkasimReleases = []string{
	"0.9.0", "0.10.0", "0.10.1", "0.10.2", "0.11.0", "1.0", "1.1",
	"2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8",
	"3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9",
	"4.0", "4.1",
}

func TestReleasesAreKafkasimsFrom090To41(t *testing.T) {
	if got := Releases(); !slices.Equal(got, kafkasimReleases) {
		t.Fatalf("Releases() = %v, want %v", got, kafkasimReleases)
	}
	for _, r := range []string{"0.8.0", "0.8.1", "0.8.2"} {
		if Has(r) {
			t.Errorf("Has(%q) = true; 0.8.x has no generated table", r)
		}
	}
	if Has("4.2") || Has("") || Has("3.9.0") {
		t.Error("Has accepts a release the tables do not cover")
	}
}

// TestEveryReleaseHasClientAndBrokerTables: every release from 0.9.0 to
// 4.1 has a broker, a producer and a consumer table; topic tables start at
// 0.10.1 and admin client tables at 0.11.0 (KIP-117).
func TestEveryReleaseHasClientAndBrokerTables(t *testing.T) {
	for _, r := range kafkasimReleases {
		if !Has(r) {
			t.Errorf("Has(%q) = false", r)
			continue
		}
		for _, k := range []Kind{Broker, Producer, Consumer} {
			if n := len(Names(k, r)); n < 30 {
				t.Errorf("%s %s: %d properties, want a full table", r, k, n)
			}
		}
		topics, admin := len(Names(Topic, r)), len(Names(Admin, r))
		switch r {
		case "0.9.0", "0.10.0":
			if topics != 0 || admin != 0 {
				t.Errorf("%s: %d topic and %d admin properties, want none", r, topics, admin)
			}
		case "0.10.1", "0.10.2":
			if topics < 20 || admin != 0 {
				t.Errorf("%s: %d topic and %d admin properties, want a topic table only", r, topics, admin)
			}
		default:
			if topics < 20 || admin < 15 {
				t.Errorf("%s: %d topic and %d admin properties, want both tables", r, topics, admin)
			}
		}
	}
}

// TestTablesAreWellFormed checks the invariants Lookup relies on: each
// kind's table sorted by name then From, spans within Releases and not
// overlapping, every field one Kafka renders.
func TestTablesAreWellFormed(t *testing.T) {
	n := len(Releases())
	for k := Kind(0); k < numKinds; k++ {
		tbl := defs[k]
		for i, d := range tbl {
			if d.Kind != k {
				t.Errorf("%s %s: Kind %s", k, d.Name, d.Kind)
			}
			if d.From > d.To || int(d.To) >= n {
				t.Errorf("%s %s: span %d..%d of %d releases", k, d.Name, d.From, d.To, n)
			}
			if d.Type < Boolean || d.Type > Password {
				t.Errorf("%s %s: type %d", k, d.Name, d.Type)
			}
			if d.Importance != "high" && d.Importance != "medium" && d.Importance != "low" {
				t.Errorf("%s %s: importance %q", k, d.Name, d.Importance)
			}
			if d.NoDefault && d.Default != "" {
				t.Errorf("%s %s: NoDefault with default %q", k, d.Name, d.Default)
			}
			// The dynamic update mode is documented from 1.1 (KIP-226).
			wantMode := k == Broker && int(d.From) >= release("1.1")
			if (d.UpdateMode != "") != wantMode {
				t.Errorf("%s %s %d..%d: update mode %q", k, d.Name, d.From, d.To, d.UpdateMode)
			}
			if i == 0 {
				continue
			}
			p := tbl[i-1]
			switch {
			case p.Name > d.Name:
				t.Errorf("%s: %s sorted before %s", k, p.Name, d.Name)
			case p.Name == d.Name && p.To >= d.From:
				t.Errorf("%s %s: spans %d..%d and %d..%d overlap or are unordered", k, d.Name, p.From, p.To, d.From, d.To)
			case p.Name == d.Name && p.To+1 == d.From && sameDef(p, d):
				t.Errorf("%s %s: spans %d..%d and %d..%d are identical and should be merged", k, d.Name, p.From, p.To, d.From, d.To)
			}
		}
	}
}

func sameDef(a, b Def) bool {
	a.From, a.To, b.From, b.To = 0, 0, 0, 0
	return a == b
}

func lookup(t *testing.T, k Kind, r, name string) Def {
	t.Helper()
	d, ok := Lookup(k, r, name)
	if !ok {
		t.Fatalf("Lookup(%s, %s, %s): no such property", k, r, name)
	}
	return d
}

// TestKafkaFacts checks facts read in Kafka's source (KafkaConfig.scala,
// ProducerConfig.java, ConsumerConfig.java at each tag).
func TestKafkaFacts(t *testing.T) {
	// Defaults.NumReplicaFetchers = 1 in every release.
	for _, r := range kafkasimReleases {
		if d := lookup(t, Broker, r, "num.replica.fetchers"); d.Default != "1" || d.Type != Int {
			t.Errorf("%s num.replica.fetchers: %s %q, want int 1", r, d.Type, d.Default)
		}
	}
	// MessageMaxBytes = 1000000 + LogOverhead through 2.4; 1024*1024 +
	// LOG_OVERHEAD from 2.5 (KAFKA-4203).
	for r, want := range map[string]string{"0.9.0": "1000012", "0.10.2": "1000012", "0.11.0": "1000012", "2.4": "1000012", "2.5": "1048588", "3.9": "1048588", "4.1": "1048588"} {
		if d := lookup(t, Broker, r, "message.max.bytes"); d.Default != want {
			t.Errorf("%s message.max.bytes default %q, want %q", r, d.Default, want)
		}
	}
	// KIP-679: enable.idempotence and acks=all by default from 3.0.
	for r, want := range map[string]string{"0.11.0": "false", "2.8": "false", "3.0": "true", "4.1": "true"} {
		if d := lookup(t, Producer, r, "enable.idempotence"); d.Default != want || d.Type != Boolean {
			t.Errorf("%s enable.idempotence: %s %q, want boolean %q", r, d.Type, d.Default, want)
		}
	}
	if _, ok := Lookup(Producer, "0.10.2", "enable.idempotence"); ok {
		t.Error("enable.idempotence in 0.10.2; KIP-98 added it in 0.11.0")
	}
	if d := lookup(t, Producer, "2.8", "acks"); d.Default != "1" {
		t.Errorf("2.8 acks default %q, want 1", d.Default)
	}
	if d := lookup(t, Producer, "3.0", "acks"); d.Default != "all" || d.Valid != "[all, -1, 0, 1]" {
		t.Errorf("3.0 acks: default %q valid %q", d.Default, d.Valid)
	}
	// KIP-500: no ZooKeeper in 4.0.
	if _, ok := Lookup(Broker, "4.0", "zookeeper.connect"); ok {
		t.Error("zookeeper.connect has a 4.0 row")
	}
	if d := lookup(t, Broker, "3.9", "zookeeper.connect"); !d.NoDefault || d.UpdateMode != "read-only" {
		t.Errorf("3.9 zookeeper.connect: %+v, want required and read-only", d)
	}
	// NB: process.roles and controller.quorum.voters are defineInternal in
	// 2.8 (KRaft early access), so its documentation lists neither; they
	// are documented from 3.0.
	for _, name := range []string{"process.roles", "controller.quorum.voters"} {
		if got := ReleasesWith(Broker, name); len(got) == 0 || got[0] != "3.0" || got[len(got)-1] != "4.1" {
			t.Errorf("ReleasesWith(broker, %s) = %v, want 3.0 ... 4.1", name, got)
		}
	}
	if d := lookup(t, Broker, "3.0", "process.roles"); d.Type != List || d.Valid != "[broker, controller]" {
		t.Errorf("3.0 process.roles: %+v", d)
	}
	// KIP-848: the consumer's group.protocol from 3.7.
	if got := ReleasesWith(Consumer, "group.protocol"); len(got) == 0 || got[0] != "3.7" {
		t.Errorf("ReleasesWith(consumer, group.protocol) = %v, want from 3.7", got)
	}
	if d := lookup(t, Consumer, "3.7", "group.protocol"); d.Default != "classic" || d.Valid != "(case insensitive) [CONSUMER, CLASSIC]" {
		t.Errorf("3.7 group.protocol: %+v", d)
	}
}

// TestTopicMaxMessageBytes: every topic table has max.message.bytes, whose
// server default is the broker's message.max.bytes, with the same default.
func TestTopicMaxMessageBytes(t *testing.T) {
	for _, r := range kafkasimReleases {
		if len(Names(Topic, r)) == 0 {
			continue
		}
		d := lookup(t, Topic, r, "max.message.bytes")
		b := lookup(t, Broker, r, d.ServerDefault)
		if d.ServerDefault != "message.max.bytes" || d.Default != b.Default {
			t.Errorf("%s max.message.bytes: server default %q, default %q vs broker %q", r, d.ServerDefault, d.Default, b.Default)
		}
	}
}

// TestServerDefaultsExist: a topic property's server default is a broker
// property of the same release.
// NB: 0.11.0 to 3.4 render the throttled-replica lists' server default as
// their own names, which are dynamic (ConfigCommand) broker settings, not
// documented broker properties; those two are left out.
func TestServerDefaultsExist(t *testing.T) {
	for _, d := range defs[Topic] {
		if d.ServerDefault == "" || strings.HasSuffix(d.Name, ".replication.throttled.replicas") {
			continue
		}
		for _, r := range releaseNames[d.From : d.To+1] {
			if _, ok := Lookup(Broker, r, d.ServerDefault); !ok {
				t.Errorf("%s topic %s: server default %s is not a broker property", r, d.Name, d.ServerDefault)
			}
		}
	}
}

func TestReleasesWithRemovedProperty(t *testing.T) {
	// port and host.name went in 3.0 (KIP-724's removals of deprecated
	// listener settings, KAFKA-12945).
	got := ReleasesWith(Broker, "port")
	want := kafkasimReleases[:slices.Index(kafkasimReleases, "3.0")]
	if !slices.Equal(got, want) {
		t.Errorf("ReleasesWith(broker, port) = %v, want %v", got, want)
	}
	if !Anywhere(Broker, "port") || Anywhere(Broker, "no.such.property") || Anywhere(numKinds, "port") {
		t.Error("Anywhere disagrees with the tables")
	}
	if ReleasesWith(Broker, "no.such.property") != nil {
		t.Error("ReleasesWith of an unknown property is not empty")
	}
	if zk := ReleasesWith(Broker, "zookeeper.connect"); zk[0] != "0.9.0" || zk[len(zk)-1] != "3.9" || len(zk) != 26 {
		t.Errorf("ReleasesWith(broker, zookeeper.connect) = %v, want 0.9.0 ... 3.9", zk)
	}
}

func TestLookupMisses(t *testing.T) {
	for _, c := range []struct {
		k       Kind
		r, name string
	}{
		{Broker, "0.8.2", "broker.id"},
		{Broker, "3.9", "no.such.property"},
		{numKinds, "3.9", "broker.id"},
		{Topic, "0.9.0", "cleanup.policy"},
	} {
		if d, ok := Lookup(c.k, c.r, c.name); ok {
			t.Errorf("Lookup(%d, %s, %s) = %+v", c.k, c.r, c.name, d)
		}
	}
	if Names(Broker, "0.8.0") != nil || Names(numKinds, "3.9") != nil {
		t.Error("Names of an uncovered release or kind is not empty")
	}
}

// TestDefaultsNormalised: units, quotes, List.toString and Class.toString
// never reach a default.
func TestDefaultsNormalised(t *testing.T) {
	for k := Kind(0); k < numKinds; k++ {
		for _, d := range defs[k] {
			if strings.Contains(d.Default, " (") || d.Default == `""` || d.Default == "null" ||
				strings.HasPrefix(d.Default, "[") || strings.Contains(d.Default, "class ") {
				t.Errorf("%s %s %d..%d: default %q not normalised", k, d.Name, d.From, d.To, d.Default)
			}
		}
	}
	if d := lookup(t, Topic, "3.9", "retention.ms"); d.Default != "604800000" {
		t.Errorf("3.9 retention.ms default %q, want 604800000", d.Default)
	}
	if d := lookup(t, Topic, "0.10.1", "cleanup.policy"); d.Default != "delete" || d.Type != List {
		t.Errorf("0.10.1 cleanup.policy default %q (rendered [delete]), want delete", d.Default)
	}
	if d := lookup(t, Consumer, "3.0", "partition.assignment.strategy"); d.Default != "org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor" {
		t.Errorf("3.0 partition.assignment.strategy default %q", d.Default)
	}
	if d := lookup(t, Producer, "3.9", "client.id"); d.Default != "" || d.NoDefault {
		t.Errorf("3.9 client.id: default %q NoDefault %v, want empty string", d.Default, d.NoDefault)
	}
	if d := lookup(t, Producer, "3.9", "key.serializer"); !d.NoDefault {
		t.Error("3.9 key.serializer has a default; Kafka requires it")
	}
}
