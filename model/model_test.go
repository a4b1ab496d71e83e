package model

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestLogIsPersistent checks that Append never changes the log it extends,
// so porcupine's cached states stay valid.
func TestLogIsPersistent(t *testing.T) {
	base := LogOf("m1", "m2")
	a := base.Append("m3")
	b := base.Append("m4")
	if got := base.String(); got != "[m1 m2]" {
		t.Fatalf("base = %s, want [m1 m2]", got)
	}
	if a.String() != "[m1 m2 m3]" || b.String() != "[m1 m2 m4]" {
		t.Fatalf("branches = %s, %s", a, b)
	}
	if a.Equal(b) || !a.Equal(LogOf("m1", "m2", "m3")) {
		t.Fatal("Equal disagrees with content")
	}
	if a.Hash() != LogOf("m1", "m2", "m3").Hash() {
		t.Fatal("equal logs hash differently")
	}
	if v, ok := a.At(1); !ok || v != "m2" {
		t.Fatalf("At(1) = %q, %v", v, ok)
	}
	if _, ok := a.At(3); ok {
		t.Fatal("At(3) found an entry past the end")
	}
	if _, ok := a.At(-1); ok {
		t.Fatal("At(-1) found an entry")
	}
	// Hash separates values: "ab","c" differs from "a","bc".
	if LogOf("ab", "c").Hash() == LogOf("a", "bc").Hash() || LogOf("ab", "c").Equal(LogOf("a", "bc")) {
		t.Fatal("value boundaries are not part of the hash")
	}
	long := LogOf("m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9")
	if got, want := long.String(), "[m0 m1 m2 … m7 m8 m9] (10 entries)"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
}

// TestStep is the table of the model's transitions.
func TestStep(t *testing.T) {
	k := Key{Topic: "t", Partition: 0}
	two := LogOf("m1", "m2")
	cases := []struct {
		name string
		in   Input
		out  Output
		ok   bool
		want string
	}{
		{"append at the end", Input{Key: k, Kind: Append, Value: "m3"}, Output{Offset: 2}, true, "[m1 m2 m3]"},
		{"append inside the log", Input{Key: k, Kind: Append, Value: "m3"}, Output{Offset: 1}, false, "[m1 m2]"},
		{"append past the end", Input{Key: k, Kind: Append, Value: "m3"}, Output{Offset: 3}, false, "[m1 m2]"},
		{"append unknown", Input{Key: k, Kind: Append, Value: "m3"}, Output{Unknown: true}, true, "[m1 m2 m3]"},
		{"read committed", Input{Key: k, Kind: Read, Offset: 0}, Output{Records: []Record{{0, "m1"}, {1, "m2"}}}, true, "[m1 m2]"},
		{"read wrong value", Input{Key: k, Kind: Read, Offset: 1}, Output{Records: []Record{{1, "m3"}}}, false, "[m1 m2]"},
		{"read uncommitted", Input{Key: k, Kind: Read, Offset: 2}, Output{Records: []Record{{2, "m3"}}}, false, "[m1 m2]"},
		{"read nothing", Input{Key: k, Kind: Read, Offset: 5}, Output{}, true, "[m1 m2]"},
		{"hw exact", Input{Key: k, Kind: HighWatermark}, Output{HighWatermark: 2}, true, "[m1 m2]"},
		{"hw stale", Input{Key: k, Kind: HighWatermark}, Output{HighWatermark: 1}, false, "[m1 m2]"},
	}
	for _, c := range cases {
		ok, next := Step(two, c.in, c.out)
		if ok != c.ok {
			t.Errorf("%s: legal = %v, want %v", c.name, ok, c.ok)
		}
		if ok && next.String() != c.want {
			t.Errorf("%s: next = %s, want %s", c.name, next, c.want)
		}
		if two.String() != "[m1 m2]" {
			t.Fatalf("%s: Step mutated its state", c.name)
		}
	}
}

