package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
