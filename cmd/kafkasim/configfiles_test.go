package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config/catalog"
)

// writeProps writes a properties file into dir and returns its path.
func writeProps(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// kafkaShapedServer is a server.properties laid out as Kafka ships one
// (comment blocks, banners, commented-out settings), in our own words,
// holding properties kafkasim models and others it accepts without
// modelling them (listeners, the thread counts, the socket buffers).
const kafkaShapedServer = `# Settings of one broker, shaped like the file Kafka ships in config/.
# Read the documentation of each property before changing it.

############################# Server Basics #############################

# The id of the broker. It must be unique in the cluster.
broker.id=0

############################# Socket Server Settings #############################

# Where the broker listens, as listener_name://host:port.
listeners=PLAINTEXT://:9092
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600

############################# Log Basics #############################

# Directories (comma separated) where the broker keeps its log segments.
log.dirs=/tmp/kafka-logs

# Partitions of a topic created without a count.
num.partitions=1

############################# Internal Topic Settings  #############################
# Above 1 in production (3, say) for availability.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1

############################# Log Flush Policy #############################

#log.flush.interval.messages=10000
#log.flush.interval.ms=1000

############################# Log Retention Policy #############################

log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000

############################# Zookeeper #############################

zookeeper.connect=localhost:2181
zookeeper.session.timeout.ms=18000

############################# Group Coordinator Settings #############################

group.initial.rebalance.delay.ms=0
`

// runJSON runs a command with -json and returns its runs' objects.
func runJSON(t *testing.T, args ...string) ([]map[string]any, string) {
	t.Helper()
	code, out, errb := runCmd(append(args, "-json")...)
	if code != 0 && code != 1 {
		t.Fatalf("%v: exit %d\n%s%s", args, code, out, errb)
	}
	var runs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%v: %v in %q", args, err, l)
		}
		runs = append(runs, m)
	}
	return runs, errb
}

func TestKafkaShapedServerProperties(t *testing.T) {
	dir := t.TempDir()
	server := writeProps(t, dir, "server.properties", kafkaShapedServer)
	runs, errb := runJSON(t, "run", "-scenario", "acks1-leader-crash", "-variant", "acks1", "-config", server)
	if errb != "" {
		t.Errorf("stderr %q, want nothing", errb)
	}
	replay := runs[0]["replay"].(string)
	if !strings.HasSuffix(replay, " -config "+server) || strings.Contains(replay, "-set") {
		t.Errorf("replay %q: want the file named, not its keys as -set", replay)
	}
	got := fmt.Sprint(runs[0]["not_modelled"])
	for _, want := range []string{"listeners=PLAINTEXT://:9092", "num.network.threads=3", "num.io.threads=8", "socket.request.max.bytes=104857600"} {
		if !strings.Contains(got, want) {
			t.Errorf("not_modelled %s lacks %q", got, want)
		}
	}
	for _, modelled := range []string{"log.dirs", "offsets.topic.replication.factor", "log.retention.hours"} {
		if strings.Contains(got, modelled+"=") {
			t.Errorf("not_modelled %s lists %s, which kafkasim models", got, modelled)
		}
	}
}

