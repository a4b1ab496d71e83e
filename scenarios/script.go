package scenarios

// This file parses scenario scripts: a header that describes the cluster,
// the configuration, the variants to contrast and what each must show,
// then steps, one per line, that read like the KIP traces. '#' starts a
// comment. A malformed line is reported as file:line with what was
// expected.
//
//	describe KIP-101 scenario 1: HW truncation then immediate election loses an acked write
//	source KIP-101, KAFKA-1211
//	brokers 3
//	topic t partitions=1 rf=2 assignment=1,0
//	set min.insync.replicas=1 zookeeper.session.timeout.ms=6000
//	variant hw truncation=hw
//	variant kip279 truncation=kip279
//	expect hw acked-loss=bug
//	expect kip279 acked-loss=ok
//	final-read on           # the default; 'off' skips the end phase's reads
//	end-phase heal          # the default; 'keep-cuts' keeps the script's cuts
//
//	run 5s
//	produce p1 t/0 m1 acks=all
//	await p1 ack m1
//	await b1 hw partition=t-0 hw=2
//	cut b1 -> b0
//	crash b0
//	...
//
// Steps: run DUR; produce CLIENT TOPIC/P VALUE [acks=all|-1|1|0]
// [timeout=DUR] [key=K]; await CLIENT ack VALUE [within=DUR] (fails the run unless
// the record is acknowledged); await CLIENT done VALUE [within=DUR] (any
// outcome); await NODE KIND
// [FIELD=VALUE ...] [within=DUR]; crash B; power-loss B [keep=none|some|all];
// shutdown B (a controlled shutdown);
// restart B;
// restart-all; pause B DUR; cut A -> B; cut A <-> B; partition A,B | C,D;
// heal; producer NAME [props]; send PRODUCER TOPIC/P COUNT [interval=DUR]
// [key=K]; alter-config topic NAME property=value ... (a topic's configs
// changed during the run);
// lossy A <-> B drop=P duplicate=P reorder=P; swarm DUR [rates]; with
// 'controller manual': leader-and-isr TOPIC/P leader=bN
// epoch=N isr=bA,bB [to=bA,bB] sends the controller's LeaderAndIsr to the
// listed brokers (default: every replica that is up) and UpdateMetadata to
// all brokers.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

// Expectation is what a checker must report for a variant.
type Expectation string

// The expectations a script can state.
const (
	ExpectOK        Expectation = "ok"        // no anomaly at all
	ExpectBug       Expectation = "bug"       // a violation Kafka's contract does not permit
	ExpectPermitted Expectation = "permitted" // anomalies may occur, all within the contract
	ExpectViolation Expectation = "violation" // any violation
	ExpectAny       Expectation = "any"       // not judged
)

var expectations = []Expectation{ExpectOK, ExpectBug, ExpectPermitted, ExpectViolation, ExpectAny}

// Checkers are the checker names a script may set expectations for.
var Checkers = []string{"linearizability", "acked-loss", "divergence", "invariants", "duplicates", "ordering", "liveness", "consumer", "group", "raft", "transactions", "share"}

// Variant is one configuration a scenario contrasts.
type Variant struct {
	// Line is the variant's line in the script (0 for the default).
	Line   int
	Name   string
	Props  map[string]string
	Expect map[string]Expectation // by checker
}

// TopicSpec is a topic a scenario creates.
type TopicSpec struct {
	Name              string
	Partitions        int
	ReplicationFactor int
	Assignment        [][]int32
	// Config holds the topic's own configs, from the topic line's topic
	// properties (min.insync.replicas=2 cleanup.policy=compact ...); they
	// apply over the run's (set lines, variants). A key may carry the
	// prefix config. (config.max.message.bytes=...), as kafka-topics'
	// --config does.
	Config map[string]string
	// Unmodelled holds the topic line's Kafka topic configs that kafkasim
	// does not model (max.compaction.lag.ms=...): checked against the
	// run's release when it runs (harness.Prepare), and listed as
	// accepted, not modelled.
	Unmodelled map[string]string
	// Line is the topic line's, for errors.
	Line int
}

