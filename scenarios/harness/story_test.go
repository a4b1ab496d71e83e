package harness

import "testing"

// TestStorySummarize: a batch known only by offsets is one phrase, named
// values stay named.
func TestStorySummarize(t *testing.T) {
	got := summarize([]string{"m1", "offset 3", "offset 4", "offset 5", "m6", "offset 9"})
	want := "m1, 3 records at offsets 3-5, m6, a record at offset 9"
	if got != want {
		t.Fatalf("summarize = %q, want %q", got, want)
	}
}
