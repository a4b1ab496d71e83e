package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
)

// TestExpectationsCanFail: the same script with the opposite expectation
// must report a mismatch, so the suite cannot pass everything.
func TestExpectationsCanFail(t *testing.T) {
	s, err := scenarios.Load("kip101-hw-lag")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := s.Variant("hw")
	v.Expect["acked-loss"] = scenarios.ExpectOK
	res, err := Run(s, "hw", Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mismatches) == 0 || !strings.Contains(res.Mismatches[0], "acked-loss: expected ok, got bug") {
		t.Fatalf("mismatches %v: the hw variant loses m2 and must contradict an 'ok' expectation", res.Mismatches)
	}
}

func TestScriptSyntaxErrors(t *testing.T) {
	cases := map[string]string{
		"brokers 3\ntopic t\nfrobnicate b1\n": "f.txt:3: unknown step \"frobnicate\"",
		"brokers 0\n":                         "f.txt:1: brokers \"0\": want a number in [1, 64]",
		"topic t\n":                           "no 'brokers N' line",
		"brokers 2\ntopic t\nvariant v\nexpect w acked-loss=ok\n":    "f.txt:4: expect: unknown variant \"w\"",
		"brokers 2\ntopic t\nvariant v\nexpect v acked-loss=maybe\n": "f.txt:4: expect acked-loss=\"maybe\"",
		"brokers 2\ntopic t\nrun 5 parsecs\n":                        "f.txt:3: run: want 'run DURATION'",
		"brokers 2\ntopic t\nrun 5s\nbrokers 3\n":                    "f.txt:4: \"brokers\" belongs in the header",
		"brokers 2\ntopic t\nproduce p1 t0 m1\n":                     "f.txt:3: produce: \"t0\": want TOPIC/PARTITION",
		"brokers 2\ntopic t\ncut b0 b1 b2\n":                         "f.txt:3: cut: \"b1\": want -> or <->",
	}
	for src, want := range cases {
		_, err := scenarios.Parse("f.txt", "f", strings.NewReader(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("script %q: error %v, want it to contain %q", src, err, want)
		}
	}
}
