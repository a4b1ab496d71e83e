package share

import "github.com/kafkasim/kafkasim/sim"

// StateLoad is what a share-partition initialized from persisted state
// (a ReadShareGroupState answer from __share_group_state, after a leader
// move or on first use), for the history: a checker verifies that no
// acceptance acknowledged before Time is lost (an offset >= StartOffset
// outside an ACKNOWLEDGED or ARCHIVED batch).
type StateLoad struct {
	Time        sim.Time
	Group       string
	Topic       string
	Partition   int32
	StateEpoch  int32
	StartOffset int64 // the SPSO
	Batches     []StateBatch
}

// StateBatch is a persisted in-flight range (PersisterStateBatch):
// DeliveryState 0 available, 2 acknowledged, 4 archived.
type StateBatch struct {
	FirstOffset, LastOffset int64
	DeliveryState           int8
	DeliveryCount           int16
}