// TestModelPartitionsPerTopicPartition checks that porcupine judges each
// topic-partition on its own, in key order.
func TestModelPartitionsPerTopicPartition(t *testing.T) {
	a, b := Key{"t", 1}, Key{"t", 0}
	ops := []porcupine.Operation{
		{ClientId: 0, Call: 0, Return: 1, Input: Input{Key: a, Kind: Append, Value: "x"}, Output: Output{Offset: 0}},
		{ClientId: 1, Call: 0, Return: 1, Input: Input{Key: b, Kind: Append, Value: "y"}, Output: Output{Offset: 0}},
		{ClientId: 0, Call: 2, Return: 3, Input: Input{Key: b, Kind: Read}, Output: Output{Records: []Record{{0, "y"}}}},
	}
	parts := Partition(ops)
	if len(parts) != 2 || len(parts[0]) != 2 || len(parts[1]) != 1 {
		t.Fatalf("partitions = %d (%v)", len(parts), parts)
	}
	if keys := PartitionKeys(ops); keys[0] != b || keys[1] != a {
		t.Fatalf("keys = %v, want t-0 then t-1", keys)
	}
	if !porcupine.CheckOperations(Model(), ops) {
		t.Fatal("linearizable history judged illegal")
	}
	// Reading x from t-0 is illegal: x was appended to t-1.
	bad := append(ops, porcupine.Operation{ClientId: 1, Call: 4, Return: 5,
		Input: Input{Key: b, Kind: Read}, Output: Output{Records: []Record{{0, "x"}}}})
	if porcupine.CheckOperations(Model(), bad) {
		t.Fatal("cross-partition read judged linearizable")
	}
}

// TestUnknownAppendMayNeverHappen checks the info convention: an append with
// an unknown outcome and an infinite completion may take effect late or
// never.
func TestUnknownAppendMayNeverHappen(t *testing.T) {
	k := Key{"t", 0}
	const inf = int64(1) << 62
	never := []porcupine.Operation{
		{ClientId: 0, Call: 0, Return: inf, Input: Input{Key: k, Kind: Append, Value: "lost"}, Output: Output{Unknown: true}},
		{ClientId: 1, Call: 1, Return: 2, Input: Input{Key: k, Kind: Append, Value: "m1"}, Output: Output{Offset: 0}},
		{ClientId: 1, Call: 3, Return: 4, Input: Input{Key: k, Kind: HighWatermark}, Output: Output{HighWatermark: 1}},
	}
	if !porcupine.CheckOperations(Model(), never) {
		t.Fatal("an unknown append that never happened was not allowed")
	}
	late := append(never, porcupine.Operation{ClientId: 1, Call: 5, Return: 6,
		Input: Input{Key: k, Kind: Read, Offset: 1}, Output: Output{Records: []Record{{1, "lost"}}}})
	if !porcupine.CheckOperations(Model(), late) {
		t.Fatal("an unknown append that happened late was not allowed")
	}
	early := append(never, porcupine.Operation{ClientId: 1, Call: 5, Return: 6,
		Input: Input{Key: k, Kind: Read, Offset: 0}, Output: Output{Records: []Record{{0, "lost"}}}})
	if porcupine.CheckOperations(Model(), early) {
		t.Fatal("offset 0 holds both m1 and lost, yet judged linearizable")
	}
}

func TestDescribe(t *testing.T) {
	k := Key{"t", 0}
	for _, c := range []struct {
		in   Input
		out  Output
		want string
	}{
		{Input{Key: k, Kind: Append, Value: "m2"}, Output{Offset: 1}, "append(m2) -> 1"},
		{Input{Key: k, Kind: Append, Value: "m3"}, Output{Unknown: true}, "append(m3) -> ?"},
		{Input{Key: k, Kind: Read, Offset: 1}, Output{Records: []Record{{1, "m2"}, {2, "m3"}}}, "read(1) -> [1:m2 2:m3]"},
		{Input{Key: k, Kind: HighWatermark}, Output{HighWatermark: 2}, "hw() -> 2"},
	} {
		if got := DescribeOperation(c.in, c.out); got != c.want {
			t.Errorf("DescribeOperation = %q, want %q", got, c.want)
		}
	}
	if got := DescribeState(LogOf("m1")); got != "[m1]" {
		t.Errorf("DescribeState = %q", got)
	}
	if k.String() != "t-0" {
		t.Errorf("Key.String = %q", k.String())
	}
}

// TestUnobservedAppend: an unobserved unknown append only lands in a gap or
// past Tail, and is stored as Hidden.
func TestUnobservedAppend(t *testing.T) {
	k := Key{"t", 0}
	in := Input{Key: k, Kind: Append, Value: "x"}
	out := Output{Unknown: true, Unobserved: true, Gaps: []int64{1, 3}, Tail: 4}
	for n, want := range []bool{false, true, false, true, true, true} {
		var l Log
		for i := 0; i < n; i++ {
			l = l.Append("m")
		}
		ok, next := Step(l, in, out)
		if ok != want {
			t.Errorf("at offset %d: legal = %v, want %v", n, ok, want)
		}
		if ok {
			if v, _ := next.At(int64(n)); v != Hidden {
				t.Errorf("at offset %d: stored %q, want Hidden", n, v)
			}
		}
	}
}
