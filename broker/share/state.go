package share

// This file is the share coordinator's state machine (Kafka 4.2
// share-coordinator ShareCoordinatorShard): the persisted state of the
// share-partitions whose keys fall in the __share_group_state partitions
// this broker leads. The host serves InitializeShareGroupState,
// ReadShareGroupState, WriteShareGroupState, DeleteShareGroupState and
// ReadShareGroupStateSummary with it (server/share_coordinator.go): a
// change is checked here, appended to the partition as a record, and
// applied (Apply) once committed; a coordinator elected after a fail-over
// rebuilds the state from the partition's log (Load).
//
// Fencing, as Kafka's: a write or read with a leader epoch below the
// stored one is FENCED_LEADER_EPOCH (an old partition leader), a write
// with a state epoch below the stored one FENCED_STATE_EPOCH (state reset
// by an admin since). A read records the reader's leader epoch at once
// and as a ShareUpdate record, and is answered once that record commits,
// so it sees every write appended before it.
//
// Simplifications: every write is a ShareSnapshot of the whole state
// (Kafka writes ShareUpdate records of the changed batches and a
// snapshot every share.coordinator.snapshot.update.records.per.snapshot);
// the only ShareUpdate written is a read's leader epoch; one met when
// loading replaces the batches it overlaps.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// StateStore is one broker's share coordinator state.
type StateStore struct {
	numPartitions int
	owned         map[int32]bool
	states        map[StateKey]*StateValue
}

// NewStateStore returns a store for a state topic of n partitions.
func NewStateStore(n int) *StateStore {
	return &StateStore{numPartitions: n, owned: map[int32]bool{}, states: map[StateKey]*StateValue{}}
}

// PartitionOf returns k's __share_group_state partition.
func (s *StateStore) PartitionOf(k StateKey) int32 { return StatePartition(k, s.numPartitions) }

// Owns reports whether this coordinator leads and has loaded partition.
func (s *StateStore) Owns(partition int32) bool { return s.owned[partition] }

// Resign forgets the states of partition.
func (s *StateStore) Resign(partition int32) {
	delete(s.owned, partition)
	for k := range s.states {
		if s.PartitionOf(k) == partition {
			delete(s.states, k)
		}
	}
}

// Record is a __share_group_state record's key and value (nil value: a
// tombstone).
type Record struct{ Key, Value []byte }

// Load rebuilds partition's states from its records in offset order and
// marks it owned.
func (s *StateStore) Load(partition int32, recs []Record) error {
	s.Resign(partition)
	for _, r := range recs {
		if err := s.Apply(r); err != nil {
			return err
		}
	}
	s.owned[partition] = true
	return nil
}

// Apply applies one committed record.
func (s *StateStore) Apply(r Record) error {
	typ, k, err := DecodeKey(r.Key)
	if err != nil {
		return err
	}
	if r.Value == nil {
		delete(s.states, k)
		return nil
	}
	v, err := DecodeValue(typ, r.Value)
	if err != nil {
		return err
	}
	cur := s.states[k]
	if typ == RecordShareSnapshot || cur == nil {
		if cur != nil {
			// The leader epoch only grows: a read may have raised it
			// before this record, appended earlier, committed.
			v.LeaderEpoch = max(v.LeaderEpoch, cur.LeaderEpoch)
			if typ == RecordShareUpdate {
				v.StateEpoch = cur.StateEpoch
			}
		}
		s.states[k] = &v
		return nil
	}
	cur.LeaderEpoch = max(cur.LeaderEpoch, v.LeaderEpoch)
	if v.StartOffset >= 0 {
		cur.StartOffset = v.StartOffset
	}
	for _, nb := range v.Batches {
		cur.Batches = slices.DeleteFunc(cur.Batches, func(b StateBatch) bool {
			return b.FirstOffset <= nb.LastOffset && nb.FirstOffset <= b.LastOffset
		})
		cur.Batches = append(cur.Batches, nb)
	}
	slices.SortFunc(cur.Batches, func(a, b StateBatch) int { return int(a.FirstOffset - b.FirstOffset) })
	return nil
}

// check returns NOT_COORDINATOR unless k's partition is owned here.
func (s *StateStore) check(k StateKey) *kerr.Error {
	if !s.owned[s.PartitionOf(k)] {
		return kerr.NotCoordinator
	}
	return nil
}

