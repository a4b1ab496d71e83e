package serve

// This file records a served run's consumer groups from the brokers' side,
// for the group checker: each SyncGroup answer that hands a member of a
// "consumer" group its assignment is an Assign of every partition in it
// (and a Revoke of each partition the member held and no longer does),
// each member declared a consumer of its group.
//
// What it judges, and what not: the group checker's double-owner (no
// partition given to two members in one generation: the coordinator's
// generations and the group leader's assignor) is judged, with a static
// member's new member id taking its partitions over in the same
// generation judged a handover (group.instance.id, KIP-345). Commits and
// deliveries are not recorded: a real client may seek and commit a lower
// offset on purpose, which the brokers cannot tell from a lost commit
// (commit-backwards, offset-rewind), and a fetched record is not a record
// the application processed, so the consumer checker says not-judged
// (harness.Runner.Judge) where a script's consumers are judged.

import (
	"cmp"
	"slices"

	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/share"
	"github.com/kafkasim/kafkasim/broker/txn"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupKey names a member of a group.
type groupKey struct{ group, member string }

// synced records the assignment a SyncGroup answer gave a member.
func (hs *historian) synced(req *kmsg.SyncGroupRequest, resp *kmsg.SyncGroupResponse, now sim.Time) {
	if resp.ErrorCode != 0 || req.MemberID == "" {
		return
	}
	if pt := resp.ProtocolType; pt != nil && *pt != "consumer" {
		return // a Connect worker's or another protocol's group
	}
	if pt := req.ProtocolType; pt != nil && *pt != "consumer" {
		return
	}
	var a kmsg.ConsumerMemberAssignment
	if len(resp.MemberAssignment) > 0 && a.ReadFrom(resp.MemberAssignment) != nil {
		return // not the consumer protocol's assignment
	}
	g, m := req.Group, req.MemberID
	if hs.members == nil {
		hs.members = map[groupKey]map[partKey]bool{}
	}
	k := groupKey{g, m}
	if _, ok := hs.members[k]; !ok {
		// NB: the process is the member id, unique in its group, so that
		// two members of one client (or of two clients with one
		// client.id) are two owners.
		// A static member's (KIP-345) instance id makes its restart,
		// a new member id in the same generation, a handover.
		inst := ""
		if req.InstanceID != nil {
			inst = *req.InstanceID
		}
		hs.rec.Consumer(checkers.Consumer{Process: m, Group: g, GroupInstanceID: inst})
	}
	now2 := map[partKey]bool{}
	for _, t := range a.Topics {
		if t.Topic == coordinator.OffsetsTopic || t.Topic == txn.StateTopic || t.Topic == share.StateTopic {
			continue
		}
		for _, p := range t.Partitions {
			pk := partKey{t.Topic, p}
			if now2[pk] {
				continue
			}
			now2[pk] = true
			hs.rec.Assign(now, m, g, m, req.Generation, t.Topic, p)
		}
	}
	for _, pk := range sortedParts(hs.members[k]) {
		if !now2[pk] {
			hs.rec.Revoke(now, m, g, m, req.Generation, pk.topic, pk.partition, "revoked")
		}
	}
	hs.members[k] = now2
}

// partKey is a topic partition.
type partKey struct {
	topic     string
	partition int32
}

// sortedParts returns a set's partitions in order (a map's order must not
// reach the history).
func sortedParts(set map[partKey]bool) []partKey {
	out := make([]partKey, 0, len(set))
	for pk := range set {
		out = append(out, pk)
	}
	slices.SortFunc(out, func(a, b partKey) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	return out
}
