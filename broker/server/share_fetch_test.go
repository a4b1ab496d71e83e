package server

import (
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
)

// TestShareSpansSkipAbortedKIP932: under read_committed the batches of an
// aborted transaction are left out of the spans a share-partition
// acquires (they fall between spans and are archived); its ABORT marker,
// a committed transaction's batches and non-transactional ones stay.
func TestShareSpansSkipAbortedKIP932(t *testing.T) {
	batch := func(base int64, n int, pid int64, attrs int16) []byte {
		var recs []storage.Record
		for range n {
			recs = append(recs, storage.Record{Value: []byte("v")})
		}
		b := storage.NewBatch(base, recs)
		b.ProducerID, b.Attributes = pid, attrs
		if pid < 0 {
			b.ProducerEpoch, b.BaseSequence = -1, -1
		}
		return b.AppendTo(nil)
	}
	txn := storage.TransactionalFlagMask
	ctl := storage.TransactionalFlagMask | storage.ControlFlagMask
	var data []byte
	data = append(data, batch(0, 2, -1, 0)...)  // 0-1 plain
	data = append(data, batch(2, 3, 7, txn)...) // 2-4 producer 7, aborted
	data = append(data, batch(5, 1, 8, txn)...) // 5 producer 8, committed
	data = append(data, batch(6, 1, 7, ctl)...) // 6 ABORT marker of 7
	data = append(data, batch(7, 1, 8, ctl)...) // 7 COMMIT marker of 8
	aborted := []storage.AbortedTxn{{ProducerID: 7, FirstOffset: 2, LastOffset: 6}}
	render := func(a []storage.AbortedTxn, from int64) string {
		s := ""
		for _, sp := range shareSpans(data, from, a) {
			s += fmt.Sprintf("%d-%d ", sp.First, sp.Last)
		}
		return s
	}
	if got, want := render(aborted, 1), "1-1 5-5 6-6 7-7 "; got != want {
		t.Fatalf("read_committed spans %q, want %q", got, want)
	}
	if got, want := render(nil, 0), "0-1 2-4 5-5 6-6 7-7 "; got != want {
		t.Fatalf("read_uncommitted spans %q, want %q", got, want)
	}
}
