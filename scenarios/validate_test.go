package scenarios

import (
	"strings"
	"testing"
)

// TestScriptValidationErrors: a script is checked whole when parsed; each
// mistake is refused at its line, saying what is wrong and what is
// allowed. Every check of validate.go has a case here.
func TestScriptValidationErrors(t *testing.T) {
	const h = "brokers 3\ntopic t partitions=3 rf=2\n"       // lines 1-2
	const m = "brokers 2\ntopic t rf=2\ncontroller manual\n" // lines 1-3
	const g = h + "consumer c1 group.id=g topic=t\n"         // line 3
	cases := []struct{ name, src, want string }{
		// Broker names out of range, in every step that names brokers.
		{"crash", h + "crash b7\n", `f.txt:3: crash: "b7" is not a broker: brokers 3 makes b0..b2`},
		{"power-loss", h + "power-loss b3\n", `f.txt:3: power-loss: "b3" is not a broker`},
		{"restart", h + "restart b9\n", `f.txt:3: restart: "b9" is not a broker`},
		{"shutdown", h + "shutdown b4\n", `f.txt:3: shutdown: "b4" is not a broker`},
		{"pause", h + "pause b5 3s\n", `f.txt:3: pause: "b5" is not a broker`},
		{"wipe-disk running", h + "wipe-disk b1\n", `f.txt:3: wipe-disk: wipe-disk b1: b1 is running here: a disk is wiped with its machine off (crash, power-loss or shutdown b1 first, then restart it)`},
		{"wipe-disk restarted", h + "crash b1\nrestart b1\nwipe-disk b1\n", `f.txt:5: wipe-disk: wipe-disk b1: b1 is running here`},
		{"wipe-disk controller", h + "wipe-disk controller\n", `f.txt:3: wipe-disk: wipe-disk controller: the active controller is running`},
		{"wipe-disk range", h + "wipe-disk b3\n", `f.txt:3: wipe-disk: "b3" is not a broker`},
		{"wipe-disk args", h + "crash b1\nwipe-disk b1 b2\n", `f.txt:4: wipe-disk: want 'wipe-disk BROKER'`},
		{"crash a non-broker", h + "crash zk\n", `f.txt:3: crash: "zk" is not a broker (brokers 3 makes b0..b2, or controller`},
		{"cut", h + "cut b0 -> b3\n", `f.txt:3: cut: "b3" is not a broker`},
		{"partition", h + "partition b0 | b1,b5\n", `f.txt:3: partition: "b5" is not a broker`},
		{"partition empty group", h + "partition b0 | |\n", `f.txt:3: partition: empty group`},
		{"lossy", h + "lossy b9 <-> * drop=0.1\n", `f.txt:3: lossy: "b9" is not a broker`},
		{"await node", h + "await b4 hw partition=t-0\n", `f.txt:3: await: "b4" is not a broker`},
		{"leader", m + "leader-and-isr t/0 leader=b2 epoch=1 isr=b0\n", `f.txt:4: leader-and-isr: leader=b2: "b2" is not a broker: brokers 2 makes b0..b1`},
		{"isr", m + "leader-and-isr t/0 leader=b0 epoch=1 isr=b0,b4\n", `f.txt:4: leader-and-isr: isr=b0,b4: "b4" is not a broker`},
		{"to", m + "leader-and-isr t/0 leader=b0 epoch=1 isr=b0 to=b7\n", `f.txt:4: leader-and-isr: to=b7: "b7" is not a broker`},
		{"manual has no controller alias", m + "crash controller\n", `f.txt:4: crash: "controller" is not a broker (brokers 2 makes b0..b1)`},
		{"manual has no zk", m + "cut zk -> b0\n", `f.txt:4: cut: "zk": with 'controller manual' there is no ZooKeeper`},
		{"zk mode has no controller node", h + "cut controller -> b0\n", `f.txt:3: cut: "controller" is not a node with the ZooKeeper controller`},
		// Topics and partitions.
		{"produce partition", h + "produce p1 t/3 m1\n", `f.txt:3: produce: "t/3": topic t has partitions 0..2`},
		{"produce topic", h + "produce p1 u/0 m1\n", `f.txt:3: produce: "u/0": no topic "u" in this scenario (topics: t)`},
		{"send partition", h + "producer p1\nsend p1 t/9 5\n", `f.txt:4: send: "t/9": topic t has partitions 0..2`},
		{"await partition", h + "await b0 hw partition=t-9\n", `f.txt:3: await: partition=t-9: "t-9": topic t has partitions 0..2`},
		{"await partition form", h + "await b0 hw partition=t0\n", `f.txt:3: await: partition=t0: "t0": want TOPIC-PARTITION`},
		{"leader-and-isr partition", m + "leader-and-isr t/1 leader=b0 epoch=1 isr=b0\n", `f.txt:4: leader-and-isr: "t/1": topic t has partitions 0..0`},
		// Awaits of values no earlier step produces.
		{"await other value", h + "produce p1 t/0 m1\nawait p1 ack m9\n", `f.txt:4: await: p1 ack m9: no earlier 'produce p1 TOPIC/P m9' step (p1 produced: m1)`},
		{"await before produce", h + "await p1 ack m1\nproduce p1 t/0 m1\n", `f.txt:3: await: p1 ack m1: no earlier 'produce p1 TOPIC/P m1' step (no step before this line produces as p1)`},
		{"await a producer's ack", h + "producer p1\nawait p1 ack m1\n", `f.txt:4: await: p1 ack m1: "p1" is a Kafka producer (the 'producer' step at line 3) and never produced`},
		{"await ack keys", h + "produce p1 t/0 m1\nawait p1 ack m1 timeout=5s\n", `f.txt:4: await: unknown argument "timeout" (allowed: within)`},
		{"await extra words", h + "await b0 hw t-0\n", `f.txt:3: await: "t-0": after 'await NODE KIND' only field=value pairs`},
		// Clients used before they are declared, or as what they are not.
		{"send before producer", h + "send p2 t/0 5\nproducer p2\n", `f.txt:3: send: no producer "p2" before this line (declare it with 'producer p2`},
		{"send by a scripted client", h + "produce p1 t/0 m1\nsend p1 t/0 5\n", `f.txt:4: send: "p1" is a scripted client (the produce step at line 3), not a Kafka producer`},
		{"producer after produce", h + "produce p1 t/0 m1\nproducer p1\n", `f.txt:4: producer: "p1" already names a node: a scripted client, made by the produce step at line 3`},
		{"produce by a producer", h + "producer p1\nproduce p1 t/0 m1\n", `f.txt:4: produce: "p1" is a Kafka producer (declared by the 'producer' step at line 3); produce is for scripted clients`},
		{"produce by a broker", h + "produce b1 t/0 m1\n", `f.txt:3: produce: "b1" names a broker or a cluster node, not a client`},
		{"producer named like a broker", h + "producer zk\n", `f.txt:3: producer: "zk" names a broker or a cluster node`},
		{"consumer twice", g + "consumer c1 group.id=g topic=t\n", `f.txt:4: consumer: "c1" already names a node: a consumer, made by the 'consumer' step at line 3`},
		{"consumer after cut", h + "cut c1 <-> b1\nconsumer c1 group.id=g topic=t\n", `f.txt:4: consumer: "c1" already names a node: a scripted client, made by the cut step at line 3`},
		{"kill-consumer before consumer", h + "kill-consumer c1\n", `f.txt:3: kill-consumer: no consumer "c1" before this line`},
		{"restart-consumer of a client", h + "produce p1 t/0 m1\nrestart-consumer p1\n", `f.txt:4: restart-consumer: "p1" is a scripted client (the produce step at line 3), not a consumer`},
		{"close-consumer unknown", g + "close-consumer c2\n", `f.txt:4: close-consumer: no consumer "c2" before this line`},
		{"await unknown node", h + "await c3 consumer-join\nconsumer c3 group.id=g topic=t\n", `f.txt:3: await: no node "c3" before this line`},
		{"crash-coordinator first", h + "crash-coordinator g\n", `f.txt:3: crash-coordinator: no consumer step before this line: __consumer_offsets does not exist yet`},
		{"crash-coordinator group", g + "crash-coordinator h\n", `f.txt:4: crash-coordinator: no consumer before this line is in group "h" (groups: g)`},
		{"swarm over a client", h + "produce p1 t/0 m1\nswarm 10s\n", `f.txt:4: swarm: its client p1 is already a scripted client (the produce step at line 3)`},
		{"produce as a swarm client", h + "swarm 10s clients=1\nproduce p1 t/0 m1\n", `f.txt:4: produce: "p1" is a Kafka producer (declared by the swarm step at line 3)`},
		// Header keyword and step typos.
		{"header typo", "brokrs 3\ntopic t\n", `f.txt:1: unknown keyword "brokrs"; did you mean "brokers"?`},
		{"step typo", h + "crsh b0\n", `f.txt:3: unknown keyword "crsh"; did you mean "crash"?`},
		{"variant typo", h + "varaint v truncation=hw\n", `f.txt:3: unknown keyword "varaint"; did you mean "variant"?`},
		{"step key typo", h + "produce p1 t/0 m1 ack=all\n", `f.txt:3: produce: unknown argument "ack"; did you mean "acks"? (allowed: acks, timeout, key)`},
		{"step takes no keys", h + "restart b0 now=1\n", `f.txt:3: restart: unknown argument "now": this step takes no key=value arguments`},
		// Step values that are literal.
		{"keep", h + "crash b0 keep=half\n", `f.txt:3: crash: keep="half": allowed none, some (the chooser decides), all`},
		{"timeout", h + "produce p1 t/0 m1 timeout=soon\n", `f.txt:3: produce: timeout="soon": want a positive duration`},
		{"count", h + "producer p1\nsend p1 t/0 0\n", `f.txt:4: send: count "0": want a number >= 1`},
		{"interval", h + "producer p1\nsend p1 t/0 5 interval=fast\n", `f.txt:4: send: interval="fast"`},
		{"lossy rate", h + "lossy b0 <-> b1 drop=2\n", `f.txt:3: lossy: drop="2": want a probability in [0,1]`},
		{"epoch", m + "leader-and-isr t/0 leader=b0 epoch=-1 isr=b0\n", `f.txt:4: leader-and-isr: epoch="-1": want a number >= 0`},
		{"leader-and-isr needs manual", h + "leader-and-isr t/0 leader=b0 epoch=1 isr=b0\n", `f.txt:3: leader-and-isr: leader-and-isr needs 'controller manual'`},
		// Properties in set and variant lines.
		{"set unknown property", h + "set min.insync.replica=1\n", `f.txt:3: set: config: unknown property "min.insync.replica"; did you mean "min.insync.replicas"?`},
		{"set bad value", h + "set acks=maybe\n", `f.txt:3: set: config: acks = "maybe"`},
		{"set runner property", h + "set kafkasim.liveness.timeout.ms=0\n", `f.txt:3: set: kafkasim.liveness.timeout.ms="0": want a positive integer`},
		{"set variable", h + "set $acks=1\n", `f.txt:3: set $acks: a script variable is set on a variant line`},
		{"variant unknown property", h + "variant v truncaton=hw\n", `f.txt:3: variant v: config: unknown property "truncaton"; did you mean "truncation"?`},
		{"variant bad value", h + "variant v unclean.leader.election.enable=perhaps\n", `f.txt:3: variant v: config: unclean.leader.election.enable = "perhaps"`},
		{"variant bad variable", h + "variant v $crash=2\n", `f.txt:3: variant v: $crash="2": want a probability in [0,1]`},
		{"variant line after its set", h + "set acks=1\nvariant v acks=2\n", `f.txt:4: variant v: config: acks = "2"`},
		// Script variables no variant line defines.
		{"undefined variable", h + "produce p1 t/0 m1 acks=$acks\n", `f.txt:3: produce: script variable $acks is set by no variant line (the script has no variables`},
		{"misspelt variable", h + "variant v $idem=true\nproducer p1 enable.idempotence=$idme\n", `f.txt:4: producer: script variable $idme is set by no variant line (its variables: $idem)`},
	}
	for _, c := range cases {
		_, err := Parse("f.txt", "f", strings.NewReader(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: script %q:\n  error %v\n  want it to contain %q", c.name, c.src, err, c.want)
		}
	}
}

// TestScriptValidationAccepts: what the runner accepts is not refused.
func TestScriptValidationAccepts(t *testing.T) {
	const h = "brokers 3\ntopic t partitions=3 rf=2\n"
	for _, src := range []string{
		h + "crash controller\nrestart b2\n",                                    // the controller's broker
		h + "partition b0,p1 | b1,b2,zk,p2\nproduce p1 t/0 m1\nawait p2 hw\n",   // clients made by their first mention
		h + "swarm 10s clients=2\nsend p2 t/0 5\n",                              // the swarm's clients are producers
		h + "variant v $clients=3\nswarm 10s clients=$clients\nsend p3 t/0 5\n", // a variable client count
		h + "await b0 hw partition=__consumer_offsets-7\n",                      // its partition count is the run's
		h + "consumer c1 group.id=g topic=t\ncut c1 <-> b1\ncrash-coordinator g\nkill-consumer c1\n",
		h + "produce p1 t/0 m1\nawait p1 ack m1 within=5s\n",
		h + "crash b1\nwipe-disk b1\nrestart b1\n",
		h + "shutdown b0\nwipe-disk b0\nrestart-all\n",
	} {
		if _, err := Parse("f.txt", "f", strings.NewReader(src)); err != nil {
			t.Errorf("script %q: %v", src, err)
		}
	}
}

// TestStepWordsAreTheParsersSteps: checkWord's lists are the words Parse
// takes, so a near miss is never suggested for a word the parser refuses.
func TestStepWordsAreTheParsersSteps(t *testing.T) {
	for _, w := range stepWords {
		if _, err := parseStep(1, w, nil, map[string]string{}, nil); err != nil && strings.Contains(err.Error(), "unknown step") {
			t.Errorf("stepWords has %q, which parseStep does not know", w)
		}
	}
	_, err := parseStep(1, "frobnicate", nil, map[string]string{}, nil)
	allowed := err.Error()[strings.Index(err.Error(), "allowed: ")+len("allowed: ") : len(err.Error())-1]
	for _, w := range strings.Split(allowed, ", ") {
		if !contains(stepWords, w) {
			t.Errorf("parseStep takes %q, missing from stepWords", w)
		}
	}
	for _, w := range headerKeywords {
		_, err := Parse("f.txt", "f", strings.NewReader("brokers 1\ntopic t\n"+w+"\n"))
		if err != nil && strings.Contains(err.Error(), "unknown") {
			t.Errorf("headerKeywords has %q: %v", w, err)
		}
	}
}

// TestTransactionalSteps: the transactional steps and the delay step are
// checked at parse and validation time, at their line.
func TestTransactionalSteps(t *testing.T) {
	head := "describe x\nsource y\nbrokers 3\ntopic t partitions=1 rf=3\n"
	for _, c := range []struct{ steps, want string }{
		{"commit p1", "f.txt:5: commit: no producer \"p1\""},
		{"producer p1\nabort p1", "f.txt:6: abort: producer \"p1\" (the 'producer' step at line 5) has no transactional.id"},
		{"consumer c1 group.id=g topic=t\nbegin c1", "f.txt:6: begin: \"c1\" is a consumer"},
		{"producer p1 transactional.id=a\nawait p1 txn maybe", "await PRODUCER txn ok"},
		{"producer p1 transactional.id=a\ninit-txn p1 now", "want 'init-txn PRODUCER'"},
		{"delay b0 - b1 1s", "delay: \"-\": want -> or <->"},
		{"delay b0 -> b7 1s", "\"b7\" is not a broker"},
		{"delay b0 -> b1 1s overtaken=maybe", "delay: overtaken=\"maybe\": allowed true, false"},
		{"delay b0 -> b1 1s later=true", "later"},
		{"producer p1 transactional.id=a\nproduce p1 t/5 v", "f.txt:6"},
	} {
		_, err := Parse("f.txt", "f", strings.NewReader(head+c.steps+"\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.steps, err, c.want)
		}
	}
	for _, ok := range []string{
		"producer p1 transactional.id=a\ninit-txn p1\nawait p1 txn ok\nbegin p1\nproduce p1 t/0 v\ncommit p1\nawait p1 txn done\nabort p1\npause p1 1s\ndelay p1 <-> b0 2s\ndelay p1 -> b0 0s",
	} {
		if _, err := Parse("f.txt", "f", strings.NewReader(head+ok+"\n")); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}