// Step is one line of a script's body.
type Step struct {
	Line int
	Op   string   // the command word
	Args []string // positional arguments
	KV   map[string]string
	// Dur is the duration of run and pause, or the await's within.
	Dur sim.Duration
}

// Script is a parsed scenario script.
type Script struct {
	File string
	// Path is the absolute path of the script file a replay command names
	// (Load sets it); "" for a built-in scenario, which is named.
	Path        string
	Name        string
	Description string
	Source      string
	Brokers     int
	// Controllers is the number of dedicated KRaft controllers (header
	// 'controllers N': nodes c0..cN-1); 0 for none.
	Controllers int
	// KRaftLines are the header lines that shape the KRaft cluster
	// ('controllers', 'brokers ... roles=', 'controller'), for errors
	// (validate_kraft.go).
	KRaftLines []int
	ManualLine int // the 'controller' line
	Racks      []string
	Topics     []TopicSpec
	Props      map[string]string
	Variants   []Variant
	Limit      sim.Duration
	// Manual is set by 'controller manual': no ZooKeeper and no
	// controller; leader-and-isr steps take the controller's decisions.
	Manual bool
	Steps  []Step
	// NoFinalRead is set by 'final-read off': the end phase skips the
	// final reads (a script where a read would disturb what it shows says
	// why in a comment). The heal and the liveness phase still run.
	NoFinalRead bool
	// KeepCuts is set by 'end-phase keep-cuts': the end phase's heal
	// leaves the links the script cut (cut and partition steps) cut, so
	// that liveness is judged under that fault; it still makes lossy
	// links perfect, waits out pauses and restarts what is down. A script
	// uses it only where Kafka's contract promises progress under the
	// cuts it keeps (a majority of controllers reaching each other and the
	// brokers, say), and says so in a comment.
	KeepCuts bool
	// KeepCutsBetween, set by 'end-phase keep-cuts=A,B,...', limits
	// KeepCuts to the cut links between two of these nodes (both ends
	// named); the other cuts are healed. Empty: every cut is kept.
	KeepCutsBetween []string
	// EndPhaseLine is the 'end-phase' line (0 for none), for errors.
	EndPhaseLine int
}

// SyntaxError is a malformed line.
type SyntaxError struct {
	File string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// MaxDuration is the longest duration a script may give (of simulated
// time): longer ones would overflow the virtual clock's int64 nanoseconds.
const MaxDuration = 1000 * sim.Hour

// ParseDuration parses "500ms", "5s", "2m", "1h" (integers only) into a
// sim.Duration of at most MaxDuration.
func ParseDuration(s string) (sim.Duration, error) {
	units := []struct {
		suffix string
		unit   sim.Duration
	}{{"ms", sim.Millisecond}, {"us", sim.Microsecond}, {"s", sim.Second}, {"m", sim.Minute}, {"h", sim.Hour}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			digits := strings.TrimSuffix(s, u.suffix)
			n, err := strconv.ParseInt(digits, 10, 64)
			if err == nil && n >= 0 && digits[0] != '+' {
				if n > int64(MaxDuration/u.unit) {
					return 0, fmt.Errorf("duration %q: at most 1000h of simulated time", s)
				}
				return sim.Duration(n) * u.unit, nil
			}
			if err != nil && errors.Is(err, strconv.ErrRange) {
				return 0, fmt.Errorf("duration %q: at most 1000h of simulated time", s)
			}
		}
	}
	return 0, fmt.Errorf("duration %q: want a non-negative integer with ms, us, s, m or h (e.g. 500ms, 5s), at most 1000h", s)
}

// maxScriptLine bounds one line of a script (bufio.Scanner's default, 64 KiB).
const maxScriptLine = 64 * 1024

