package slab

import "testing"

// TestNewNeverReuses checks that values come zeroed and distinct, and that
// writing one never shows in another.
func TestNewNeverReuses(t *testing.T) {
	var s Slab[[3]int]
	seen := map[*[3]int]bool{}
	var all []*[3]int
	for i := 0; i < 5*Chunk+3; i++ {
		p := s.New()
		if seen[p] {
			t.Fatalf("value %d handed out twice", i)
		}
		if *p != [3]int{} {
			t.Fatalf("value %d not zero: %v", i, *p)
		}
		seen[p] = true
		*p = [3]int{i, i, i}
		all = append(all, p)
	}
	for i, p := range all {
		if *p != [3]int{i, i, i} {
			t.Fatalf("value %d changed to %v", i, *p)
		}
	}
}