// TestConfigFileBadInputExitsTwo: every bad file exits 2 before a run,
// naming the file and line (and, for a key of the wrong kind, the flag
// to use), with nothing on standard output.
func TestConfigFileBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, flag, text string
		want             []string
	}{
		{"malformed unicode escape", "-config", "# fine\nmin.insync.replicas=1\nbroker.rack=r\\u00G1\n", []string{"server.properties:3: malformed \\uxxxx escape \\u00G1"}},
		{"unknown broker key", "-config", "\n\nno.such.property=1\n", []string{"server.properties:3: no.such.property is not a broker property"}},
		{"producer key in a server file", "-config", "acks=all\n", []string{"server.properties:1: acks is not a broker property", "a producer property: give its file with -producer-config"}},
		{"broker key in a producer file", "-producer-config", "acks=all\nmin.insync.replicas=2\n", []string{"server.properties:2: min.insync.replicas is not a producer property", "a broker property: give its file with -config"}},
		{"bad value", "-config", "# the ISR floor\n\nmin.insync.replicas=two\n", []string{"server.properties:3: config: min.insync.replicas = \"two\": not an integer"}},
		{"bad producer value", "-producer-config", "acks=maybe\n", []string{"server.properties:1: config: producer.acks = \"maybe\""}},
		{"conflict with the scenario", "-config", "min.insync.replicas=7\n", []string{"server.properties:1: topic t: config: min.insync.replicas = 7 conflicts with replication factor = 2"}},
		{"value without a key", "-config", "=1\n", []string{"server.properties:1: a value without a key"}},
	} {
		p := writeProps(t, dir, "server.properties", c.text)
		code, out, errb := runCmd("run", "-scenario", "acks1-leader-crash", c.flag, p)
		if code != 2 || out != "" {
			t.Errorf("%s: exit %d, stdout %q; want 2 and nothing", c.name, code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(errb, filepath.Join(dir, w)) && !strings.Contains(errb, w) {
				t.Errorf("%s: stderr %q lacks %q", c.name, errb, w)
			}
		}
		if !strings.Contains(errb, p+":") {
			t.Errorf("%s: stderr %q does not name %s:LINE", c.name, errb, p)
		}
	}
	missing := filepath.Join(dir, "nope.properties")
	code, out, errb := runCmd("run", "-scenario", "acks1-leader-crash", "-consumer-config", missing)
	if code != 2 || out != "" || !strings.Contains(errb, "-consumer-config "+missing+": cannot read it: no such file or directory") {
		t.Errorf("a missing file: exit %d, stdout %q, stderr %q", code, out, errb)
	}
	if code, _, errb := runCmd("replay", "-tape", missing, "-config", missing); code != 2 || !strings.Contains(errb, "leave out") {
		t.Errorf("replay -tape with -config: exit %d, %q", code, errb)
	}
}

// TestConfigFilePrecedence: files in flag order, -set over them; every
// override of a file's value is said on stderr, and a key given twice in
// one file too.
func TestConfigFilePrecedence(t *testing.T) {
	dir := t.TempDir()
	a := writeProps(t, dir, "a.properties", "replica.lag.time.max.ms=11000\nlog.flush.interval.messages=7\nmin.insync.replicas=2\n")
	b := writeProps(t, dir, "b.properties", "# later\nreplica.lag.time.max.ms=12000\nunclean.leader.election.enable=false\nunclean.leader.election.enable=true\n")
	p := writeProps(t, dir, "p.properties", "acks=1\nlinger.ms=5\n")
	runs, errb := runJSON(t, "run", "-scenario", "acks1-leader-crash", "-variant", "acks1", "-config", a, "-producer-config", p, "-config", b,
		"-set", "min.insync.replicas=1", "-set", "acks=all")
	want := []string{
		"kafkasim run: " + b + ": unclean.leader.election.enable given twice, line 3 and line 4: line 4 wins\n",
		"kafkasim run: replica.lag.time.max.ms=11000 from " + a + ":1 is overridden by replica.lag.time.max.ms=12000 from " + b + ":2\n",
		"kafkasim run: acks=1 from " + p + ":1 is overridden by -set acks=all\n",
		"kafkasim run: min.insync.replicas=2 from " + a + ":3 is overridden by -set min.insync.replicas=1\n",
	}
	if got := strings.Join(want, ""); errb != got {
		t.Errorf("stderr\n%s\nwant\n%s", errb, got)
	}
	replay := runs[0]["replay"].(string)
	// The files in their order, and only the -set pairs that won over
	// them.
	if want := "-seed 1 -set acks=all -set min.insync.replicas=1 -config " + a + " -producer-config " + p + " -config " + b; !strings.HasSuffix(replay, want) {
		t.Errorf("replay %q, want it to end %q", replay, want)
	}
}