// Parse reads a script. name is used when the script has no name line.
func Parse(file, name string, r io.Reader) (*Script, error) {
	s := &Script{File: file, Name: name, Props: map[string]string{}, Limit: 10 * sim.Minute}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxScriptLine)
	line := 0
	fail := func(format string, args ...any) error {
		return &SyntaxError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	inBody := false
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		word, rest := fields[0], fields[1:]
		if err := checkWord(word); err != nil { // validate.go
			return nil, fail("%v", err)
		}
		kv, pos, err := splitKV(rest)
		if err != nil {
			return nil, fail("%v", err)
		}
		switch word {
		case "name", "describe", "source", "brokers", "controllers", "topic", "set", "variant", "expect", "limit", "controller", "final-read", "end-phase":
			if inBody {
				return nil, fail("%q belongs in the header, before the first step", word)
			}
			if err := s.header(word, rest, kv, pos); err != nil {
				return nil, fail("%v", err)
			}
			if word == "variant" {
				s.Variants[len(s.Variants)-1].Line = line
			}
			if word == "topic" {
				s.Topics[len(s.Topics)-1].Line = line
			}
			if word == "controller" {
				s.ManualLine = line
			}
			if word == "end-phase" {
				if s.EndPhaseLine != 0 {
					return nil, fail("end-phase: given twice (first at line %d)", s.EndPhaseLine)
				}
				s.EndPhaseLine = line
			}
			if word == "controllers" || (word == "brokers" && kv["roles"] != "") {
				s.KRaftLines = append(s.KRaftLines, line)
			}
			if err := s.checkHeaderLine(word, kv); err != nil { // validate.go
				return nil, fail("%v", err)
			}
			continue
		}
		inBody = true
		st, err := parseStep(line, word, rest, kv, pos)
		if err != nil {
			return nil, fail("%v", err)
		}
		s.Steps = append(s.Steps, st)
	}
	if err := sc.Err(); err != nil {
		line++ // the line the scanner could not read
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fail("line longer than %d bytes: a script line is a step or a header line", maxScriptLine)
		}
		return nil, fail("reading the script: %v", err)
	}
	line = 0
	if s.Brokers == 0 {
		return nil, fail("no 'brokers N' line: a scenario needs a cluster")
	}
	if len(s.Topics) == 0 {
		return nil, fail("no 'topic' line: a scenario needs a topic")
	}
	if len(s.Variants) == 0 {
		s.Variants = []Variant{{Name: "default", Props: map[string]string{}, Expect: map[string]Expectation{}}}
	}
	if !nameRE.MatchString(s.Name) {
		return nil, fail("scenario name %q: use lower-case letters, digits, '.', '_' and '-'", s.Name)
	}
	if err := s.validate(); err != nil { // validate.go: the steps against the header
		return nil, err
	}
	return s, nil
}

// splitKV separates key=value arguments from positional ones.
func splitKV(args []string) (map[string]string, []string, error) {
	kv := map[string]string{}
	var pos []string
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok {
			if k == "" {
				return nil, nil, fmt.Errorf("%q: a key=value needs a key", a)
			}
			kv[k] = v
		} else {
			pos = append(pos, a)
		}
	}
	return kv, pos, nil
}

