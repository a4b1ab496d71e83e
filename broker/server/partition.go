package server

// This file is a partition's replication state on one broker: its role,
// leader epoch, ISR, high watermark, and, on the leader, what it knows of
// each follower (Kafka's Partition and Replica classes).
//
// Simplifications vs Kafka, and why:
//   - The leader advances the HW to the minimum LEO over the ISR only (0.11
//     also counted replicas caught up within replica.lag.time.max.ms that
//     were not yet in the ISR; that only ever lowers the HW).
//   - One ISR change is in flight to ZooKeeper at a time; a stale zkVersion
//     drops the change, as Kafka does, and the controller's next
//     LeaderAndIsr brings the partition up to date.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

// Role is a replica's role in its partition.
type Role uint8

// The roles.
const (
	Offline  Role = iota // no LeaderAndIsr received yet (or stopped)
	Leader               // serves produce and fetch
	Follower             // fetches from the leader
)

func (r Role) String() string { return [...]string{"offline", "leader", "follower"}[r] }

// remoteReplica is what a leader knows of one follower.
type remoteReplica struct {
	id                 int32
	leo                int64 // -1 until the follower's first fetch in this epoch
	lastCaughtUp       sim.Time
	lastFetchLeaderLEO int64
	lastFetchTime      sim.Time
	// logStart is the follower's log start offset as its last fetch in
	// this epoch reported it (-1 before one): DeleteRecords' low
	// watermark (delete_records.go).
	logStart int64
}

// Partition is one replica of a topic-partition on this broker.
// Invariant: hw <= log.LogEndOffset(); on the leader, hw never decreases
// within an epoch.
type Partition struct {
	tp   storage.TopicPartition
	name string // tp.String(), kept for the trace
	log  *storage.Log

	role            Role
	leader          int32 // -1 when none
	leaderEpoch     int32
	controllerEpoch int32
	isr             []int32
	replicas        []int32 // the assignment, preferred leader first
	zkVersion       int32
	hw              int64

	// Leader state.
	leaderEpochStartOffset int64
	remotes                []*remoteReplica // sorted by id
	isrUpdateInFlight      bool
	// pendingISR is the ISR being written while isrUpdateInFlight; the HW
	// counts its members too (maybeIncrementHW).
	pendingISR []int32
	producers  map[int64]*producerEntry // idempotent producers' state

	// Topic configuration in force.
	minISR  int
	unclean bool
	// strictMinISR is KIP-966's rule, on with ELR (KRaft,
	// eligible.leader.replicas.version=1): the HW advances only while the
	// ISR has at least minISR members.
	strictMinISR bool
	// mutants are the planted bugs switched on (package mutant; none is
	// Kafka): the broker's.
	mutants mutant.Set
}

// TopicPartition returns the partition's name.
func (p *Partition) TopicPartition() storage.TopicPartition { return p.tp }

// Log returns the replica's log.
func (p *Partition) Log() *storage.Log { return p.log }

// Role returns the replica's role.
func (p *Partition) Role() Role { return p.role }

// LeaderEpoch returns the leader epoch the replica last heard of.
func (p *Partition) LeaderEpoch() int32 { return p.leaderEpoch }

// Leader returns the leader's broker id, -1 if none.
func (p *Partition) Leader() int32 { return p.leader }

// ISR returns a copy of the in-sync replica set.
func (p *Partition) ISR() []int32 { return slices.Clone(p.isr) }

// MinISR returns the min.insync.replicas the replica applies to acks=all
// writes (the topic's, else the broker's).
func (p *Partition) MinISR() int { return p.minISR }

// PendingISR returns a copy of the ISR an ISR update in flight proposes
// (AlterPartition, or the ZooKeeper write), nil when none is in flight.
func (p *Partition) PendingISR() []int32 {
	if !p.isrUpdateInFlight {
		return nil
	}
	return slices.Clone(p.pendingISR)
}

// PendingISRView is PendingISR without the copy: the caller must not
// modify or keep it.
func (p *Partition) PendingISRView() []int32 {
	if !p.isrUpdateInFlight {
		return nil
	}
	return p.pendingISR
}

// Replicas returns a copy of the assignment.
func (p *Partition) Replicas() []int32 { return slices.Clone(p.replicas) }

// HighWatermark returns the replica's HW.
func (p *Partition) HighWatermark() int64 { return p.hw }

// LastStableOffset returns the LSO: the first offset of the earliest
// ongoing transaction, or the HW if it is lower or none is ongoing
// (KIP-98). A read_committed consumer reads below it.
func (p *Partition) LastStableOffset() int64 { return p.lsoAt(p.hw) }

// lsoAt is the LSO for high watermark hw.
func (p *Partition) lsoAt(hw int64) int64 {
	if p.mutants.On(mutant.LSOPastOpenTxn) {
		// NOT Kafka: the LSO follows the HW past the ongoing
		// transactions, so read_committed reads their records.
		return hw
	}
	if f, ok := p.log.FirstUnstableOffset(); ok && f < hw {
		return f
	}
	return hw
}

// LogEndOffset returns the replica's LEO.
func (p *Partition) LogEndOffset() int64 { return p.log.LogEndOffset() }

func (p *Partition) remote(id int32) *remoteReplica {
	for _, r := range p.remotes {
		if r.id == id {
			return r
		}
	}
	return nil
}

