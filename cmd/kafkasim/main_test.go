package main

import (
	"bytes"
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
