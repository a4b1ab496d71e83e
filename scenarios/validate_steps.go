package scenarios

// This file is validate.go's walk over a script's steps: each step checked
// against the header (brokers, topics, controller mode) and against what
// the steps before it declared (clients, produced values, consumer groups).
// See validate.go for what is checked and what cannot be.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
)

// Node kinds a script declares.
const (
	kindScripted = "a scripted client"
	kindProducer = "a Kafka producer"
	kindConsumer = "a consumer"
)

// declared is a client node and the line that brought it.
type declared struct {
	kind string
	line int
	how  string // the step that declared it
	// transactional: a producer with a transactional.id.
	transactional bool
}

// checker is the state of validate's walk over the steps.
type checker struct {
	s        *Script
	vars     map[string]bool
	clients  map[string]declared
	produced map[string]map[string]bool // scripted client -> values
	groups   map[string]bool            // group.id of the consumers so far ("$" when one is a variable)
	// anySwarmClient is set by a swarm step whose client count is a
	// variable: every pN is then taken as its client.
	anySwarmClient bool
	// kraftVariant is the first variant running in KRaft mode ("" for
	// none), controllers the most dedicated controllers (c0..) a variant
	// makes (validate_kraft.go).
	kraftVariant string
	controllers  int
	// down are the nodes a crash, power-loss or shutdown step stopped and
	// no restart brought back yet: wipe-disk needs one.
	down map[string]bool
}

