package scenarios

// This file checks a script whole, before anything runs, so that a mistake
// in it is bad input (file:line, what is wrong and what is allowed; exit 2
// on the command line) rather than a run that breaks at the step ("RUN
// FAILED") below checker verdicts that judged half a scenario. Parse calls
// checkWord on every line, checkHeaderLine on every header line and
// validate on the whole body (the walk over the steps is in
// validate_steps.go); harness.Prepare calls CheckRun with the variant and
// the -set overrides.
//
// What it checks:
//   - every first word is a header keyword or a step; a near miss (edit
//     distance <= 2) is named: unknown keyword "brokrs"; did you mean
//     "brokers"?
//   - set and variant lines: Kafka's property names and values (through
//     config.Parse, as the run will), the runner's own properties, and the
//     values of the swarm's script variables; a set line cannot define a
//     script variable (only variant lines and -set can);
//   - broker names: bN within 'brokers N' in every step that names brokers
//     (crash, power-loss, shutdown, restart, pause, cut, partition, lossy,
//     await, leader-and-isr's leader=, isr= and to=); zk and admin only
//     with the ZooKeeper controller, controller as a node only with
//     'controller manual';
//   - topics and partitions: produce, send and leader-and-isr's TOPIC/P,
//     await's partition=TOPIC-P;
//   - clients: a scripted client comes into being at its first produce (or
//     its first mention in cut, partition or lossy, as the runner does);
//     'producer NAME', 'consumer NAME' and the swarm's p1..pN are declared
//     by their step, once: send needs an earlier producer, kill-consumer,
//     restart-consumer and close-consumer an earlier consumer,
//     crash-coordinator an earlier consumer of that group, await NODE KIND
//     a node that exists by then;
//   - await CLIENT ack VALUE: an earlier 'produce CLIENT ... VALUE';
//   - the keys of steps whose keys are fixed (produce acks= timeout=,
//     crash keep=, send interval=, lossy, leader-and-isr), with their
//     values where they are literal;
//   - script variables: every $name a step uses is set by some variant line
//     or is one of the swarm step's; at harness.Prepare, by the variant that runs
//     (or -set); every -set $name is a variable of the script, with a valid
//     value (CheckValue).
//
// What it cannot check statically: what a $variable stands for where the
// value decides a check (a broker or client named by a variable, a count
// of swarm clients set by $clients: then any p1, p2, ... is accepted); the
// partitions of __consumer_offsets (offsets.topic.num.partitions may be
// set by a variant or -set: any partition is accepted); property
// combinations across lines (set with a variant, or min.insync.replicas
// against the replication factor: harness.Prepare refuses them, naming the
// properties but not a line); and everything that depends on the run —
// whether a broker is up when a step needs it, whether an await is
// satisfied in time, whether a consumer is down when it is restarted.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config"
)

// headerKeywords are the words that start a header line.
var headerKeywords = []string{"name", "describe", "source", "brokers", "controllers", "topic", "set", "variant", "expect", "limit", "controller", "final-read", "end-phase"}

// stepWords are the words that start a step.
var stepWords = []string{"run", "produce", "await", "crash", "power-loss", "shutdown", "restart", "wipe-disk", "add-controller", "remove-controller", "restart-all", "pause", "cut", "partition", "heal",
	"leader-and-isr", "swarm", "producer", "send", "lossy", "consumer", "kill-consumer", "restart-consumer", "close-consumer", "crash-coordinator", "share-consumer", "init-txn", "begin", "commit", "abort", "delay", "alter-config"}

// stepKeys are the key=value arguments of the steps that take a fixed set
// (the others take Kafka properties or trace fields).
var stepKeys = map[string][]string{
	"run": nil, "produce": {"acks", "timeout", "key"}, "crash": {"keep"}, "power-loss": {"keep"}, "shutdown": nil, "restart": nil, "wipe-disk": nil, "add-controller": nil, "remove-controller": nil,
	"restart-all": nil, "pause": nil, "cut": nil, "partition": nil, "heal": nil, "send": {"interval", "key"},
	"lossy": {"drop", "duplicate", "reorder"}, "leader-and-isr": {"leader", "epoch", "isr", "to"},
	"kill-consumer": {"close"}, "restart-consumer": {"group.protocol"}, "close-consumer": nil, "crash-coordinator": nil,
	"init-txn": nil, "begin": nil, "commit": nil, "abort": nil, "delay": {"overtaken"},
}

// checkWord refuses a first word that is no keyword but close to one; an
// unknown word far from all of them is left to the step parser's "unknown
// step" with its list.
func checkWord(word string) error {
	known := append(append([]string{}, headerKeywords...), stepWords...)
	if contains(known, word) {
		return nil
	}
	if near := nearest(word, known); near != "" {
		return fmt.Errorf("unknown keyword %q; did you mean %q?", word, near)
	}
	return nil
}

