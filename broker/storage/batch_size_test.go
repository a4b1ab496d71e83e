package storage

import "testing"

// TestEncodedSize checks EncodedSize against the encoding's length.
func TestEncodedSize(t *testing.T) {
	for _, n := range []int{0, 1, 3, 200} {
		recs := make([]Record, n)
		for i := range recs {
			recs[i] = Record{Timestamp: int64(1000 * i), Value: make([]byte, i*7)}
			if i%2 == 1 {
				recs[i].Key = []byte("key")
				recs[i].Headers = []Header{{Key: "h", Value: []byte("v")}, {Key: "nil"}}
			}
		}
		b := NewBatch(int64(n)*1000, recs)
		if got, want := b.EncodedSize(), len(b.AppendTo(nil)); got != want {
			t.Errorf("%d records: EncodedSize %d, encoding %d bytes", n, got, want)
		}
	}
}