// step checks one step and records what it declares.
func (c *checker) step(st Step) error {
	if err := c.variablesOf(st); err != nil {
		return err
	}
	if allowed, fixed := stepKeys[st.Op]; fixed {
		for _, k := range sortedKeys(keySet(st.KV)) {
			if !contains(allowed, k) {
				return unknownKey(k, allowed)
			}
		}
	}
	a := st.Args
	switch st.Op {
	case "init-txn", "begin", "commit", "abort":
		return c.txnStep(a[0], st.Op)
	case "produce":
		if d, ok := c.clients[a[0]]; ok && d.kind == kindProducer && d.transactional {
			if err := c.partition(a[1], "/"); err != nil {
				return err
			}
			if len(st.KV) > 0 {
				return fmt.Errorf("produce %s: a transactional producer's record takes no key=value arguments (its producer's properties apply)", a[0])
			}
			return nil
		}
		if err := c.scripted(a[0], st.Line, "produce step"); err != nil {
			return err
		}
		if err := c.partition(a[1], "/"); err != nil {
			return err
		}
		if t, ok := st.KV["timeout"]; ok && !isVar(t) {
			if d, err := ParseDuration(t); err != nil || d <= 0 {
				return fmt.Errorf("timeout=%q: want a positive duration such as 500ms or 30s", t)
			}
		}
		if c.produced[a[0]] == nil {
			c.produced[a[0]] = map[string]bool{}
		}
		c.produced[a[0]][a[2]] = true
	case "await":
		if a[1] == "txn" {
			return c.txnStep(a[0], "await "+a[0]+" txn")
		}
		if (a[1] == "ack" || a[1] == "done") && len(a) == 3 {
			return c.awaitValue(st)
		}
		if len(a) > 2 {
			return fmt.Errorf("%q: after 'await NODE KIND' only field=value pairs and within=DUR (e.g. partition=t-0 hw=2)", a[2])
		}
		if err := c.node(a[0], st, false); err != nil {
			return err
		}
		if p, ok := st.KV["partition"]; ok {
			if err := c.partition(p, "-"); err != nil {
				return fmt.Errorf("partition=%s: %w", p, err)
			}
		}
	case "crash", "power-loss", "shutdown", "restart", "pause":
		if d, ok := c.clients[a[0]]; ok && st.Op == "pause" && (d.kind == kindProducer || d.kind == kindConsumer) {
			return nil // a producer or consumer paused: a zombie
		}
		if err := c.broker(a[0], !c.s.Manual); err != nil {
			return err
		}
		if k, ok := st.KV["keep"]; ok && !isVar(k) && k != "none" && k != "some" && k != "all" {
			return fmt.Errorf("keep=%q: allowed none, some (the chooser decides), all", k)
		}
		switch st.Op {
		case "crash", "power-loss", "shutdown":
			c.down[a[0]] = true
		case "restart":
			delete(c.down, a[0])
		}
	case "wipe-disk":
		if a[0] == "controller" {
			return fmt.Errorf("wipe-disk controller: the active controller is running; name the stopped node (a broker bN or a controller ctlN)")
		}
		if err := c.broker(a[0], !c.s.Manual); err != nil {
			return err
		}
		if !isVar(a[0]) && !c.down[a[0]] {
			return fmt.Errorf("wipe-disk %s: %s is running here: a disk is wiped with its machine off (crash, power-loss or shutdown %s first, then restart it)", a[0], a[0], a[0])
		}
	case "restart-all":
		clear(c.down)
	case "add-controller", "remove-controller":
		if c.kraftVariant == "" {
			return fmt.Errorf("the controller quorum's voters are KRaft's (KIP-853); no variant runs KRaft (process.roles=broker, or a release of 4.0 or later)")
		}
		if isVar(a[0]) {
			return nil
		}
		if looks, _ := c.isController(a[0]); looks {
			return c.controllerNodeError(a[0])
		}
		return fmt.Errorf("%s %s: not a controller (dedicated controllers are ctl0..ctl%d)", st.Op, a[0], max(c.controllers-1, 0))
	case "cut":
		for _, n := range []string{a[0], a[2]} {
			if err := c.node(n, st, true); err != nil {
				return err
			}
		}
	case "partition":
		return c.partitionGroups(st)
	case "lossy":
		return c.lossy(st)
	case "delay":
		for _, n := range []string{a[0], a[2]} {
			if n == "*" {
				continue
			}
			if err := c.node(n, st, true); err != nil {
				return err
			}
		}
	case "leader-and-isr":
		return c.leaderAndISR(st)
	case "producer", "consumer", "share-consumer":
		return c.declare(st)
	case "send":
		if err := c.sender(a[0]); err != nil {
			return err
		}
		if err := c.partition(a[1], "/"); err != nil {
			return err
		}
		if n, err := strconv.Atoi(a[2]); !isVar(a[2]) && (err != nil || n < 1) {
			return fmt.Errorf("count %q: want a number >= 1", a[2])
		}
		if iv, ok := st.KV["interval"]; ok && !isVar(iv) {
			if _, err := ParseDuration(iv); err != nil {
				return fmt.Errorf("interval=%q: %w", iv, err)
			}
		}
	case "swarm":
		return c.swarm(st)
	case "alter-config":
		return c.alterConfig(st)
	case "kill-consumer", "restart-consumer", "close-consumer":
		return c.consumer(a[0])
	case "crash-coordinator":
		return c.coordinator(a[0])
	}
	return nil
}

// variablesOf refuses a $name in a step that no variant line (nor the
// swarm step) sets.
func (c *checker) variablesOf(st Step) error {
	vals := append([]string{}, st.Args...)
	for _, k := range sortedKeys(keySet(st.KV)) {
		vals = append(vals, st.KV[k])
	}
	for _, x := range vals {
		if isVar(x) && !c.vars[x] {
			return fmt.Errorf("script variable %s is set by no variant line (%s)", x, c.variableList())
		}
	}
	return nil
}

func (c *checker) variableList() string {
	if len(c.vars) == 0 {
		return "the script has no variables; define one with 'variant NAME " + "$name=value'"
	}
	return "its variables: " + strings.Join(sortedKeys(c.vars), ", ")
}

