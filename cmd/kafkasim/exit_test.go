package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExitRuleFromTheCommandLine: issue 28's rule, as a user meets it.
// Permitted loss exits 0 (1 with -strict); a bug the script's expect line
// names exits 0, and 1 once -set changes the variant's configuration (the
// expectation was written for it), saying so; a contract break with no
// expect line exits 1 and names the verdict.
func TestExitRuleFromTheCommandLine(t *testing.T) {
	data, err := os.ReadFile("../../scenarios/scripts/acks1-leader-crash.txt")
	if err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(t.TempDir(), "mine.txt")
	if err := os.WriteFile(mine, regexp.MustCompile(`(?m)^expect .*\n`).ReplaceAll(data, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want int
		out  string
	}{
		{[]string{"-scenario", mine, "-variant", "acks1"}, 0, "acked-loss       violation (permitted by Kafka's contract)"},
		{[]string{"-scenario", mine, "-variant", "acks1", "-strict"}, 1, "fails the run (no expect line names it): linearizability: permitted (-strict); acked-loss: permitted (-strict)"},
		{[]string{"-scenario", mine, "-variant", "acksall", "-strict"}, 0, "acked-loss       ok"},
		{[]string{"-scenario", "kip101-hw-lag", "-variant", "hw"}, 0, "acked-loss       violation\n"},
		{[]string{"-scenario", "kip101-hw-lag", "-variant", "hw", "-set", "replica.lag.time.max.ms=10001"}, 1, "note: the script's expect lines were not applied"},
	} {
		code, out, errOut := runCmd(append([]string{"run"}, c.args...)...)
		if code != c.want || !strings.Contains(out, c.out) {
			t.Errorf("run %v: exit %d, want %d and %q in\n%s%s", c.args, code, c.want, c.out, out, errOut)
		}
	}
}