// TestConfigFileReplayReproduces: the printed replay command names the
// file (not its keys as -set) and repeats the run: same trace hash. The
// file must change the run (else the test proves nothing).
func TestConfigFileReplayReproduces(t *testing.T) {
	dir := t.TempDir()
	server := writeProps(t, dir, "server.properties", "# a slower ISR shrink\nreplica.lag.time.max.ms=10001\n")
	args := []string{"run", "-scenario", "kip101-hw-lag", "-variant", "hw"}
	plain, _ := runJSON(t, args...)
	withFile, _ := runJSON(t, append(args, "-set", "min.insync.replicas=1", "-config", server)...)
	if plain[0]["trace_hash"] == withFile[0]["trace_hash"] {
		t.Fatalf("the file does not change the run (trace %v): pick another property", plain[0]["trace_hash"])
	}
	replay := withFile[0]["replay"].(string)
	if !strings.HasSuffix(replay, " -config "+server) || strings.Contains(replay, "replica.lag.time.max.ms") || !strings.Contains(replay, "-set min.insync.replicas=1") {
		t.Fatalf("replay %q: want -set min.insync.replicas=1 and -config %s, not the file's keys", replay, server)
	}
	again := append([]string{"run"}, strings.Fields(strings.TrimPrefix(replay, "kafkasim replay "))...)
	replayed, _ := runJSON(t, again...)
	if replayed[0]["trace_hash"] != withFile[0]["trace_hash"] {
		t.Errorf("replay %q: trace %v, the run with -config %v", replay, replayed[0]["trace_hash"], withFile[0]["trace_hash"])
	}
}

// TestKRaftFileUnderAManualControllerScenario: Kafka's combined-mode file
// under a ZooKeeper-harness scenario exits 2 at the file's process.roles
// line, saying what runs instead; Kafka 4.x's controller file under a
// scenario of 3.9 variants says how to name a release.
func TestKRaftFileUnderAManualControllerScenario(t *testing.T) {
	dir := t.TempDir()
	f := writeProps(t, dir, "server.properties", "process.roles=broker,controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:9093\n")
	code, _, errb := runCmd("run", "-scenario", "acks1-leader-crash", "-config", f)
	if code != 2 || !strings.Contains(errb, f+":1: config: process.roles = broker,controller conflicts with the scenario's manual controller") {
		t.Errorf("exit %d, stderr %q", code, errb)
	}
	c := writeProps(t, dir, "controller.properties", "process.roles=controller\nshare.coordinator.state.topic.min.isr=1\n")
	code, _, errb = runCmd("run", "-scenario", "controller-failover", "-config", c)
	if code != 2 || !strings.Contains(errb, "not a broker property of Kafka 3.9 (the releases that have it: 4.0 to 4.1)") ||
		!strings.Contains(errb, "name it, e.g. -set inter.broker.protocol.version=4.0") {
		t.Errorf("exit %d, stderr %q", code, errb)
	}
	if code, _, errb = runCmd("run", "-scenario", "controller-failover", "-variant", "kraft", "-seed", "1", "-set", "inter.broker.protocol.version=4.1", "-config", c); code != 0 {
		t.Errorf("under 4.1: exit %d, stderr %q", code, errb)
	}
}