// unknownKey names the nearest allowed key.
func unknownKey(k string, allowed []string) error {
	msg := fmt.Sprintf("unknown argument %q", k)
	if near := nearest(k, allowed); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	if len(allowed) == 0 {
		return fmt.Errorf("%s: this step takes no key=value arguments", msg)
	}
	return fmt.Errorf("%s (allowed: %s)", msg, strings.Join(allowed, ", "))
}

// brokerRange is the list of the script's brokers, for messages.
func (c *checker) brokerRange() string {
	if c.s.Brokers == 1 {
		return "the only broker is b0"
	}
	return fmt.Sprintf("brokers %d makes b0..b%d", c.s.Brokers, c.s.Brokers-1)
}

// isBroker reports whether name is bN, and whether N is in range.
func (c *checker) isBroker(name string) (looksLike, inRange bool) {
	if !BrokerName.MatchString(name) {
		return false, false
	}
	n, err := strconv.Atoi(name[1:])
	return true, err == nil && n < c.s.Brokers
}

// broker checks a name where a broker is required (controller: the active
// controller's broker, with the ZooKeeper controller).
func (c *checker) broker(name string, allowController bool) error {
	if isVar(name) || (allowController && name == "controller") {
		return nil
	}
	if looks, _ := c.isController(name); looks && allowController {
		return c.controllerNodeError(name)
	}
	looks, ok := c.isBroker(name)
	switch {
	case ok:
		return nil
	case looks:
		return fmt.Errorf("%q is not a broker: %s", name, c.brokerRange())
	}
	also := ""
	if allowController {
		also = ", or controller (the broker that is the controller then)"
		if c.controllers > 0 {
			also = fmt.Sprintf(", a KRaft controller ctl0..ctl%d, or controller (the active quorum controller then)", c.controllers-1)
		}
	}
	return fmt.Errorf("%q is not a broker (%s%s)", name, c.brokerRange(), also)
}

// infra reports whether name is a node the cluster makes, other than a
// broker.
func (c *checker) infra(name string) bool {
	if c.s.Manual {
		return name == "controller"
	}
	return name == "zk" || name == "admin"
}

// node checks a name where any node may stand. With implicit, a name not
// yet known becomes a scripted client, as the runner makes it.
func (c *checker) node(name string, st Step, implicit bool) error {
	if isVar(name) || c.infra(name) || (name == "controller" && c.kraftVariant != "") {
		return nil
	}
	if looks, _ := c.isController(name); looks {
		// NB: also without dedicated controllers: ctlN is never a client
		// (a -set selecting a KRaft release would make it a controller).
		return c.controllerNodeError(name)
	}
	if looks, ok := c.isBroker(name); looks {
		if !ok {
			return fmt.Errorf("%q is not a broker: %s", name, c.brokerRange())
		}
		return nil
	}
	if name == MetadataNodes {
		return fmt.Errorf("%q (the metadata store: zk, or the KRaft controllers) stands only in a partition's groups", name)
	}
	if name == "zk" || name == "admin" || name == "controller" {
		if c.s.Manual {
			return fmt.Errorf("%q: with 'controller manual' there is no ZooKeeper or admin node; the manual controller is the node 'controller'", name)
		}
		return fmt.Errorf("%q is not a node with the ZooKeeper controller (the nodes are the brokers, zk and admin); crash, restart and pause take 'controller' for the controller's broker", name)
	}
	if _, ok := c.clients[name]; ok || c.swarmClient(name) {
		return nil
	}
	if !implicit {
		return fmt.Errorf("no node %q before this line (%s; clients exist once a produce, producer, consumer or swarm step made them)", name, c.brokerRange())
	}
	c.clients[name] = declared{kind: kindScripted, line: st.Line, how: st.Op + " step"}
	return nil
}

// MetadataNodes, in a partition's groups, names the nodes that hold the
// cluster's metadata whatever the mode a release runs: zk in ZooKeeper
// mode, every dedicated controller in KRaft mode (none in combined mode,
// where the brokers hold it). So a script that cuts a leader off from
// ZooKeeper runs under a KRaft release too.
const MetadataNodes = "metadata"