func (s *Script) header(word string, rest []string, kv map[string]string, pos []string) error {
	switch word {
	case "name":
		if len(rest) != 1 {
			return fmt.Errorf("name: want exactly one word")
		}
		s.Name = rest[0]
	case "describe":
		s.Description = strings.Join(rest, " ")
	case "source":
		s.Source = strings.Join(rest, " ")
	case "controller":
		if len(pos) != 1 || (pos[0] != "manual" && pos[0] != "zk") {
			return fmt.Errorf("controller: want 'controller zk' (the default: ZooKeeper and an elected controller) or 'controller manual'")
		}
		s.Manual = pos[0] == "manual"
	case "final-read":
		if len(rest) != 1 || (rest[0] != "on" && rest[0] != "off") {
			return fmt.Errorf("final-read: want 'final-read on' (the default: after the last step the healed cluster is read back) or 'final-read off'")
		}
		s.NoFinalRead = rest[0] == "off"
	case "end-phase":
		return s.endPhaseLine(kv, pos)
	case "limit":
		if len(pos) != 1 {
			return fmt.Errorf("limit: want one duration")
		}
		d, err := ParseDuration(pos[0])
		if err != nil {
			return err
		}
		s.Limit = d
	case "brokers":
		if len(pos) != 1 {
			return fmt.Errorf("brokers: want 'brokers N [racks=a,b,...]'")
		}
		if s.Brokers != 0 {
			return fmt.Errorf("brokers: given twice (the topics were checked against the first)")
		}
		n, err := strconv.Atoi(pos[0])
		if err != nil || n < 1 || n > MaxBrokers {
			return fmt.Errorf("brokers %q: want a number in [1, %d]", pos[0], MaxBrokers)
		}
		s.Brokers = n
		for k := range kv {
			if k != "racks" && k != "roles" {
				return fmt.Errorf("brokers: unknown option %q; allowed: racks=a,b,... roles=broker|broker,controller", k)
			}
		}
		if roles, ok := kv["roles"]; ok {
			// KRaft: the brokers' process.roles (combined mode with
			// roles=broker,controller).
			s.Props["process.roles"] = roles
		}
		if r, ok := kv["racks"]; ok {
			s.Racks = strings.Split(r, ",")
			if len(s.Racks) != n {
				return fmt.Errorf("racks: %d given for %d brokers", len(s.Racks), n)
			}
		}
	case "controllers":
		if len(pos) != 1 || len(kv) != 0 {
			return fmt.Errorf("controllers: want 'controllers N' (dedicated KRaft controllers c0..cN-1)")
		}
		n, err := strconv.Atoi(pos[0])
		if err != nil || n < 1 || n > MaxControllers {
			return fmt.Errorf("controllers %q: want a number in [1, %d] (KRaft needs a quorum; leave the line out for ZooKeeper mode)", pos[0], MaxControllers)
		}
		s.Controllers = n
		if _, ok := s.Props["process.roles"]; !ok {
			s.Props["process.roles"] = "broker"
		}
	case "topic":
		t, err := s.topicLine(kv, pos) // topic.go
		if err != nil {
			return err
		}
		s.Topics = append(s.Topics, t)
	case "set":
		if len(pos) > 0 {
			return fmt.Errorf("set: want key=value pairs, got %q", pos[0])
		}
		for k, v := range kv {
			s.Props[k] = v
		}
	case "variant":
		if len(pos) != 1 || !nameRE.MatchString(pos[0]) {
			return fmt.Errorf("variant: want 'variant NAME key=value ...'")
		}
		for _, v := range s.Variants {
			if v.Name == pos[0] {
				return fmt.Errorf("variant %q defined twice", pos[0])
			}
		}
		s.Variants = append(s.Variants, Variant{Name: pos[0], Props: kv, Expect: map[string]Expectation{}})
	case "expect":
		if len(pos) != 1 {
			return fmt.Errorf("expect: want 'expect VARIANT checker=ok|bug|permitted|violation|any ...'")
		}
		var v *Variant
		for i := range s.Variants {
			if s.Variants[i].Name == pos[0] {
				v = &s.Variants[i]
			}
		}
		if v == nil {
			return fmt.Errorf("expect: unknown variant %q (define it with a 'variant' line first)", pos[0])
		}
		for c, e := range kv {
			if !contains(Checkers, c) {
				return fmt.Errorf("expect: unknown checker %q (allowed: %s)", c, strings.Join(Checkers, ", "))
			}
			if !containsE(expectations, Expectation(e)) {
				return fmt.Errorf("expect %s=%q: allowed: ok, bug, permitted, violation, any", c, e)
			}
			v.Expect[c] = Expectation(e)
		}
	}
	return nil
}

// endPhaseUsage is the 'end-phase' header line's syntax, for errors.
const endPhaseUsage = "want 'end-phase heal' (the default: the end phase restores every cut link), 'end-phase keep-cuts' " +
	"(every link the script's cut and partition steps cut stays cut through the liveness phase and the final reads) or " +
	"'end-phase keep-cuts=A,B,...' (only the cut links between two of the named nodes stay cut)"

