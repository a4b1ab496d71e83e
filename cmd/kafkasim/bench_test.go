package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchJSON: one cheap workload as JSON carries the figures the
// README's table shows, and the machine.
func TestBenchJSON(t *testing.T) {
	code, out, errb := runCmd("bench", "-run", "^bare-loop$", "-json")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	var got struct {
		Machine string `json:"machine"`
		Results []struct {
			Name       string  `json:"name"`
			EventsPerS float64 `json:"events_per_s"`
			Records    int     `json:"records"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Machine == "" || len(got.Results) != 1 || got.Results[0].Name != "bare-loop" || got.Results[0].EventsPerS <= 0 || got.Results[0].Records != 2000000 {
		t.Fatalf("%+v", got)
	}
}

// TestBenchKernelAloneCannotTell: the kernel's goal is a ratio to the
// bare loop; measured without it the table says it cannot tell, never met.
func TestBenchKernelAloneCannotTell(t *testing.T) {
	code, out, errb := runCmd("bench", "-run", "^kernel$")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	if !strings.Contains(out, "cannot tell") || strings.Contains(out, ": met") || !strings.Contains(out, "GOGC") {
		t.Fatalf("kernel alone:\n%s", out)
	}
}

func TestBenchBadInput(t *testing.T) {
	for _, args := range [][]string{{"-count", "0"}, {"-run", "nosuch"}, {"-run", "("}} {
		code, _, errb := runCmd(append([]string{"bench"}, args...)...)
		if code != 2 || !strings.Contains(errb, args[1]) {
			t.Errorf("bench %v: exit %d, %q; want 2 naming the value", args, code, errb)
		}
	}
}
