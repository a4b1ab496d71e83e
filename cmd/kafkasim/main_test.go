package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKernelCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"kernel", "-seeds", "3"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	if got := strings.Count(out.String(), " ok\n"); got != 3 {
		t.Fatalf("want 3 ok seeds:\n%s", out.String())
	}
}

func TestBadInputExitsTwo(t *testing.T) {
	for _, args := range [][]string{
		{"nonsense"},
		{"kernel", "-seeds", "0"},
		{"kernel", "-nodes", "1"},
		{"kernel", "-bogus"},
		{"kernel", "extra"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if errb.Len() == 0 {
			t.Errorf("%v: no message on stderr", args)
		}
	}
}

// TestBadConsumerStepExitsTwo: a consumer step with a bad property is bad
// input: refused before the run with exit code 2, naming what is allowed,
// and nothing printed as a verdict.
func TestBadConsumerStepExitsTwo(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "bad.txt")
	text := "brokers 1\ntopic t\nset offsets.topic.replication.factor=1\nrun 1s\nconsumer c1 group.id=g topic=t partition.assignment.strategy=fancy\nrun 1s\n"
	if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"run", "-scenario", script}, &out, &errb); code != 2 {
		t.Fatalf("exit %d, want 2\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "unknown assignor fancy") || !strings.Contains(errb.String(), "cooperative-sticky") {
		t.Errorf("stderr %q: want the bad assignor and the allowed ones", errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("printed %q for a run that never started", out.String())
	}
}
