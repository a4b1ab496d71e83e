package model

import "testing"

// TestContractStepTruncate: a Truncate leaves a pending cut down to the
// first value it does not excuse; the next append, HW read or read picks
// the length, and nothing below the floor can be cut.
func TestContractStepTruncate(t *testing.T) {
	s := definite(LogOf("m1", "m2", Hidden, "m4"))
	ok, cut := ContractStep(s, Input{Kind: Truncate, Excused: map[string]bool{"m4": true, "m2": true}}, Output{})
	if !ok || cut.Floor != 1 || cut.String() != "[m1 m2 <unobserved> m4] (cut to >= 1 pending)" {
		t.Fatalf("truncate: %v %v", ok, cut)
	}
	// m1 is not excused: a second fact excusing nothing more keeps floor 1.
	if _, again := ContractStep(cut, Input{Kind: Truncate, Excused: map[string]bool{"x": true}}, Output{}); again.Floor != 1 {
		t.Fatalf("second truncate: %v", again)
	}
	for _, tc := range []struct {
		in   Input
		out  Output
		ok   bool
		want string
	}{
		{Input{Kind: Append, Value: "n1"}, Output{Offset: 1}, true, "[m1 n1]"},
		{Input{Kind: Append, Value: "n1"}, Output{Offset: 4}, true, "[m1 m2 <unobserved> m4 n1]"},
		{Input{Kind: Append, Value: "n1"}, Output{Offset: 0}, false, ""}, // below the floor: m1 cannot be cut
		{Input{Kind: Append, Value: "n1"}, Output{Offset: 5}, false, ""}, // past the log
		{Input{Kind: HighWatermark}, Output{HighWatermark: 2}, true, "[m1 m2]"},
		{Input{Kind: Append, Value: "h"}, Output{Unobserved: true, Gaps: []int64{0, 2}, Tail: 9}, true, "[m1 m2 <unobserved>]"},
	} {
		ok, next := ContractStep(cut, tc.in, tc.out)
		if ok != tc.ok || (ok && next.String() != tc.want) {
			t.Errorf("%s: got %v %v, want %v %s", DescribeOperation(tc.in, tc.out), ok, next, tc.ok, tc.want)
		}
	}
	// A read of m4 keeps the whole log: the floor rises past it.
	if ok, next := ContractStep(cut, Input{Kind: Read}, Output{Records: []Record{{3, "m4"}}}); !ok || next.Floor != 4 {
		t.Fatalf("read: %v %v", ok, next)
	}
	// Without a pending cut the contract model is the strict one.
	if ok, _ := ContractStep(s, Input{Kind: Append, Value: "n1"}, Output{Offset: 1}); ok {
		t.Fatal("append at a taken offset without a cut")
	}
	if p := s.Log.Prefix(2); p.String() != "[m1 m2]" || !s.Log.Prefix(9).Equal(s.Log) || s.Log.Prefix(-1).Len() != 0 {
		t.Fatalf("Prefix: %v", p)
	}
}