// swarmClient reports whether name is pN of a swarm step whose client
// count is a variable.
func (c *checker) swarmClient(name string) bool {
	if !c.anySwarmClient || !strings.HasPrefix(name, "p") {
		return false
	}
	n, err := strconv.Atoi(name[1:])
	return err == nil && n >= 1
}

// scripted checks the client of a produce step: a scripted client, made
// here if new.
func (c *checker) scripted(name string, line int, how string) error {
	if isVar(name) {
		return nil
	}
	if looks, _ := c.isBroker(name); looks || name == "zk" || name == "admin" || name == "controller" {
		return fmt.Errorf("%q names a broker or a cluster node, not a client", name)
	}
	if d, ok := c.clients[name]; ok {
		if d.kind != kindScripted {
			return fmt.Errorf("%q is %s (declared by the %s at line %d); produce is for scripted clients: use 'send %s TOPIC/P COUNT', or another name (a producer with transactional.id produces a named value in its transaction)", name, d.kind, d.how, d.line, name)
		}
		return nil
	}
	if c.swarmClient(name) {
		return fmt.Errorf("%q may be a client of the swarm step; produce is for scripted clients: use another name", name)
	}
	c.clients[name] = declared{kind: kindScripted, line: line, how: how}
	return nil
}

// partition checks TOPIC<sep>P against the topics.
func (c *checker) partition(tp, sep string) error {
	if strings.Contains(tp, "$") {
		return nil
	}
	i := strings.LastIndex(tp, sep)
	if i < 0 {
		return fmt.Errorf("%q: want TOPIC%sPARTITION, e.g. t%s0", tp, sep, sep)
	}
	topic, ps := tp[:i], tp[i+len(sep):]
	p, err := strconv.Atoi(ps)
	var names []string
	for _, t := range c.s.Topics {
		names = append(names, t.Name)
		if t.Name != topic {
			continue
		}
		if err != nil || p < 0 || p >= t.Partitions {
			return fmt.Errorf("%q: topic %s has partitions 0..%d", tp, topic, t.Partitions-1)
		}
		return nil
	}
	if topic == coordinator.OffsetsTopic && sep == "-" && err == nil && p >= 0 {
		return nil // its partition count is the run's offsets.topic.num.partitions
	}
	return fmt.Errorf("%q: no topic %q in this scenario (topics: %s)", tp, topic, strings.Join(names, ", "))
}

// awaitValue checks 'await CLIENT ack VALUE'.
func (c *checker) awaitValue(st Step) error {
	name, value := st.Args[0], st.Args[2]
	if len(st.KV) > 0 {
		return unknownKey(sortedKeys(keySet(st.KV))[0], []string{"within"})
	}
	if isVar(name) || isVar(value) {
		return nil
	}
	vals, ok := c.produced[name]
	if !ok {
		if d, known := c.clients[name]; known {
			return fmt.Errorf("%s %s %s: %q is %s (the %s at line %d) and never produced; 'await CLIENT %s VALUE' waits for a value a produce step sent", name, st.Args[1], value, name, d.kind, d.how, d.line, st.Args[1])
		}
		return fmt.Errorf("%s %s %s: no earlier 'produce %s TOPIC/P %s' step (no step before this line produces as %s)", name, st.Args[1], value, name, value, name)
	}
	if !vals[value] {
		return fmt.Errorf("%s %s %s: no earlier 'produce %s TOPIC/P %s' step (%s produced: %s)", name, st.Args[1], value, name, value, name, strings.Join(sortedKeys(vals), ", "))
	}
	return nil
}