// TestEveryCommandTakesConfigFiles: each command that runs a scenario
// takes the three flags; a bad file exits 2 at file:line before anything
// is written, and a good file's values reach what the command records
// (replay commands, runs.jsonl, the tape).
func TestEveryCommandTakesConfigFiles(t *testing.T) {
	dir := t.TempDir()
	good := writeProps(t, dir, "good.properties", "# harmless here\nzookeeper.connect=localhost:2181\nnum.replica.fetchers=2\n")
	bad := writeProps(t, dir, "bad.properties", "zookeeper.connect=localhost:2181\nno.such.property=1\n")
	producer := writeProps(t, dir, "producer.properties", "linger.ms=0\n")
	consumer := writeProps(t, dir, "consumer.properties", "fetch.min.bytes=1\n")
	const carried = "zookeeper.connect=localhost:2181"
	for _, c := range []struct {
		cmd  string
		args []string
		// written is the file or directory the command writes (relative
		// to its own directory), where the good file's values must show.
		written string
	}{
		{"run", []string{"-scenario", "acks1-leader-crash", "-variant", "acks1", "-json"}, ""},
		{"replay", []string{"-scenario", "acks1-leader-crash", "-variant", "acks1", "-json"}, ""},
		{"suite", []string{"-run", "^acks1-leader-crash/acks1$", "-seeds", "1", "-progress", "none", "-json"}, ""},
		{"sweep", []string{"-scenario", "acks1-leader-crash", "-grid", "unclean.leader.election.enable=false", "-seeds", "1", "-progress", "none", "-out", "OUT"}, "OUT/runs.jsonl"},
		{"matrix", []string{"-scenario", "acks1-leader-crash", "-versions", "2.8", "-seeds", "1", "-progress", "none", "-out", "OUT"}, "OUT/runs.jsonl"},
		{"explore", []string{"-scenario", "kip101-hw-lag", "-variant", "hw", "-depth", "2", "-max-runs", "2", "-progress", "none", "-save", "OUT.choices"}, ""},
		{"shrink", []string{"-scenario", "kip101-hw-lag", "-variant", "hw", "-max-runs", "2", "-progress", "none", "-save", "OUT.choices"}, ""},
		{"serve", []string{"-listen", "127.0.0.1:0", "-speed", "100", "-tape", "OUT.tape"}, "OUT.tape"},
	} {
		for _, file := range []string{bad, good} {
			cdir := filepath.Join(dir, c.cmd+"-"+filepath.Base(file))
			if err := os.Mkdir(cdir, 0o755); err != nil {
				t.Fatal(err)
			}
			args := []string{c.cmd}
			for _, a := range c.args {
				args = append(args, strings.Replace(a, "OUT", filepath.Join(cdir, "out"), 1))
			}
			args = append(args, "-config", file, "-producer-config", producer, "-consumer-config", consumer)
			if c.cmd == "serve" {
				prev := stdin
				stdin = strings.NewReader("stop\n")
				defer func() { stdin = prev }()
			}
			code, out, errb := runCmd(args...)
			if file == bad {
				if code != 2 || !strings.Contains(errb, bad+":2: no.such.property is not a broker property") {
					t.Errorf("%s with a bad file: exit %d, stderr %q; want 2 and %s:2", c.cmd, code, errb, bad)
				}
				if entries, _ := os.ReadDir(cdir); len(entries) > 0 || out != "" {
					t.Errorf("%s with a bad file wrote %d files and %q", c.cmd, len(entries), out)
				}
				continue
			}
			if code == 2 || strings.Contains(errb, "flag provided but not defined") {
				t.Errorf("%s with good files: exit %d\n%s\n%s", c.cmd, code, lastLines(out, 10), errb)
				continue
			}
			text := out
			if c.written != "" {
				data, err := os.ReadFile(filepath.Join(cdir, strings.Replace(c.written, "OUT", "out", 1)))
				if err != nil {
					t.Errorf("%s: %v", c.cmd, err)
				}
				text = string(data)
			}
			want := carried
			if c.cmd == "serve" {
				want = `"zookeeper.connect":"localhost:2181"` // the tape's header, JSON
			}
			if c.cmd != "explore" && !strings.Contains(text, want) { // explore finds nothing at depth 2: no replay line
				t.Errorf("%s: %q is not recorded in\n%s", c.cmd, want, lastLines(text, 10))
			}
		}
	}
}

