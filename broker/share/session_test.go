package share

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestShareSessionEpochsKIP932: epoch 0 opens (replacing), the next
// request must carry the session's epoch (1, 2, ...), another epoch is
// INVALID_SHARE_SESSION_EPOCH, no session SHARE_SESSION_NOT_FOUND, a full
// cache SHARE_SESSION_LIMIT_REACHED; forgotten partitions leave.
func TestShareSessionEpochsKIP932(t *testing.T) {
	s := NewSessions(1)
	k := SessionKey{Group: "g", Member: "m"}
	a, b := SessionPartition{Partition: 0}, SessionPartition{Partition: 1}
	if _, err := s.Check(k, 1); err != kerr.ShareSessionNotFound {
		t.Fatalf("no session: %v", err)
	}
	ss, err := s.Open(k, []SessionPartition{a})
	if err != nil || ss.Epoch != 1 {
		t.Fatalf("open: %v %+v", err, ss)
	}
	if _, err := s.Update(k, 2, nil, nil); err != kerr.InvalidShareSessionEpoch {
		t.Fatalf("epoch 2 of a session at 1: %v", err)
	}
	ss, err = s.Update(k, 1, []SessionPartition{b}, []SessionPartition{a})
	if err != nil || ss.Epoch != 2 || len(ss.Partitions) != 1 || ss.Partitions[0] != b {
		t.Fatalf("update: %v %+v", err, ss)
	}
	if _, err := s.Open(SessionKey{Group: "g", Member: "other"}, nil); err != kerr.ShareSessionLimitReached {
		t.Fatalf("a second session in a cache of one: %v", err)
	}
	if ss, err := s.Open(k, nil); err != nil || ss.Epoch != 1 {
		t.Fatalf("reopen replaces: %v", err)
	}
	if s.Close(k) == nil || s.Len() != 0 {
		t.Fatal("close")
	}
}