// Read checks a ReadShareGroupState of k and records the reader's
// leader epoch at once (a write from an older leader checked after it is
// FENCED_LEADER_EPOCH). found false: k was never initialized. Otherwise it
// returns a ShareUpdate record of the leader epoch, which the host appends
// and answers the read after, with Peek: so the answer holds every write
// appended before the read (Kafka's coordinator runs the read as a write
// operation, in order with the others).
func (s *StateStore) Read(k StateKey, leaderEpoch int32) (Record, bool, *kerr.Error) {
	if err := s.check(k); err != nil {
		return Record{}, false, err
	}
	cur := s.states[k]
	if cur == nil {
		return Record{}, false, nil
	}
	if leaderEpoch < cur.LeaderEpoch {
		return Record{}, false, kerr.FencedLeaderEpoch
	}
	cur.LeaderEpoch = leaderEpoch
	v := StateValue{SnapshotEpoch: cur.SnapshotEpoch, LeaderEpoch: leaderEpoch, StartOffset: -1}
	return Record{Key: EncodeKey(RecordShareUpdate, k), Value: EncodeValue(RecordShareUpdate, v)}, true, nil
}

// Peek returns k's state as applied (found false: none).
func (s *StateStore) Peek(k StateKey) (StateValue, bool) {
	cur := s.states[k]
	if cur == nil {
		return StateValue{StartOffset: -1}, false
	}
	out := *cur
	out.Batches = slices.Clone(cur.Batches)
	return out, true
}

// Summary returns k's state epoch, leader epoch and start offset.
func (s *StateStore) Summary(k StateKey) (StateValue, bool, *kerr.Error) {
	if err := s.check(k); err != nil {
		return StateValue{}, false, err
	}
	cur := s.states[k]
	if cur == nil {
		return StateValue{StartOffset: -1}, false, nil
	}
	return StateValue{StateEpoch: cur.StateEpoch, LeaderEpoch: cur.LeaderEpoch, StartOffset: cur.StartOffset}, true, nil
}

// Write checks a WriteShareGroupState of k and returns the record to
// append (a ShareSnapshot of the new state).
func (s *StateStore) Write(k StateKey, v StateValue) (Record, *kerr.Error) {
	if err := s.check(k); err != nil {
		return Record{}, err
	}
	if cur := s.states[k]; cur != nil {
		switch {
		case v.LeaderEpoch < cur.LeaderEpoch:
			return Record{}, kerr.FencedLeaderEpoch
		case v.StateEpoch < cur.StateEpoch:
			return Record{}, kerr.FencedStateEpoch
		}
		v.SnapshotEpoch = cur.SnapshotEpoch + 1
		if v.StartOffset < 0 {
			v.StartOffset = cur.StartOffset
		}
	}
	return Record{Key: EncodeKey(RecordShareSnapshot, k), Value: EncodeValue(RecordShareSnapshot, v)}, nil
}

// Initialize returns the record that (re)initializes k at stateEpoch and
// startOffset with no batches (InitializeShareGroupState, and
// AlterShareGroupOffsets through it).
func (s *StateStore) Initialize(k StateKey, stateEpoch int32, startOffset int64) (Record, *kerr.Error) {
	if err := s.check(k); err != nil {
		return Record{}, err
	}
	v := StateValue{StateEpoch: stateEpoch, StartOffset: startOffset}
	if cur := s.states[k]; cur != nil {
		if stateEpoch < cur.StateEpoch {
			return Record{}, kerr.FencedStateEpoch
		}
		v.SnapshotEpoch, v.LeaderEpoch = cur.SnapshotEpoch+1, cur.LeaderEpoch
	}
	return Record{Key: EncodeKey(RecordShareSnapshot, k), Value: EncodeValue(RecordShareSnapshot, v)}, nil
}

// Delete returns the tombstone of k (DeleteShareGroupState).
func (s *StateStore) Delete(k StateKey) (Record, *kerr.Error) {
	if err := s.check(k); err != nil {
		return Record{}, err
	}
	return Record{Key: EncodeKey(RecordShareSnapshot, k)}, nil
}

// Keys returns the keys of group's states held here, sorted.
func (s *StateStore) Keys(group string) []StateKey {
	var out []StateKey
	for k := range s.states {
		if k.Group == group {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b StateKey) int {
		if c := slices.Compare(a.TopicID[:], b.TopicID[:]); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return out
}
