package cluster

import (
	"fmt"
	"strings"
	"testing"
)

// TestDriverValues checks the chunked values against their definition,
// "v%07d-" of the record's number padded with x's to ValueSize.
func TestDriverValues(t *testing.T) {
	for _, size := range []int{0, 9, 100} {
		d := &Driver{ValueSize: size}
		for _, n := range []int{0, 1, 63, 64, 65, 200, 9999999, 10000000, 10000001, 5} {
			want := fmt.Sprintf("v%07d-", n)
			if pad := size - len(want); pad > 0 {
				want += strings.Repeat("x", pad)
			}
			got, b := d.valueOf(n)
			if got != want || string(b) != want {
				t.Errorf("value %d of size %d: %q (bytes %q), want %q", n, size, got, b, want)
			}
		}
	}
}