// partitionGroups checks 'partition A,B | C,D'.
func (c *checker) partitionGroups(st Step) error {
	n := 0
	for _, a := range append(append([]string{}, st.Args...), "|") {
		if a == "|" {
			if n == 0 {
				return fmt.Errorf("empty group: want 'partition A,B | C,D'")
			}
			n = 0
			continue
		}
		for _, name := range strings.Split(a, ",") {
			if name == "" {
				continue
			}
			if name == MetadataNodes {
				n++ // zk, or the KRaft controllers: the harness expands it
				continue
			}
			if err := c.node(name, st, true); err != nil {
				return err
			}
			n++
		}
	}
	return nil
}

// lossy checks 'lossy A <-> B drop=P duplicate=P reorder=P'.
func (c *checker) lossy(st Step) error {
	for _, k := range sortedKeys(keySet(st.KV)) {
		v := st.KV[k]
		if f, err := strconv.ParseFloat(v, 64); !isVar(v) && (err != nil || !(f >= 0 && f <= 1)) {
			return fmt.Errorf("%s=%q: want a probability in [0,1]", k, v)
		}
	}
	for _, n := range []string{st.Args[0], st.Args[2]} {
		if n == "*" {
			continue
		}
		if err := c.node(n, st, true); err != nil {
			return err
		}
	}
	return nil
}

// leaderAndISR checks 'leader-and-isr TOPIC/P leader=bN epoch=N isr=... [to=...]'.
func (c *checker) leaderAndISR(st Step) error {
	if c.kraftVariant != "" {
		return fmt.Errorf("leader-and-isr is a ZooKeeper-mode step (the manual controller's LeaderAndIsr), but variant %s runs in KRaft mode, where brokers learn their roles from the metadata log", c.kraftVariant)
	}
	if !c.s.Manual {
		return fmt.Errorf("leader-and-isr needs 'controller manual' in the header (the ZooKeeper controller takes its own decisions)")
	}
	if err := c.partition(st.Args[0], "/"); err != nil {
		return err
	}
	if err := c.broker(st.KV["leader"], false); err != nil {
		return fmt.Errorf("leader=%s: %w", st.KV["leader"], err)
	}
	if e := st.KV["epoch"]; !isVar(e) {
		if n, err := strconv.Atoi(e); err != nil || n < 0 {
			return fmt.Errorf("epoch=%q: want a number >= 0", e)
		}
	}
	for _, k := range []string{"isr", "to"} {
		list, ok := st.KV[k]
		if !ok {
			continue
		}
		for _, b := range strings.Split(list, ",") {
			if err := c.broker(b, false); err != nil {
				return fmt.Errorf("%s=%s: %w", k, list, err)
			}
		}
	}
	return nil
}

// declare checks and records 'producer NAME ...' and 'consumer NAME ...'.
func (c *checker) declare(st Step) error {
	name := st.Args[0]
	if isVar(name) {
		return nil
	}
	nodes := fmt.Sprintf("brokers %d makes b0..b%d", c.s.Brokers, c.s.Brokers-1)
	if c.s.Controllers > 0 {
		nodes += fmt.Sprintf(", controllers %d makes ctl0..ctl%d", c.s.Controllers, c.s.Controllers-1)
	}
	if looks, _ := c.isController(name); looks {
		return fmt.Errorf("%q is reserved for a KRaft controller's name (ctl0, ctl1, ...: the dedicated controllers a KRaft release runs, whatever the variants; this script: %s); name the %s otherwise (p1, c1, ...)", name, nodes, st.Op)
	}
	if looks, _ := c.isBroker(name); looks || name == "zk" || name == "admin" || name == "controller" || name == MetadataNodes {
		return fmt.Errorf("%q names a broker or a cluster node (this script: %s; zk, admin, controller and %s are the cluster's); name the %s otherwise (p1, c1, ...)", name, nodes, MetadataNodes, st.Op)
	}
	if d, ok := c.clients[name]; ok {
		return fmt.Errorf("%q already names a node: %s, made by the %s at line %d (declare the %s before its first use, or use another name)", name, d.kind, d.how, d.line, st.Op)
	}
	if c.swarmClient(name) {
		return fmt.Errorf("%q may already be a client of the swarm step: use another name", name)
	}
	kind := kindProducer
	if st.Op == "consumer" || st.Op == "share-consumer" {
		kind = kindConsumer
		g := st.KV["group.id"]
		if isVar(g) {
			g = "$"
		}
		c.groups[g] = true
	}
	c.clients[name] = declared{kind: kind, line: st.Line, how: "'" + st.Op + "' step", transactional: st.Op == "producer" && st.KV["transactional.id"] != ""}
	return nil
}

