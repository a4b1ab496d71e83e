package assignor

// This file is the cooperative-sticky assignor (Kafka's
// CooperativeStickyAssignor, KIP-429): the sticky algorithm over each
// member's ConsumerProtocol owned partitions and generation, followed by
// adjustAssignment: a partition that changes owner is left out of its new
// owner's assignment this round, so its old owner revokes it first and a
// follow-up rebalance hands it over. Under the EAGER protocol a member
// joins owning nothing, and this changes nothing.

import "encoding/binary"

// CooperativeSticky is the cooperative-sticky assignor.
type CooperativeSticky struct{}

// Name implements Assignor.
func (CooperativeSticky) Name() string { return "cooperative-sticky" }

// Assign implements Assignor. A partition taken from one member and given
// to another is missing from the result: it is assigned to no one until
// its previous owner has revoked it.
func (CooperativeSticky) Assign(members []Member, partitions map[string]int32) Assignment {
	out, transferring := stickyAssign(members, partitions, cooperativeMemberData)
	if transferring == nil {
		transferring = TransferringOwnership(members, out)
	}
	for tp, id := range transferring {
		out[id] = removeTP(out[id], tp)
	}
	return out
}

// cooperativeMemberData is CooperativeStickyAssignor.memberData: the owned
// partitions of the subscription, with the subscription's generation (v2+)
// or else the one in CooperativeStickyAssignor's user data (an int32).
func cooperativeMemberData(m Member) ([]TopicPartition, int32) {
	if m.Generation > 0 {
		return m.Owned, m.Generation
	}
	if len(m.UserData) >= 4 {
		return m.Owned, int32(binary.BigEndian.Uint32(m.UserData))
	}
	return m.Owned, DefaultGeneration
}

// TransferringOwnership is CooperativeStickyAssignor's
// computePartitionsTransferringOwnership: every partition a that a member
// is assigned but did not own, which another member owned and is no longer
// assigned, mapped to the member it goes to.
func TransferringOwnership(members []Member, a Assignment) map[TopicPartition]string {
	added := map[TopicPartition]string{}
	revoked := map[TopicPartition]bool{}
	for _, m := range members {
		owned := map[TopicPartition]bool{}
		for _, tp := range m.Owned {
			owned[tp] = true
		}
		got := map[TopicPartition]bool{}
		for _, tp := range a[m.ID] {
			got[tp] = true
			if !owned[tp] {
				added[tp] = m.ID
			}
		}
		for _, tp := range m.Owned {
			if !got[tp] {
				revoked[tp] = true
			}
		}
	}
	for tp := range added {
		if !revoked[tp] {
			delete(added, tp)
		}
	}
	return added
}

// EncodeCooperativeStickyUserData is CooperativeStickyAssignor's
// subscriptionUserData: COOPERATIVE_STICKY_ASSIGNOR_USER_DATA_V0, the
// member's last generation as an int32. NB: the consumer here does not
// send it (Kafka's does, always); cooperativeMemberData reads it only when
// the subscription carries no generation, when it changes nothing for a
// member that owns no partitions (a reset member has lost them).
func EncodeCooperativeStickyUserData(generation int32) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(generation))
}
