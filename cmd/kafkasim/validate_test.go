package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptCheckedBeforeTheRun: a script's mistakes are bad input, found
// before anything runs: exit 2, the file and line on stderr, and nothing
// printed as a verdict (issue 13). -set of a script variable the scenario
// does not have is refused by run and replay as by sweep.
func TestScriptCheckedBeforeTheRun(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "bad.txt")
	text := "brokers 3\ntopic t partitions=3 rf=2\nrun 1s\nproduce p1 t/0 m1\nawait p1 ack m1\ncrash b7\n"
	if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-scenario", script}, script + `:6: crash: "b7" is not a broker: brokers 3 makes b0..b2`},
		{[]string{"replay", "-scenario", script}, script + `:6: crash: "b7" is not a broker`},
		{[]string{"run", "-scenario", "kip101-hw-lag", "-set", "$nosuch=1"}, "-set $nosuch=1: scenario kip101-hw-lag has no script variable $nosuch (it has none)"},
		{[]string{"replay", "-scenario", "acks1-leader-crash", "-variant", "acks1", "-set", "$ack=1"}, "no script variable $ack (its variables: $acks)"},
	} {
		var out, errb bytes.Buffer
		if code := run(c.args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s%s", c.args, code, out.String(), errb.String())
		}
		if !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: stderr %q, want it to contain %q", c.args, errb.String(), c.want)
		}
		if out.Len() != 0 {
			t.Errorf("%v: printed %q for a run that never started", c.args, out.String())
		}
	}
}
