package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestServeCommandLine: serve prints its listeners and "ready", answers
// live commands from standard input, prints the verdicts at stop, and its
// tape replays to the same trace hash.
func TestServeCommandLine(t *testing.T) {
	dir := t.TempDir()
	tape, hist := filepath.Join(dir, "served.tape"), filepath.Join(dir, "served.history")
	prev := stdin
	stdin = strings.NewReader("status\ncrash b1\nexplode\nstop\n")
	defer func() { stdin = prev }()
	code, out, errb := runCmd("serve", "-listen", "127.0.0.1:0", "-speed", "100", "-tape", tape, "-history", hist)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	for _, want := range []string{"b0 listening on 127.0.0.1:", "b2 listening on", "\nready\n", "t/0 leader=", "\nok\n",
		`unknown command "explode"`, "stopping", "acked-loss       ok", "scenario cluster, variant default, seed 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	trace := regexp.MustCompile(`trace [0-9a-f]{16}`).FindString(out)
	if trace == "" {
		t.Fatalf("no trace hash in\n%s", out)
	}
	for i := 0; i < 2; i++ {
		code, rout, rerr := runCmd("replay", "-tape", tape)
		if code != 0 || !strings.Contains(rout, trace) {
			t.Fatalf("replay -tape: exit %d, want %s in\n%s\n%s", code, trace, lastLines(rout, 15), rerr)
		}
	}
	if code, cout, cerr := runCmd("check", "-history", hist); code != 0 {
		t.Fatalf("check -history of the served run: exit %d\n%s\n%s", code, cout, cerr)
	}
}

// TestServeMaxMemory: a server past -max-memory stops as at a stop
// command, prints its verdicts and why it stopped, exits 4, and its tape
// replays to the same trace hash.
func TestServeMaxMemory(t *testing.T) {
	tape := filepath.Join(t.TempDir(), "served.tape")
	prev := stdin
	stdin = strings.NewReader("") // no stop: the bound stops it
	defer func() { stdin = prev }()
	code, out, errb := runCmd("serve", "-listen", "127.0.0.1:0", "-speed", "100", "-tape", tape, "-max-memory", "1MiB")
	if code != 4 {
		t.Fatalf("exit %d, want 4\n%s\n%s", code, out, errb)
	}
	for _, want := range []string{"past three quarters of -max-memory 1 MiB: stopping", "\nstopping\n", "acked-loss       ok", "RUN FAILED: stopped at -max-memory: "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	trace := regexp.MustCompile(`trace [0-9a-f]{16}`).FindString(out)
	if code, rout, rerr := runCmd("replay", "-tape", tape); code != 0 || trace == "" || !strings.Contains(rout, trace) {
		t.Fatalf("replay -tape: exit %d, want 0 and %q in\n%s\n%s", code, trace, lastLines(rout, 15), rerr)
	}
}

func TestParseMemory(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "512": 512 << 20, "512MiB": 512 << 20, "8GiB": 8 << 30, " 3 GiB ": 3 << 30, "64KiB": 64 << 10} {
		if got, err := parseMemory(in); err != nil || got != want {
			t.Errorf("parseMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "8GB", "lots", "-1", "1.5GiB", "99999999999GiB"} {
		if _, err := parseMemory(in); err == nil {
			t.Errorf("parseMemory(%q): no error", in)
		}
	}
}

func TestServeBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-speed", "0"}, "-speed 0: must be above 0"},
		{[]string{"-speed", "-2"}, "must be above 0"},
		{[]string{"-listen", "nohost"}, "want HOST:PORT"},
		{[]string{"-scenario", "nope"}, "nope"},
		{[]string{"-variant", "nope"}, "nope"},
		{[]string{"-set", "acks=7"}, "acks"},
		{[]string{"-tape", "/no/such/dir/x.tape"}, "does not exist"},
		{[]string{"-tape", os.TempDir()}, "is a directory"},
		{[]string{"-history", os.TempDir()}, "is a directory"},
		{[]string{"-faults", ""}, `-faults "": empty: want a named profile (default, failover, network)`},
		{[]string{"-faults", "chaos"}, `"chaos" is no named profile`},
		{[]string{"-faults", "crash=0.5,bogus=1"}, `unknown key "bogus": want a named profile (default, failover, network) and/or KEY=VALUE words separated by spaces or commas; keys: crash, power-loss, pause, partition, heal`},
		{[]string{"-faults", "crash=2"}, `crash="2": want a chance in [0,1]`},
		{[]string{"-faults", "default fault-every=soon"}, `fault-every="soon": want a duration of virtual time`},
		{[]string{"-faults", "heal=1"}, "injects nothing"},
		{[]string{"-max-memory", "lots"}, `-max-memory "lots": want a size such as 8GiB`},
		{[]string{"-max-memory", "-1GiB"}, "want a size"},
	} {
		code, _, errb := runCmd(append([]string{"serve"}, c.args...)...)
		if code != 2 || !strings.Contains(errb, c.want) {
			t.Errorf("serve %v: exit %d, stderr %q, want exit 2 and %q", c.args, code, errb, c.want)
		}
	}
	code, _, errb := runCmd("replay", "-tape", "/no/such.tape")
	if code != 2 || !strings.Contains(errb, "no such file") {
		t.Errorf("replay -tape of a missing file: exit %d, %q", code, errb)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// stopAfter is standard input that runs do, then types lines and stop.
type stopAfter struct {
	do    func()
	lines string
	done  bool
}

func (s *stopAfter) Read(p []byte) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	s.done = true
	s.do()
	return copy(p, s.lines+"stop\n"), nil
}

// TestServeDefaultTape: without -tape, serve records its tape into a
// temporary file and prints the command that replays it; that command
// reruns the served run to the same trace hash. A -history that cannot be
// written (its directory went away) is reported after the verdicts, with
// exit 2, and costs the tape nothing.
func TestServeDefaultTape(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	histDir := filepath.Join(tmp, "gone")
	if err := os.Mkdir(histDir, 0o755); err != nil {
		t.Fatal(err)
	}
	hist := filepath.Join(histDir, "served.history")
	prev := stdin
	stdin = &stopAfter{do: func() { os.RemoveAll(histDir) }, lines: "crash b1\nrestart b1\n"}
	defer func() { stdin = prev }()
	code, out, errb := runCmd("serve", "-listen", "127.0.0.1:0", "-speed", "100", "-history", hist)
	if code != 2 {
		t.Fatalf("exit %d, want 2 (the history could not be written)\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(out, "acked-loss       ok") {
		t.Errorf("the verdicts were not printed:\n%s", out)
	}
	if !strings.Contains(errb, "writing the history to "+hist) || !strings.Contains(errb, "the verdicts above stand") {
		t.Errorf("the failed -history write is not reported:\n%s", errb)
	}
	m := regexp.MustCompile(`saved the tape to (\S+) \((kafkasim replay -tape \S+)\)`).FindStringSubmatch(errb)
	if m == nil || !strings.HasPrefix(m[1], tmp) || !strings.Contains(errb, "recording the tape to "+m[1]) {
		t.Fatalf("no temporary tape named in\n%s", errb)
	}
	trace := regexp.MustCompile(`trace [0-9a-f]{16}`).FindString(out)
	args := strings.Fields(m[2])[1:] // the printed command, without "kafkasim"
	code, rout, rerr := runCmd(args...)
	if code != 0 || trace == "" || !strings.Contains(rout, trace) {
		t.Fatalf("%s: exit %d, want %q in\n%s\n%s", m[2], code, trace, lastLines(rout, 15), rerr)
	}
}

// TestServeTapeWriteFails: a tape that cannot be written (its directory
// went away during the run) does not hide the verdicts: they are printed,
// then the failed write, with exit 2.
func TestServeTapeWriteFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tape := filepath.Join(dir, "served.tape")
	prev := stdin
	stdin = &stopAfter{do: func() { os.RemoveAll(dir) }}
	defer func() { stdin = prev }()
	code, out, errb := runCmd("serve", "-listen", "127.0.0.1:0", "-speed", "100", "-tape", tape)
	if code != 2 || !strings.Contains(out, "acked-loss       ok") || !strings.Contains(errb, "writing the tape to "+tape) || strings.Contains(errb, "saved the tape") {
		t.Fatalf("exit %d, want 2 with the verdicts and the failed tape\n%s\n%s", code, out, errb)
	}
}

// faultLines are the "fault ..." lines of a served or replayed run's
// output.
func faultLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "fault ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestServeFaultsCommandLine: serve -faults prints the schedule once
// ready, each fault as it is injected, the faults so far in status, and
// how many of each at stop, before the verdicts, whose profile line names
// the schedule; the tape names the profile, and replay -tape prints the
// same faults at the same virtual times and ends with the same trace hash,
// twice.
func TestServeFaultsCommandLine(t *testing.T) {
	tape := filepath.Join(t.TempDir(), "served.tape")
	prev := stdin
	stdin = &stopAfter{do: func() { time.Sleep(1500 * time.Millisecond) }, lines: "status\n"}
	defer func() { stdin = prev }()
	code, out, errb := runCmd("serve", "-listen", "127.0.0.1:0", "-speed", "50", "-faults", "failover,fault-every=1s", "-tape", tape)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	for _, want := range []string{"\nready\nfaults from ", "fault-every=1s crash=0.5 power-loss=0 pause=0 partition=0 heal=0 restart=1 profile=fixed (a draw every 1.000s of virtual time, about a fault every 2.000s)",
		"\nfaults: ", " so far (crash ", "injected while serving (crash ", "profile: faults fault-every=1s crash=0.5 "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	served := faultLines(out)
	if len(served) < 5 {
		t.Fatalf("%d faults printed in 75 virtual seconds, want 5 or more:\n%s", len(served), out)
	}
	if !regexp.MustCompile(`^fault \d+\.\d{3}s: (crash|restart) b\d`).MatchString(served[0]) {
		t.Errorf("the first fault line is %q, want fault TIME: crash bN or restart bN", served[0])
	}
	trace := regexp.MustCompile(`trace [0-9a-f]{16}`).FindString(out)
	for i := 0; i < 2; i++ {
		code, rout, rerr := runCmd("replay", "-tape", tape)
		if code != 0 || trace == "" || !strings.Contains(rout, trace) {
			t.Fatalf("replay -tape: exit %d, want %s in\n%s\n%s", code, trace, lastLines(rout, 15), rerr)
		}
		if got := faultLines(rout); !slices.Equal(got, served) {
			t.Fatalf("replay %d printed other faults:\n%s\nserved:\n%s", i+1, strings.Join(got, "\n"), strings.Join(served, "\n"))
		}
	}
}
