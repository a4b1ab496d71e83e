package model

import "testing"

// TestContractStepTruncate: a Truncate removes any suffix of excused (or
// Hidden) values and nothing past the first value it does not excuse.
func TestContractStepTruncate(t *testing.T) {
	log := LogOf("m1", "m2", Hidden, "m4")
	in := Input{Kind: Truncate, Excused: map[string]bool{"m4": true, "m2": true}}
	var got []string
	for _, l := range ContractStep(log, in, Output{}) {
		got = append(got, l.String())
	}
	want := []string{"[m1 m2 <unobserved> m4]", "[m1 m2 <unobserved>]", "[m1 m2]", "[m1]"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	// m4 not excused: only the log itself.
	if next := ContractStep(log, Input{Kind: Truncate, Excused: map[string]bool{"m2": true}}, Output{}); len(next) != 1 || !next[0].Equal(log) {
		t.Fatalf("got %v", next)
	}
	// Other operations step as the strict model does.
	if next := ContractStep(log, Input{Kind: Append, Value: "m5"}, Output{Offset: 3}); len(next) != 0 {
		t.Fatalf("append at a taken offset: %v", next)
	}
	if p := log.Prefix(2); p.String() != "[m1 m2]" || !log.Prefix(9).Equal(log) || log.Prefix(-1).Len() != 0 {
		t.Fatalf("Prefix: %v", p)
	}
}
