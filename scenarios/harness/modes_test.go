package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
)

// TestStepsMeetTheRunsMode: issue 28. A step naming a node the run's
// metadata mode lacks is refused before the run, at its line, naming the
// mode -set chose (zk under a KRaft release, ctlN under ZooKeeper), where
// it used to fail half-way (exit 4); 'metadata' in a partition's groups
// names zk or the controllers, so one script cuts a leader off from the
// metadata store under either.
func TestStepsMeetTheRunsMode(t *testing.T) {
	parse := func(src string) *scenarios.Script {
		t.Helper()
		s, err := scenarios.Parse("m.txt", "m", strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	const head = "brokers 3\ntopic t partitions=1 rf=3 assignment=0,1,2\nrun 2s\n"
	zk := parse(head + "partition b0 | b1,b2,zk\nrun 1s\n")
	if _, _, err := Prepare(zk, "", map[string]string{"inter.broker.protocol.version": "4.1"}); err == nil ||
		!strings.Contains(err.Error(), "m.txt:4: partition: zk: this run is in KRaft mode") {
		t.Errorf("zk under 4.1: %v", err)
	}
	mixed := parse("brokers 3\ncontrollers 3\ntopic t rf=3\nvariant kraft\nvariant zk process.roles= zookeeper.connect=zk:2181\nrun 1s\ncrash ctl1\n")
	if _, _, err := Prepare(mixed, "zk", nil); err == nil || !strings.Contains(err.Error(), "m.txt:7: crash: ctl1: this run is in ZooKeeper mode") {
		t.Errorf("crash ctl1 in a ZooKeeper variant: %v", err)
	}
	meta := parse(head + "partition b0 | b1,b2,metadata\nrun 5s\nheal\n")
	for _, set := range []map[string]string{nil, {"inter.broker.protocol.version": "4.1"}} {
		res, err := Run(meta, "", Options{Seed: 1, Set: set})
		if err != nil || res.Failed != "" {
			t.Fatalf("%v: %v %s", set, err, res.Failed)
		}
	}
	if _, err := scenarios.Parse("b.txt", "b", strings.NewReader(head+"cut metadata <-> b0\n")); err == nil || !strings.Contains(err.Error(), "stands only in a partition's groups") {
		t.Errorf("crash metadata: %v", err)
	}
}
