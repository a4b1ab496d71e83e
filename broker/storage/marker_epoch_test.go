package storage

import (
	"errors"
	"testing"
)

// TestMarkerEpochCheckPerTransactionVersion: the leader's check of a
// coordinator's marker (ProducerAppendInfo.checkProducerEpoch). The legacy
// check (transaction version 0/1, or any marker before KAFKA-19446)
// refuses only an epoch below the producer's; the transaction version 2
// check also refuses one equal to it while a transaction is ongoing (a
// late marker of the previous transaction, KAFKA-19446), and lets an equal
// one through when none is (a retried marker, KAFKA-19999).
func TestMarkerEpochCheckPerTransactionVersion(t *testing.T) {
	cases := []struct {
		name        string
		dataEpoch   int16 // epoch of the producer's transactional batch
		ongoing     bool  // the batch's transaction is still open
		markerEpoch int16
		legacyOK    bool
		tv2OK       bool
	}{
		{"epoch below, ongoing", 5, true, 4, false, false},
		{"epoch below, ended", 5, false, 4, false, false},
		{"same epoch, ongoing (a late marker)", 5, true, 5, true, false},
		{"same epoch, ended (a retried marker)", 5, false, 5, true, true},
		{"bumped epoch, ongoing (TV2's own marker)", 5, true, 6, true, true},
		{"bumped epoch, ended", 5, false, 6, true, true},
	}
	for _, tc := range cases {
		for _, tv := range []int16{0, 1, 2} {
			want := tc.legacyOK
			if tv >= 2 {
				want = tc.tv2OK
			}
			d := newDisk(t, nil)
			l := openTestLog(t, d, DefaultConfig(), 0)
			txnBatch(t, l, 10, tc.dataEpoch, 0, 1)
			if !tc.ongoing {
				// Ended by the marker the epoch's transaction version gives it.
				writeMarker(t, l, 10, tc.dataEpoch, 0, true)
			}
			fuo, _ := l.FirstUnstableOffset()
			_, err := l.AppendControlAsLeader(10, tc.markerEpoch, 0, true, tv, 0, 0)
			switch {
			case want && err != nil:
				t.Fatalf("%s, TV%d: refused: %v", tc.name, tv, err)
			case !want && !errors.Is(err, ErrInvalidProducerEpoch):
				t.Fatalf("%s, TV%d: err %v, want ErrInvalidProducerEpoch", tc.name, tv, err)
			}
			if got, _ := l.FirstUnstableOffset(); !want && got != fuo {
				t.Fatalf("%s, TV%d: a refused marker moved the first unstable offset from %d to %d", tc.name, tv, fuo, got)
			}
		}
	}
}
