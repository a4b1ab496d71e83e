package scenarios

import (
	"strings"
	"testing"
)

// TestKRaftScriptValidationErrors: a KRaft script's mistakes are refused
// at their line (validate_kraft.go), as ZooKeeper mode's are.
func TestKRaftScriptValidationErrors(t *testing.T) {
	const k = "brokers 3\ncontrollers 3\ntopic t partitions=3 rf=3\n" // lines 1-3
	cases := []struct{ name, src, want string }{
		{"zk-only step", k + "leader-and-isr t/0 leader=b0 epoch=1 isr=b0\n", `f.txt:4: leader-and-isr: leader-and-isr is a ZooKeeper-mode step`},
		{"manual controller", "brokers 3\ncontrollers 3\ncontroller manual\ntopic t rf=3\nrun 1s\n", `f.txt:3: variant default: a manual controller is a ZooKeeper-mode harness`},
		{"controllers 0", "brokers 3\ncontrollers 0\ntopic t rf=3\n", `f.txt:2: controllers "0": want a number in [1, 9]`},
		{"absent voter", k + "variant v controller.quorum.voters=3000@c0:9093,3007@c7:9093\nrun 1s\n", `f.txt:4: variant v: controller.quorum.voters: node 3007 is not a controller of this cluster`},
		{"voter in set", k + "set controller.quorum.voters=3009@c9:9093\nrun 1s\n", `f.txt:2: variant default: controller.quorum.voters: node 3009 is not a controller`},
		{"zookeeper.connect", k + "set zookeeper.connect=zk:2181\n", `f.txt:4: set: config: zookeeper.connect = zk:2181 conflicts with process.roles = broker`},
		{"crash out of range", k + "crash c3\n", `f.txt:4: crash: "c3" is not a controller: the script's KRaft controllers are c0..c2`},
		{"restart out of range", k + "restart c9\n", `f.txt:4: restart: "c9" is not a controller`},
		{"cut out of range", k + "cut c0 <-> c5\n", `f.txt:4: cut: "c5" is not a controller`},
		{"partition out of range", k + "partition c4 | b0,b1\n", `f.txt:4: partition: "c4" is not a controller`},
		{"consumer named like a controller", k + "consumer c1 group.id=g topic=t\n", `f.txt:4: consumer: "c1" names a KRaft controller (c0..c2)`},
		{"zk mode has no cN", "brokers 3\ntopic t rf=3\ncrash c0\n", `f.txt:3: crash: "c0": no dedicated KRaft controllers in this script`},
	}
	for _, c := range cases {
		_, err := Parse("f.txt", "f", strings.NewReader(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: script %q:\n  error %v\n  want it to contain %q", c.name, c.src, err, c.want)
		}
	}
}

// TestKRaftScriptValidationAccepts: the KRaft node names are accepted.
func TestKRaftScriptValidationAccepts(t *testing.T) {
	for _, src := range []string{
		"brokers 3\ncontrollers 3\ntopic t rf=3\ncrash c2\nrestart c2\npower-loss controller\nrestart-all\npause c0 1s\nshutdown c1\n",
		"brokers 3\ncontrollers 3\ntopic t rf=3\ncut b0 <-> c0\ncut controller -> b1\npartition c0,c1 | c2,b0,b1,b2\nlossy c0 <-> * drop=0.1\nheal\n",
		"brokers 3 roles=broker,controller\ntopic t rf=3\ncrash controller\n",
		"brokers 3\ntopic t rf=3\nvariant kraft process.roles=broker\ncrash c1\n", // the default 3 controllers
	} {
		if _, err := Parse("f.txt", "f", strings.NewReader(src)); err != nil {
			t.Errorf("script %q: %v", src, err)
		}
	}
}
