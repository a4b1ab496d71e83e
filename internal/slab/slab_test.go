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

// TestSliceNeverOverlaps: slices and values carved from one slab never
// share an element, appending to a slice up to its capacity cannot reach
// its neighbour, and every element starts zero.
func TestSliceNeverOverlaps(t *testing.T) {
	var s Slab[[2]int]
	owner := map[*[2]int]int{}
	var slices [][][2]int
	for i, n := range []int{3, 1, 0, 7, Chunk, 5, Chunk + 2, 2, 9, 4} {
		sl := s.Slice(n)
		if len(sl) != 0 || cap(sl) != n {
			t.Fatalf("Slice(%d): len %d cap %d, want 0 and %d", n, len(sl), cap(sl), n)
		}
		for j := 0; j < n; j++ {
			sl = append(sl, [2]int{})
			if sl[j] != [2]int{} {
				t.Fatalf("slice %d element %d not zero", i, j)
			}
			if k, ok := owner[&sl[j]]; ok {
				t.Fatalf("slice %d element %d is also slice %d's", i, j, k)
			}
			owner[&sl[j]] = i
			sl[j] = [2]int{i, j}
		}
		slices = append(slices, sl)
		p := s.New()
		if _, used := owner[p]; used || *p != [2]int{} {
			t.Fatalf("New after slice %d handed out a used value", i)
		}
		owner[p] = -1
	}
	for i, sl := range slices {
		for j := range sl {
			if sl[j] != [2]int{i, j} {
				t.Fatalf("slice %d element %d changed to %v", i, j, sl[j])
			}
		}
	}
}