// endPhaseLine parses 'end-phase heal|keep-cuts|keep-cuts=A,B,...'; the
// names are checked against the cluster and the steps in validate.go.
func (s *Script) endPhaseLine(kv map[string]string, pos []string) error {
	between, named := kv["keep-cuts"]
	switch {
	case len(kv) == 0 && len(pos) == 1 && pos[0] == "heal":
		s.KeepCuts, s.KeepCutsBetween = false, nil
	case len(kv) == 0 && len(pos) == 1 && pos[0] == "keep-cuts":
		s.KeepCuts, s.KeepCutsBetween = true, nil
	case len(kv) == 1 && len(pos) == 0 && named:
		names := strings.Split(between, ",")
		for i, n := range names {
			if n == "" {
				return fmt.Errorf("end-phase keep-cuts=%q: an empty node name; %s", between, endPhaseUsage)
			}
			if slices.Contains(names[:i], n) {
				return fmt.Errorf("end-phase keep-cuts=%q: %s named twice", between, n)
			}
		}
		if len(names) < 2 {
			return fmt.Errorf("end-phase keep-cuts=%q: a cut is between two nodes, name at least two (or write 'end-phase keep-cuts' to keep every cut)", between)
		}
		s.KeepCuts, s.KeepCutsBetween = true, names
	default:
		return fmt.Errorf("end-phase: %s", endPhaseUsage)
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func containsE(xs []Expectation, x Expectation) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func parseStep(line int, word string, rest []string, kv map[string]string, pos []string) (Step, error) {
	st := Step{Line: line, Op: word, Args: pos, KV: kv}
	need := func(n int, usage string) error {
		if len(pos) != n {
			return fmt.Errorf("%s: want '%s'", word, usage)
		}
		return nil
	}
	var err error
	switch word {
	case "run":
		if err = need(1, "run DURATION"); err == nil {
			st.Dur, err = ParseDuration(pos[0])
		}
	case "produce":
		if err = need(3, "produce CLIENT TOPIC/PARTITION VALUE [acks=all] [timeout=30s] [key=K]"); err == nil {
			if _, _, ok := strings.Cut(pos[1], "/"); !ok {
				err = fmt.Errorf("produce: %q: want TOPIC/PARTITION, e.g. t/0", pos[1])
			}
		}
		if a, ok := kv["acks"]; ok && err == nil && a != "all" && a != "-1" && a != "1" && a != "0" && !strings.HasPrefix(a, "$") {
			err = fmt.Errorf("produce: acks=%q: allowed 0, 1, -1, all", a)
		}
	case "await":
		if len(pos) < 2 {
			err = fmt.Errorf("await: want 'await CLIENT ack VALUE' or 'await NODE KIND [field=value ...]'")
		}
		st.Dur = 60 * sim.Second
		if w, ok := kv["within"]; ok && err == nil {
			st.Dur, err = ParseDuration(w)
			delete(kv, "within")
		}
		if err == nil && pos[1] == "txn" && (len(pos) != 3 || (pos[2] != "ok" && pos[2] != "done")) {
			err = fmt.Errorf("await: want 'await PRODUCER txn ok' (the last init-txn, commit or abort succeeded) or 'await PRODUCER txn done' (any outcome)")
		}
		if err == nil && (pos[1] == "ack" || pos[1] == "done") && len(pos) != 3 {
			err = fmt.Errorf("await: want 'await CLIENT %s VALUE'", pos[1])
		}
	case "crash", "power-loss", "restart", "shutdown", "wipe-disk":
		err = need(1, word+" BROKER")
	case "add-controller", "remove-controller":
		err = need(1, word+" CONTROLLER")
	case "restart-all", "heal":
		err = need(0, word)
	case "pause":
		if err = need(2, "pause BROKER DURATION"); err == nil {
			st.Dur, err = ParseDuration(pos[1])
		}
	case "cut":
		if err = need(3, "cut A -> B  or  cut A <-> B"); err == nil && pos[1] != "->" && pos[1] != "<->" {
			err = fmt.Errorf("cut: %q: want -> or <->", pos[1])
		}
	case "partition":
		if len(pos) < 3 {
			err = fmt.Errorf("partition: want 'partition A,B | C,D'")
		}
	case "producer":
		err = need(1, "producer NAME [producer property=value ...]")
	case "send":
		err = need(3, "send PRODUCER TOPIC/PARTITION COUNT [interval=DUR] [key=K]")
	case "alter-config":
		if len(pos) != 2 || pos[0] != "topic" || len(kv) == 0 {
			err = fmt.Errorf("alter-config: want 'alter-config topic NAME property=value ...' (a topic's configs, e.g. unclean.leader.election.enable=true; only topics can be altered)")
		}
	case "lossy":
		if err = need(3, "lossy A <-> B drop=P duplicate=P reorder=P  (A or B may be *: every broker)"); err == nil && pos[1] != "->" && pos[1] != "<->" {
			err = fmt.Errorf("lossy: %q: want -> or <->", pos[1])
		}
	case "swarm":
		if err = need(1, "swarm DURATION [clients=N interval=DUR fault-every=DUR crash=P power-loss=P pause=P partition=P heal=P consumer-crash=P consumer-stall=P consumer-pause=P wipe-disk=P profile=swarm|fixed] [producer property=value ...]"); err == nil {
			st.Dur, err = ParseDuration(pos[0])
		}
	case "leader-and-isr":
		if len(pos) != 1 || kv["leader"] == "" || kv["epoch"] == "" || kv["isr"] == "" {
			err = fmt.Errorf("leader-and-isr: want 'leader-and-isr TOPIC/P leader=bN epoch=N isr=bA,bB [to=bA,bB]'")
		}
	case "consumer", "kill-consumer", "restart-consumer", "close-consumer", "crash-coordinator", "share-consumer":
		err = need(1, consumerUsage[word])
	case "init-txn", "begin", "commit", "abort":
		err = need(1, word+" PRODUCER")
	case "delay":
		if err = need(4, "delay A -> B DURATION [overtaken=true]  or  delay A <-> B DURATION  (0s: no more delay)"); err == nil {
			if pos[1] != "->" && pos[1] != "<->" {
				err = fmt.Errorf("delay: %q: want -> or <->", pos[1])
			} else if v, ok := st.KV["overtaken"]; ok && v != "true" && v != "false" {
				err = fmt.Errorf("delay: overtaken=%q: allowed true, false", v)
			} else {
				st.Dur, err = ParseDuration(pos[3])
			}
		}
	default:
		err = fmt.Errorf("unknown step %q (allowed: run, produce, await, crash, power-loss, shutdown, restart, restart-all, pause, cut, partition, heal, leader-and-isr, swarm, producer, send, lossy, consumer, kill-consumer, restart-consumer, close-consumer, crash-coordinator, share-consumer, init-txn, begin, commit, abort, delay, alter-config)", word)
	}
	return st, err
}

// consumerUsage is each consumer step's syntax, for parse errors.
var consumerUsage = map[string]string{
	"consumer":          "consumer NAME group.id=G topic=T [pattern=at-least-once|at-most-once|idempotent-sink|auto|consume-transform-produce output=TOPIC [transactional.id=ID]] [poll=DUR] [process=DUR] [commit-delay=DUR] [consumer property=value ...]",
	"kill-consumer":     "kill-consumer NAME [close=true|false]",
	"restart-consumer":  "restart-consumer NAME [group.protocol=classic|consumer]",
	"close-consumer":    "close-consumer NAME",
	"crash-coordinator": "crash-coordinator GROUP",
	"share-consumer":    "share-consumer NAME group.id=G topic=T [poll=DUR] [process=DUR] [release=V,...] [reject=V,...] [share.acknowledgement.mode=implicit|explicit] [consumer property=value ...]",
}

// ParseStep parses one step line on its own, as serve mode's live
// commands are ("crash b1", "partition b0 | b1,b2"); header keywords are
// not steps.
func ParseStep(text string) (Step, error) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return Step{}, fmt.Errorf("empty step")
	}
	word, rest := fields[0], fields[1:]
	if contains(headerKeywords, word) {
		return Step{}, fmt.Errorf("%q is a header keyword, not a step", word)
	}
	if !contains(stepWords, word) {
		return Step{}, fmt.Errorf("unknown step %q", word)
	}
	kv, pos, err := splitKV(rest)
	if err != nil {
		return Step{}, err
	}
	return parseStep(0, word, rest, kv, pos)
}