// sender checks the producer of a send step.
func (c *checker) sender(name string) error {
	if isVar(name) || c.swarmClient(name) {
		return nil
	}
	d, ok := c.clients[name]
	switch {
	case !ok:
		return fmt.Errorf("no producer %q before this line (declare it with 'producer %s [property=value ...]' before the send)", name, name)
	case d.kind != kindProducer:
		return fmt.Errorf("%q is %s (the %s at line %d), not a Kafka producer: declare one with 'producer NAME'", name, d.kind, d.how, d.line)
	}
	return nil
}

// swarm records the swarm step's clients p1..pN.
func (c *checker) swarm(st Step) error {
	n, literal := 2, true
	if v, ok := st.KV["clients"]; ok {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			literal = false // a variable, or bad input parseSwarm reports
		}
	}
	for _, v := range c.s.Variants {
		if _, ok := v.Props["$clients"]; ok {
			literal = false
		}
	}
	if !literal {
		c.anySwarmClient = true
		return nil
	}
	for i := 1; i <= n; i++ {
		name := "p" + strconv.Itoa(i)
		if d, ok := c.clients[name]; ok {
			return fmt.Errorf("its client %s is already %s (the %s at line %d): rename that one", name, d.kind, d.how, d.line)
		}
		c.clients[name] = declared{kind: kindProducer, line: st.Line, how: "swarm step"}
	}
	return nil
}

// consumer checks the name of kill-, restart- and close-consumer.
func (c *checker) consumer(name string) error {
	if isVar(name) {
		return nil
	}
	d, ok := c.clients[name]
	switch {
	case !ok:
		return fmt.Errorf("no consumer %q before this line (declare it with 'consumer %s group.id=G topic=T ...' first)", name, name)
	case d.kind != kindConsumer:
		return fmt.Errorf("%q is %s (the %s at line %d), not a consumer", name, d.kind, d.how, d.line)
	}
	return nil
}

// coordinator checks crash-coordinator's group.
func (c *checker) coordinator(group string) error {
	if len(c.groups) == 0 {
		return fmt.Errorf("no consumer step before this line: %s does not exist yet (the first consumer step creates it)", coordinator.OffsetsTopic)
	}
	if isVar(group) || c.groups["$"] || c.groups[group] {
		return nil
	}
	return fmt.Errorf("no consumer before this line is in group %q (groups: %s)", group, strings.Join(sortedKeys(c.groups), ", "))
}

// alterConfig checks 'alter-config topic NAME property=value ...': a
// topic of the script, topic properties with values of their type. What
// depends on the run (the release, the replication factor) is checked
// when the step runs.
func (c *checker) alterConfig(st Step) error {
	topic := st.Args[1]
	var names []string
	found := false
	for _, t := range c.s.Topics {
		names = append(names, t.Name)
		found = found || t.Name == topic
	}
	if !found && !isVar(topic) {
		return fmt.Errorf("no topic %q (the script's topics: %s)", topic, strings.Join(names, ", "))
	}
	props := map[string]string{}
	for _, k := range sortedKeys(keySet(st.KV)) {
		if !slices.Contains(config.TopicProperties(), k) {
			return unknownKey(k, config.TopicProperties())
		}
		if !isVar(st.KV[k]) {
			props[k] = st.KV[k]
		}
	}
	if _, err := config.ParseTopic(config.DefaultBroker(), props); err != nil {
		return fmt.Errorf("topic %s: %w", topic, err)
	}
	return nil
}