func (p *Partition) inISR(id int32) bool { return slices.Contains(p.isr, id) }

// becomeLeader sets up leader state for a new epoch. As in Kafka, the HW is
// the replica's own (possibly lagging) HW, and every follower's LEO is
// unknown until it fetches, which holds the HW back until the whole ISR has
// reported in this epoch.
func (p *Partition) becomeLeader(self int32, st partitionState, now sim.Time) {
	p.role = Leader
	p.leader = self
	p.apply(st)
	p.leaderEpochStartOffset = p.log.LogEndOffset()
	p.remotes = p.remotes[:0]
	for _, id := range p.replicas {
		if id == self {
			continue
		}
		r := &remoteReplica{id: id, leo: -1, lastFetchLeaderLEO: -1, logStart: -1}
		if p.inISR(id) {
			r.lastCaughtUp = now
		}
		p.remotes = append(p.remotes, r)
	}
	slices.SortFunc(p.remotes, func(a, b *remoteReplica) int { return int(a.id - b.id) })
	p.isrUpdateInFlight, p.pendingISR = false, nil
	p.rebuildProducers()
}

// becomeFollower records the new leader and epoch.
func (p *Partition) becomeFollower(st partitionState) {
	p.role = Follower
	p.leader = st.leader
	p.apply(st)
	p.remotes = p.remotes[:0]
	p.isrUpdateInFlight, p.pendingISR = false, nil
	p.producers = nil
}

func (p *Partition) apply(st partitionState) {
	p.leaderEpoch = st.leaderEpoch
	p.controllerEpoch = st.controllerEpoch
	p.isr = slices.Clone(st.isr)
	p.replicas = slices.Clone(st.replicas)
	p.zkVersion = st.zkVersion
}

// updateFollowerFetchState records a follower's fetch at fetchOffset (its
// LEO), as Kafka's Replica.updateFetchState does.
func (p *Partition) updateFollowerFetchState(r *remoteReplica, fetchOffset int64, now sim.Time) {
	leaderLEO := p.log.LogEndOffset()
	switch {
	case fetchOffset >= leaderLEO:
		r.lastCaughtUp = max(r.lastCaughtUp, now)
	case fetchOffset >= r.lastFetchLeaderLEO && r.lastFetchLeaderLEO >= 0:
		r.lastCaughtUp = max(r.lastCaughtUp, r.lastFetchTime)
	}
	r.leo = fetchOffset
	r.lastFetchLeaderLEO = leaderLEO
	r.lastFetchTime = now
}

// maybeIncrementHW advances the leader's HW to the minimum LEO of the ISR
// and reports whether it moved. A follower whose LEO is unknown in this
// epoch holds it back. Under the strict min ISR rule (KIP-966) an ISR below
// min.insync.replicas holds it where it is: every record below the HW is
// then on at least min.insync.replicas replicas, which is what makes the
// ELR safe to elect.
func (p *Partition) maybeIncrementHW() bool {
	if p.strictMinISR && len(p.isr) < p.minISR {
		return false
	}
	newHW := p.log.LogEndOffset()
	if p.mutants.On(mutant.HWBeforeISRFetch) {
		// NOT Kafka (mutant hw-before-isr-fetch): the HW follows the
		// leader's own LEO, whatever the ISR fetched.
		if newHW > p.hw {
			p.hw = newHW
			return true
		}
		return false
	}
	for _, id := range p.isr {
		if r := p.remote(id); r != nil {
			newHW = min(newHW, r.leo)
		}
	}
	// An ISR expansion being written counts already (KIP-497's "maximal
	// ISR"; in 2.x the write holds the partition's lock, so the HW cannot
	// move during it either): a follower joins at an LEO the HW has not
	// passed.
	for _, id := range p.pendingISR {
		if r := p.remote(id); r != nil && !slices.Contains(p.isr, id) {
			newHW = min(newHW, r.leo)
		}
	}
	if newHW > p.hw {
		p.hw = newHW
		return true
	}
	return false
}

// outOfSync returns the ISR followers that have not caught up with the
// leader's LEO within maxLag (Kafka's getOutOfSyncReplicas).
func (p *Partition) outOfSync(now sim.Time, maxLag sim.Duration) []int32 {
	var out []int32
	leo := p.log.LogEndOffset()
	for _, id := range p.isr {
		r := p.remote(id)
		if r == nil {
			continue
		}
		if r.leo != leo && now.Sub(r.lastCaughtUp) > maxLag {
			out = append(out, id)
		}
	}
	return out
}

// canJoinISR reports whether a follower outside the ISR may join: it has
// reached the HW and, with KIP-320 rules, the start of the leader's epoch.
func (p *Partition) canJoinISR(r *remoteReplica, kip320 bool) bool {
	if p.mutants.On(mutant.ISRExpandsLagging) {
		// NOT Kafka (mutant isr-expands-lagging): any fetch lets a
		// follower in, caught up or not.
		return !p.inISR(r.id)
	}
	if p.inISR(r.id) || r.leo < p.hw {
		return false
	}
	return !kip320 || r.leo >= p.leaderEpochStartOffset
}

// ISRView returns the ISR without copying it, for observers that only
// read it between events; it must not be modified or kept.
func (p *Partition) ISRView() []int32 { return p.isr }
