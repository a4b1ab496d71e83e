package client

import (
	"slices"
	"testing"
)

// TestAddRequestKeepsMapSemantics checks that the requests in flight stay
// sorted by correlation id, and that a request replaces one of the same
// id, when the ids start over (a producer restarted in place).
func TestAddRequestKeepsMapSemantics(t *testing.T) {
	p := New(testConfig(), []int32{0})
	for _, corr := range []int32{5, 6, 7, 1, 2} {
		p.addRequest(&request{corr: corr})
	}
	again := &request{corr: 6, broker: 9}
	p.addRequest(again)
	var got []int32
	for _, r := range p.requests {
		got = append(got, r.corr)
	}
	if want := []int32{1, 2, 5, 6, 7}; !slices.Equal(got, want) {
		t.Fatalf("corrs %v, want %v", got, want)
	}
	if i, ok := p.findRequest(6); !ok || p.requests[i] != again {
		t.Fatalf("corr 6: found %v, want the request that replaced the first", ok)
	}
	if _, ok := p.findRequest(3); ok {
		t.Fatal("corr 3 found, never added")
	}
}
