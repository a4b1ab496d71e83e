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
		{"manual controller", "brokers 3\ncontrollers 3\ncontroller manual\ntopic t rf=3\nrun 1s\n", `f.txt:3: variant default: config: process.roles = broker conflicts with the scenario's manual controller`},
		{"controllers 0", "brokers 3\ncontrollers 0\ntopic t rf=3\n", `f.txt:2: controllers "0": want a number in [1, 9]`},
		{"absent voter", k + "variant v controller.quorum.voters=3000@c0:9093,3007@c7:9093\nrun 1s\n", `f.txt:4: variant v: controller.quorum.voters: node 3007 is not a controller of this cluster`},
		{"voter in set", k + "set controller.quorum.voters=3009@c9:9093\nrun 1s\n", `f.txt:2: variant default: controller.quorum.voters: node 3009 is not a controller`},
		{"zookeeper.connect", k + "set zookeeper.connect=zk:2181\n", `f.txt:4: set: config: zookeeper.connect = zk:2181 conflicts with process.roles = broker`},
		{"crash out of range", k + "crash ctl3\n", `f.txt:4: crash: "ctl3" is not a controller: the script's KRaft controllers are ctl0..ctl2`},
		{"restart out of range", k + "restart ctl9\n", `f.txt:4: restart: "ctl9" is not a controller`},
		{"cut out of range", k + "cut ctl0 <-> ctl5\n", `f.txt:4: cut: "ctl5" is not a controller`},
		{"partition out of range", k + "partition ctl4 | b0,b1\n", `f.txt:4: partition: "ctl4" is not a controller`},
		{"consumer named like a controller", k + "consumer ctl1 group.id=g topic=t\n", `f.txt:4: consumer: "ctl1" is reserved for a KRaft controller's name (ctl0, ctl1, ...: the dedicated controllers`},
		// Issue 28: a ZooKeeper script meets the controllers once -set selects
		// a KRaft release, so no client may take their names there either.
		{"zk consumer named like a controller", "brokers 3\ntopic t rf=3\nconsumer ctl0 group.id=g topic=t\n", `f.txt:3: consumer: "ctl0" is reserved for a KRaft controller's name (ctl0, ctl1, ...: the dedicated controllers a KRaft release runs, whatever the variants; this script: brokers 3 makes b0..b2)`},
		{"zk client named like a controller", "brokers 3\ntopic t rf=3\ncut ctl2 <-> b0\n", `f.txt:3: cut: "ctl2": no dedicated KRaft controllers in this script`},
		{"zk mode has no ctlN", "brokers 3\ntopic t rf=3\ncrash ctl0\n", `f.txt:3: crash: "ctl0": no dedicated KRaft controllers in this script`},
		{"add-controller in zk mode", "brokers 3\ntopic t rf=3\nadd-controller b0\n", `f.txt:3: add-controller: the controller quorum's voters are KRaft's (KIP-853); no variant runs KRaft`},
		{"remove-controller of a broker", k + "remove-controller b1\n", `f.txt:4: remove-controller: remove-controller b1: not a controller (dedicated controllers are ctl0..ctl2)`},
		{"add-controller out of range", k + "add-controller ctl5\n", `f.txt:4: add-controller: "ctl5" is not a controller`},
		{"wipe-disk of a running controller", k + "wipe-disk ctl1\n", `f.txt:4: wipe-disk: wipe-disk ctl1: ctl1 is running here`},
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
		"brokers 3\ncontrollers 3\ntopic t rf=3\ncrash ctl2\nrestart ctl2\npower-loss controller\nrestart-all\npause ctl0 1s\nshutdown ctl1\n",
		"brokers 3\ncontrollers 3\ntopic t rf=3\ncrash ctl1\nwipe-disk ctl1\nrestart ctl1\nremove-controller ctl1\nadd-controller ctl1\n",
		"brokers 3\ncontrollers 3\ntopic t rf=3\ncut b0 <-> ctl0\ncut controller -> b1\npartition ctl0,ctl1 | ctl2,b0,b1,b2\nlossy ctl0 <-> * drop=0.1\nheal\n",
		"brokers 3 roles=broker,controller\ntopic t rf=3\ncrash controller\n",
		"brokers 3\ntopic t rf=3\nvariant kraft process.roles=broker\ncrash ctl1\n", // the default 3 controllers
		// Consumers and clients named c1, c2 beside the controllers.
		"brokers 3\ncontrollers 3\ntopic t rf=3\nset offsets.topic.replication.factor=3\nconsumer c1 group.id=g topic=t\ncut c1 <-> ctl0\ncrash ctl1\n",
	} {
		if _, err := Parse("f.txt", "f", strings.NewReader(src)); err != nil {
			t.Errorf("script %q: %v", src, err)
		}
	}
}
