// share_history.go: what a run records about share groups (KIP-932,
// "Queues for Kafka"), for the share checker (share.go).
//
// What it records: the share groups a run declares (ShareGroup: its
// topics, group.share.delivery.count.limit, the acquisition lock duration
// and share.auto.offset.reset), the records each ShareFetch acquired with
// their delivery counts (ShareAcquire), the acknowledgements (ShareAck,
// piggybacked on a ShareFetch or sent as a ShareAcknowledge), a member
// leaving (ShareLeave), and each share-partition state the brokers
// recovered from __share_group_state (ShareLoad).
//
// What it simplifies: one ShareAck op per partition and acknowledge type,
// not one per request. The history file (historyfile.go) keeps them all
// (share_group and share_load lines).

package checkers

import (
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// The acknowledge types of KIP-932 (Kafka's AcknowledgeType).
const (
	AckAccept  int8 = 1
	AckRelease int8 = 2
	AckReject  int8 = 3
)

// AckTypeName returns "accept", "release", "reject", or "ack(n)".
func AckTypeName(t int8) string {
	switch t {
	case AckAccept:
		return "accept"
	case AckRelease:
		return "release"
	case AckReject:
		return "reject"
	}
	return "ack(" + strconv.Itoa(int(t)) + ")"
}

// The persisted record states of a share-partition (Kafka's RecordState as
// __share_group_state stores it).
const (
	ShareStateAvailable    int8 = 0
	ShareStateAcknowledged int8 = 2
	ShareStateArchived     int8 = 4
)

// ShareGroup declares one share group the share checker judges.
type ShareGroup struct {
	Group string
	// Topics are the topics the group subscribes to: every acknowledged
	// send to them is owed a delivery.
	Topics []string
	// DeliveryCountLimit is group.share.delivery.count.limit (Kafka's
	// default 5).
	DeliveryCountLimit int16
	// LockDuration is group.share.record.lock.duration.ms (30000 ms).
	LockDuration sim.Duration
	// AutoOffsetReset is share.auto.offset.reset: "earliest", or "latest"
	// (Kafka's default: records written before the group first fetched a
	// partition are not owed).
	AutoOffsetReset string `json:",omitempty"`
	// Drained: the run ended with the group's members polling until
	// nothing was left, so a record never delivered, or delivered and
	// never finished, is an anomaly; without it, only counted in a note.
	Drained bool `json:",omitempty"`
}

// ShareLoad is one share-partition state a broker recovered from
// __share_group_state (ReadShareGroupState) when it became the partition's
// leader or first served the group.
type ShareLoad struct {
	Time      sim.Time
	Broker    int32
	Group     string
	Topic     string
	Partition int32
	// StateEpoch is the state's epoch; StartOffset the share-partition
	// start offset (SPSO): every record below it is done.
	StateEpoch  int32
	StartOffset int64
	Batches     []ShareStateBatch
}

// ShareStateBatch is one persisted batch of in-flight record states.
type ShareStateBatch struct {
	FirstOffset, LastOffset int64
	// DeliveryState is ShareStateAvailable, ShareStateAcknowledged or
	// ShareStateArchived.
	DeliveryState int8
	DeliveryCount int16
}

// done reports whether the load keeps offset as acknowledged or archived.
func (l ShareLoad) done(offset int64) bool {
	if offset < l.StartOffset {
		return true
	}
	for _, b := range l.Batches {
		if offset >= b.FirstOffset && offset <= b.LastOffset {
			return b.DeliveryState == ShareStateAcknowledged || b.DeliveryState == ShareStateArchived
		}
	}
	return false
}

// ShareGroup declares a share group (see History.ShareGroups); declaring
// one group twice replaces the first declaration.
func (r *Recorder) ShareGroup(g ShareGroup) {
	for i := range r.shareGroups {
		if r.shareGroups[i].Group == g.Group {
			r.shareGroups[i] = g
			return
		}
	}
	r.shareGroups = append(r.shareGroups, g)
}

// ShareLoad records a share-partition state recovered by a broker.
func (r *Recorder) ShareLoad(l ShareLoad) {
	l.Batches = append([]ShareStateBatch(nil), l.Batches...)
	r.shareLoads = append(r.shareLoads, l)
}

// ShareFetch records the invocation of a ShareFetch of one partition by
// member of group; ShareAcquired completes it.
func (r *Recorder) ShareFetch(t sim.Time, process, group, member, topic string, partition int32) OpID {
	return r.Invoke(Op{Process: process, Kind: ShareAcquire, Topic: topic, Partition: partition,
		Group: group, Member: member, Generation: -1, Leader: -1, Invoke: t})
}

// ShareAcquired completes a ShareFetch as OK with the records it acquired
// (each with its DeliveryCount).
func (r *Recorder) ShareAcquired(id OpID, t sim.Time, records []Record) {
	op := r.complete(id, t, OK, "", ShareAcquire)
	op.Records = append([]Record(nil), records...)
}

// ShareAcknowledge records the invocation of an acknowledgement of the
// records at offsets with ackType; ShareAcked (or Fail, Info) completes it.
func (r *Recorder) ShareAcknowledge(t sim.Time, process, group, member, topic string, partition int32, ackType int8, offsets []int64) OpID {
	recs := make([]Record, len(offsets))
	for i, o := range offsets {
		recs[i] = Record{Offset: o}
	}
	return r.Invoke(Op{Process: process, Kind: ShareAck, Topic: topic, Partition: partition,
		Group: group, Member: member, Generation: -1, Leader: -1, AckType: ackType, Records: recs, Invoke: t})
}

// ShareAcked completes an acknowledgement as OK (the partition's answer
// carried no error).
func (r *Recorder) ShareAcked(id OpID, t sim.Time) { r.complete(id, t, OK, "", ShareAck) }

// ShareLeft records that member of group left at t (its share session
// closed), completing at once.
func (r *Recorder) ShareLeft(t sim.Time, process, group, member string) {
	id := r.Invoke(Op{Process: process, Kind: ShareLeave, Group: group, Member: member, Generation: -1, Leader: -1, Invoke: t})
	r.complete(id, t, OK, "", ShareLeave)
}

// ShareUnfinished returns how many acknowledged sends owed to g (as the
// share checker's share-lost and share-unfinished read them) are not done
// yet: never delivered, or delivered and neither accepted, rejected nor
// delivered at the limit; sends still pending count too (a producer's
// backlog flushed at the end is owed like the rest), and an acknowledgement
// counts once answered (or unknown), not while pending. The end phase
// waits until none is.
func ShareUnfinished(h History, g ShareGroup) int {
	limit := g.DeliveryCountLimit
	if limit <= 0 {
		limit = 5
	}
	first := map[tp]sim.Time{}
	done := map[tp]map[int64]bool{}
	mark := func(k tp, o int64) {
		if done[k] == nil {
			done[k] = map[int64]bool{}
		}
		done[k][o] = true
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Group != g.Group {
			continue
		}
		k := tp{op.Topic, op.Partition}
		switch {
		case op.Kind == ShareAcquire && op.Outcome == OK:
			if t, ok := first[k]; !ok || op.Complete < t {
				first[k] = op.Complete
			}
			for _, r := range op.Records {
				if r.DeliveryCount >= limit {
					mark(k, r.Offset)
				}
			}
		case op.Kind == ShareAck && (op.Outcome == OK || op.Outcome == Info) && (op.AckType == AckAccept || op.AckType == AckReject):
			// NB: not a pending one: its answer may refuse it
			for _, r := range op.Records {
				mark(k, r.Offset)
			}
		}
	}
	n := 0
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind != Send || !slices.Contains(g.Topics, op.Topic) {
			continue
		}
		if op.Outcome == Pending {
			n++ // a send still on its way may yet be owed
			continue
		}
		if op.Outcome != OK {
			continue
		}
		k := tp{op.Topic, op.Partition}
		if g.AutoOffsetReset == "latest" {
			if t, ok := first[k]; !ok || op.Invoke <= t {
				continue
			}
		}
		if !done[k][op.Offset] {
			n++
		}
	}
	return n
}
