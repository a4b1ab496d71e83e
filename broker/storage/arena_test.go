package storage

import "testing"

// TestReadArenaRegionsStayApart checks readArena's invariant: regions
// handed out never overlap, cannot grow into one another, and only the
// unseen tail of the latest goes back.
func TestReadArenaRegionsStayApart(t *testing.T) {
	var a readArena
	var kept [][]byte
	for i := 0; i < 500; i++ {
		n := []int{0, 1, 170, 900, arenaMax, arenaMax + 1}[i%6]
		b := a.take(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("take(%d): len %d cap %d", n, len(b), cap(b))
		}
		for j := range b {
			if b[j] != 0 {
				t.Fatalf("take(%d): byte %d not zeroed", n, j)
			}
			b[j] = byte(i)
		}
		b = a.trim(b, n/2)
		if len(b) != n/2 || cap(b) != n/2 {
			t.Fatalf("trim to %d: len %d cap %d", n/2, len(b), cap(b))
		}
		kept = append(kept, b)
	}
	for i, b := range kept {
		for j := range b {
			if b[j] != byte(i) {
				t.Fatalf("region %d overwritten at %d", i, j)
			}
		}
	}
}
