package sim

import "testing"

// mixStringBytewise is mixString as first written, a byte at a time: the
// definition the word-at-a-time version must keep, or every stored trace
// hash changes.
func mixStringBytewise(h uint64, s string) uint64 {
	h = mix(h, uint64(len(s)))
	var w uint64
	for i := 0; i < len(s); i++ {
		w = w<<8 | uint64(s[i])
		if i&7 == 7 {
			h = mix(h, w)
			w = 0
		}
	}
	return mix(h, w)
}

func TestMixStringKeepsItsDefinition(t *testing.T) {
	var b []byte
	for n := 0; n < 40; n++ {
		s := string(b)
		if got, want := mixString(hashSeed, s), mixStringBytewise(hashSeed, s); got != want {
			t.Fatalf("mixString of %d bytes = %x, the byte-at-a-time definition gives %x", n, got, want)
		}
		b = append(b, byte(n*37+11))
	}
}
