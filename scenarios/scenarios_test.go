package scenarios

import (
	"strings"
	"testing"
)

// TestSuiteMeetsExpectations is the suite at a small seed count: every
// scenario, swarm included, under every variant, must show what its script
// expects, and run deterministically (a second run of a seed gives the
// same trace hash).
func TestSuiteMeetsExpectations(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	seeds := 3
	if testing.Short() {
		seeds = 1
	}
	cases, err := RunSuite(all, SuiteOptions{Seeds: seeds, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		for _, r := range c.Runs {
			if !r.OK() {
				t.Errorf("%s/%s seed %d: failed %q, mismatches %v\n  replay: %s", c.Scenario, c.Variant, r.Seed, r.Failed, r.Mismatches, r.Replay)
			}
			if bugVariants[c.Scenario+"/"+c.Variant] {
				continue
			}
			// Kafka's fixes and the configurations whose losses the
			// contract allows: no checker may call anything a bug.
			for _, v := range r.Verdicts {
				if v.ContractBroken() && !bugCheckers[c.Scenario+"/"+c.Variant+" "+v.Checker] {
					t.Errorf("%s/%s seed %d: %s reports a contract break outside the bug variants:\n%s\n  replay: %s", c.Scenario, c.Variant, r.Seed, v.Checker, v, r.Replay)
				}
			}
		}
	}
	for _, s := range all {
		v := s.Variants[0]
		a, _ := s.Run(v.Name, Options{Seed: 7})
		b, _ := s.Run(v.Name, Options{Seed: 7})
		if a.TraceHash != b.TraceHash || a.Events != b.Events {
			t.Errorf("%s/%s seed 7: two runs differ (hash %x vs %x)", s.Name, v.Name, a.TraceHash, b.TraceHash)
		}
	}
}

// bugVariants are the variants that model a protocol bug Kafka had (or a
// configuration that breaks the contract): the only ones where a checker
// may report "bug".
var bugVariants = map[string]bool{
	"kip101-hw-lag/hw":            true, // KIP-101 scenario 1: HW truncation loses an acked write
	"kip101-power-loss/hw":        true, // KIP-101 scenario 2: replicas diverge
	"kip279-fast-failover/kip101": true, // KAFKA-6361: divergence under KIP-101
	"kafka7164-epoch-bump/bug":    true, // KAFKA-7164: divergence on a same-leader epoch bump
	"swarm/hw-unsafe":             true, // HW truncation under random faults
	"kafka3410-halt/hw":           true, // KAFKA-3410: a follower halts and never rejoins
}

// bugCheckers are the checkers that may report "bug" in an otherwise safe
// variant, because the release it models has that bug.
var bugCheckers = map[string]bool{
	"swarm/kip101-safe divergence": true, // KAFKA-6361, fixed by KIP-279
}

// TestExpectationsCanFail: the same script with the opposite expectation
// must report a mismatch, so the suite cannot pass everything.
func TestExpectationsCanFail(t *testing.T) {
	s, err := Load("kip101-hw-lag")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := s.Variant("hw")
	v.Expect["acked-loss"] = ExpectOK
	res, err := s.Run("hw", Options{Seed: 1})
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
		_, err := Parse("f.txt", "f", strings.NewReader(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("script %q: error %v, want it to contain %q", src, err, want)
		}
	}
}
