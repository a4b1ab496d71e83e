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

// TestContractStepCopies: an append with Copies may take effect on a log
// up to Copies entries short of its offset, the offsets between then
// holding unobserved copies (Hidden) that any later Truncate may remove;
// without Copies, or further short, it may not. A pending cut is resolved
// as before when the offset is within the log.
func TestContractStepCopies(t *testing.T) {
	s := definite(LogOf("m1"))
	for _, tc := range []struct {
		out  Output
		ok   bool
		want string
	}{
		{Output{Offset: 3}, false, ""},
		{Output{Offset: 3, Copies: 1}, false, ""}, // offset 1 would be empty
		{Output{Offset: 3, Copies: 2}, true, "[m1 <unobserved> <unobserved> n1]"},
		{Output{Offset: 3, Copies: 3}, true, "[m1 <unobserved> <unobserved> n1]"},
		{Output{Offset: 1, Copies: 1}, true, "[m1 n1]"},
		{Output{Offset: 0, Copies: 1}, false, ""}, // m1 cannot be cut
	} {
		ok, next := ContractStep(s, Input{Kind: Append, Value: "n1"}, tc.out)
		if ok != tc.ok || (ok && next.String() != tc.want) {
			t.Errorf("append(n1) -> %d with %d copies: got %v %v, want %v %s", tc.out.Offset, tc.out.Copies, ok, next, tc.ok, tc.want)
		}
	}
	// The copies are unobserved: a loss fact that excuses n1 frees their
	// offsets for other records.
	_, padded := ContractStep(s, Input{Kind: Append, Value: "n1"}, Output{Offset: 3, Copies: 2})
	_, cut := ContractStep(padded, Input{Kind: Truncate, Excused: map[string]bool{"n1": true}}, Output{})
	if ok, next := ContractStep(cut, Input{Kind: Append, Value: "n2"}, Output{Offset: 1}); !ok || next.String() != "[m1 n2]" {
		t.Fatalf("after the cut: %v %v", ok, next)
	}
	// The strict model knows no copies.
	if ok, _ := Step(LogOf("m1"), Input{Kind: Append, Value: "n1"}, Output{Offset: 3, Copies: 2}); ok {
		t.Fatal("strict model padded")
	}
}