// nearest returns the candidate within edit distance 2 of word closest to
// it (the first in the list on a tie), or "".
func nearest(word string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := config.EditDistance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// checkHeaderLine checks a set or variant line once Script.header applied
// it: the properties the script has so far must parse as the run will
// parse them, so that an unknown property or a bad value is reported at
// the line that brought it.
func (s *Script) checkHeaderLine(word string, kv map[string]string) error {
	switch word {
	case "set":
		for _, k := range sortedKeys(keySet(kv)) {
			if strings.HasPrefix(k, "$") {
				return fmt.Errorf("set %s: a script variable is set on a variant line (variant NAME %s=...) or with -set, not by set", k, k)
			}
		}
		return checkProps("set", s.Props, nil)
	case "variant":
		v := s.Variants[len(s.Variants)-1]
		for _, k := range sortedKeys(keySet(v.Props)) {
			if strings.HasPrefix(k, "$") {
				if err := CheckValue(k, v.Props[k]); err != nil {
					return fmt.Errorf("variant %s: %w", v.Name, err)
				}
			}
		}
		return checkProps("variant "+v.Name, s.Props, v.Props)
	}
	return nil
}

// checkProps parses the properties of base overridden by over, as
// Script.Configuration and Script.EndOptions will.
func checkProps(what string, base, over map[string]string) error {
	probe := &Script{Props: base}
	v := Variant{Props: over}
	if _, err := config.ParseGiven(probe.Configuration(v, nil), scenarioOwn); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if _, err := probe.EndOptions(v, nil); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func keySet(m map[string]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// validate checks the script's steps in order against its header
// (validate_steps.go).
func (s *Script) validate() error {
	c := &checker{s: s, vars: s.Variables(), clients: map[string]declared{}, produced: map[string]map[string]bool{}, groups: map[string]bool{}, down: map[string]bool{}}
	var err error
	if c.kraftVariant, c.controllers, err = s.kraftShape(); err != nil { // validate_kraft.go
		return err
	}
	for _, st := range s.Steps {
		if err := c.step(st); err != nil {
			return &SyntaxError{File: s.File, Line: st.Line, Msg: fmt.Sprintf("%s: %v", st.Op, err)}
		}
	}
	if err := c.keepCuts(); err != nil {
		return &SyntaxError{File: s.File, Line: s.EndPhaseLine, Msg: "end-phase: " + err.Error()}
	}
	return nil
}

// keepCuts checks 'end-phase keep-cuts[=A,B,...]' against the steps: the
// script must cut something, and each name must be a node of the cluster
// or a client the steps made. 'controller' is refused: it names whichever
// node is the controller when a step runs, and by the end phase that may
// be another one.
func (c *checker) keepCuts() error {
	s := c.s
	if !s.KeepCuts {
		return nil
	}
	cuts := false
	for _, st := range s.Steps {
		cuts = cuts || st.Op == "cut" || st.Op == "partition" || st.Op == "swarm"
	}
	if !cuts {
		return fmt.Errorf("keep-cuts: the script has no cut, partition or swarm step, so there is no cut to keep (remove the line)")
	}
	for _, n := range s.KeepCutsBetween {
		switch {
		case isVar(n):
			return fmt.Errorf("keep-cuts: %s: a header line takes node names, not script variables", n)
		case n == "controller":
			return fmt.Errorf("keep-cuts: %q names the active controller at each step, which the end phase cannot know; name the nodes (b0, ctl0, ...)", n)
		}
		_, client := c.clients[n]
		looksBroker, _ := c.isBroker(n)
		looksController, _ := c.isController(n)
		if !client && !looksBroker && !looksController && !c.infra(n) && !c.swarmClient(n) {
			return fmt.Errorf("keep-cuts: %q is no node of the script (%s; a client is one a produce, producer, consumer, cut, partition or swarm step makes)", n, c.brokerRange())
		}
		if err := c.node(n, Step{}, false); err != nil {
			return fmt.Errorf("keep-cuts: %w", err)
		}
	}
	return nil
}

func isVar(x string) bool { return strings.HasPrefix(x, "$") }

// CheckRun checks a run's script variables: every -set $name is one of
// the script's, with a valid value, and every $name a step uses is set by
// the variant or by -set.
func (s *Script) CheckRun(v Variant, set map[string]string) error {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if isVar(k) {
			if err := s.CheckVariable(k, set[k]); err != nil {
				return fmt.Errorf("-set %s=%s: %w", k, set[k], err)
			}
		}
	}
	vars := ScriptVars(v, set)
	for _, st := range s.Steps {
		unset := func(x string) error {
			if _, ok := vars[x]; isVar(x) && !ok {
				return fmt.Errorf("%s:%d: %s uses %s, which variant %s does not set (set it on the variant's line, or with -set '%s=VALUE')", s.File, st.Line, st.Op, x, v.Name, x)
			}
			return nil
		}
		// NB: the arguments, then the values by key, as before, without
		// collecting them into a slice per step (explore checks every run).
		for _, x := range st.Args {
			if err := unset(x); err != nil {
				return err
			}
		}
		if len(st.KV) == 0 {
			continue
		}
		for _, k := range sortedKeys(keySet(st.KV)) {
			if err := unset(st.KV[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckVariable checks a $name given from outside the script (-set,
// a sweep's -grid): a variable of the script, with a valid value.
func (s *Script) CheckVariable(name, value string) error {
	vars := s.Variables()
	if !vars[name] {
		list := "it has none"
		if len(vars) > 0 {
			list = "its variables: " + strings.Join(sortedKeys(vars), ", ")
		}
		return fmt.Errorf("scenario %s has no script variable %s (%s)", s.Name, name, list)
	}
	return CheckValue(name, value)
}

// scenarioOwn is config.ParseGiven's strict for a script's own properties
// (set and variant lines, written for every release the script runs
// under): none is held to the release.
func scenarioOwn(string) bool { return false }