// TestGridAndReleaseWinOverFiles: sweep's -grid and a matrix's release are
// layered over the files (and -set), saying so; runs.jsonl records what
// ran.
func TestGridAndReleaseWinOverFiles(t *testing.T) {
	dir := t.TempDir()
	server := writeProps(t, dir, "server.properties", "unclean.leader.election.enable=true\ninter.broker.protocol.version=3.9\n")
	producer := writeProps(t, dir, "producer.properties", "acks=1\n")
	out := filepath.Join(dir, "sweep")
	code, stdout, errb := runCmd("sweep", "-scenario", "acks1-leader-crash", "-config", server, "-producer-config", producer,
		"-grid", "unclean.leader.election.enable=false", "-grid", "acks=all", "-seeds", "1", "-progress", "none", "-out", out)
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s%s", code, stdout, errb)
	}
	for _, w := range []string{
		"kafkasim sweep: unclean.leader.election.enable=true from " + server + ":1 is overridden by -grid unclean.leader.election.enable=false\n",
		"kafkasim sweep: acks=1 from " + producer + ":1 is overridden by -grid acks=all\n",
	} {
		if !strings.Contains(errb, w) {
			t.Errorf("stderr %q lacks %q", errb, w)
		}
	}
	runs, err := os.ReadFile(filepath.Join(out, "runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(runs); !strings.Contains(s, "-set unclean.leader.election.enable=false") || strings.Contains(s, "producer.acks") ||
		!strings.Contains(s, "-set inter.broker.protocol.version=3.9") {
		t.Errorf("runs.jsonl does not record the grid over the files:\n%s", s)
	}
	spec, _ := os.ReadFile(filepath.Join(out, "sweep.json"))
	if !strings.Contains(string(spec), `"producer.acks": "1"`) {
		t.Errorf("sweep.json lacks the files' values:\n%s", spec)
	}

	out = filepath.Join(dir, "matrix")
	code, stdout, errb = runCmd("matrix", "-scenario", "acks1-leader-crash", "-config", server, "-versions", "2.8", "-seeds", "1", "-progress", "none", "-out", out)
	if code != 0 {
		t.Fatalf("matrix: exit %d\n%s%s", code, stdout, errb)
	}
	if w := "kafkasim matrix: inter.broker.protocol.version=3.9 from " + server + ":2 is overridden by -versions 2.8 (inter.broker.protocol.version=2.8)\n"; !strings.Contains(errb, w) {
		t.Errorf("stderr %q lacks %q", errb, w)
	}
	runs, _ = os.ReadFile(filepath.Join(out, "runs.jsonl"))
	if s := string(runs); !strings.Contains(s, "-set inter.broker.protocol.version=2.8") || !strings.Contains(s, "-set unclean.leader.election.enable=true") {
		t.Errorf("matrix runs.jsonl does not record the release over the files:\n%s", s)
	}
}

// TestServerFileKeyOfTheClientsIsIgnored: a broker property kafkasim does
// not model that it models for a client (a name both sides use) must not
// reach the client from a server file.
func TestServerFileKeyOfTheClientsIsIgnored(t *testing.T) {
	key := ""
	for _, r := range catalog.Releases() {
		for _, n := range catalog.Names(catalog.Broker, r) {
			if key == "" && reachesClients(catalog.Broker, n) {
				key = n
			}
		}
	}
	if key == "" {
		t.Skipf("no broker property of the catalog (%s) is one kafkasim models only for a client or topic", catalog.Source)
	}
	dir := t.TempDir()
	server := writeProps(t, dir, "server.properties", key+"=1\n")
	runs, errb := runJSON(t, "run", "-scenario", "acks1-leader-crash", "-variant", "acks1", "-config", server)
	if !strings.Contains(errb, server+":1: "+key+" is a broker property kafkasim does not model: ignored") {
		t.Errorf("stderr %q: no note for %s", errb, key)
	}
	if replay := runs[0]["replay"].(string); strings.Contains(replay, key) {
		t.Errorf("replay %q carries %s to the clients", replay, key)
	}
}

// TestControllerPropertiesFile: Kafka's config/kraft/controller.properties
// describes a dedicated controller; as -config it applies its properties,
// keeps the scenario's roles and says so, and its node identity
// (node.id, listeners) is accepted, not modelled.
func TestControllerPropertiesFile(t *testing.T) {
	dir := t.TempDir()
	f := writeProps(t, dir, "controller.properties", "# a dedicated controller\nprocess.roles=controller\nnode.id=1\ncontroller.quorum.bootstrap.servers=localhost:9093\nlisteners=CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\nlog.dirs=/tmp/kraft-controller-logs\n")
	runs, errb := runJSON(t, "run", "-scenario", "kraft-controller-failover", "-config", f)
	if !strings.Contains(errb, f+":2: process.roles=controller: the file describes a dedicated controller") {
		t.Errorf("stderr %q lacks the note at %s:2", errb, f)
	}
	for _, r := range runs {
		if got := fmt.Sprint(r["not_modelled"]); !strings.Contains(got, "node.id=1") || !strings.Contains(got, "listeners=CONTROLLER://:9093") {
			t.Errorf("%v: not_modelled %s", r["variant"], got)
		}
		if strings.Contains(fmt.Sprint(r["config"]), "process.roles=controller") {
			t.Errorf("%v: the run took the file's process.roles: %v", r["variant"], r["config"])
		}
	}
}
