// final.go: the end state of a cluster and the run's facts, as the checkers
// judge them.
//
// What it holds: per partition, each replica's state and log at the end of
// the run, the current leader, and the configuration and fault facts that
// decide whether a loss is within Kafka's durability contract.
//
// What it simplifies: a replica's log is a list of (offset, leader epoch,
// value) entries; batches, keys and headers are not kept. The facts are what
// the runner knows as the omniscient simulator, not what Kafka records.

package checkers

import (
	"sort"
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// Role is a replica's role for its partition.
type Role uint8

// The roles of a replica.
const (
	// NoRole: offline, or not yet told its role (no LeaderAndIsr since start).
	NoRole Role = iota
	Leader
	Follower
)

// String returns "none", "leader" or "follower".
func (r Role) String() string {
	switch r {
	case Leader:
		return "leader"
	case Follower:
		return "follower"
	}
	return "none"
}

// Entry is one record of a replica's log.
type Entry struct {
	Offset      int64
	LeaderEpoch int32
	Value       string
	// Key is the record's key ("" for none): on a compacted topic, a
	// later record of the same key lets the cleaner remove this one.
	Key string `json:",omitempty"`
}

// ReplicaState is a replica's replication state, as the invariants monitor
// observes it after every event and as Final reports it at the end.
type ReplicaState struct {
	Broker int32
	// Alive is false while the broker is crashed (its in-memory state gone).
	Alive bool
	Role  Role
	// LeaderEpoch is the epoch the replica believes current; -1 if unknown.
	LeaderEpoch int32
	// LEO is the log end offset, HW the high watermark (both exclusive).
	LEO, HW int64
	// ISR is the leader's view of the in-sync replicas (leaders only).
	ISR []int32
	// PendingISR is the ISR a leader's AlterPartition (or ZooKeeper ISR
	// write) in flight proposes; nil when none is in flight. The leader's
	// maximal ISR (KIP-497) is ISR ∪ PendingISR.
	PendingISR []int32
	// MinISR is the leader's min.insync.replicas for acks=all writes
	// (leaders only; 0 when unknown): the invariants monitor's
	// acked-below-min-isr check.
	MinISR int
	// UncleanRestart is true when the broker's last restart followed a failure
	// that lost unflushed data (power loss): invariant breaks involving it are
	// marked Permitted.
	UncleanRestart bool
}

// String renders the state as "b1 leader e2 LEO=3 HW=2 ISR=[1 2]".
func (r ReplicaState) String() string {
	s := "b" + strconv.Itoa(int(r.Broker)) + " " + r.Role.String() +
		" e" + strconv.Itoa(int(r.LeaderEpoch)) +
		" LEO=" + strconv.FormatInt(r.LEO, 10) + " HW=" + strconv.FormatInt(r.HW, 10)
	if r.Role == Leader {
		s += " ISR=" + brokerList(r.ISR)
	}
	if !r.Alive {
		s += " (dead)"
	}
	return s
}

// Replica is a replica's final state and log.
type Replica struct {
	ReplicaState
	// Log is the replica's log in offset order.
	Log []Entry
}

// At returns the entry at offset, and false if the log does not hold it.
func (r Replica) At(offset int64) (Entry, bool) {
	i := sort.Search(len(r.Log), func(i int) bool { return r.Log[i].Offset >= offset })
	if i < len(r.Log) && r.Log[i].Offset == offset {
		return r.Log[i], true
	}
	return Entry{}, false
}

// PartitionFinal is one partition at the end of a run.
type PartitionFinal struct {
	Topic     string
	Partition int32
	// Leader is the controller's current leader, or -1 if there is none.
	Leader int32
	// LeaderEpoch is the controller's current leader epoch.
	LeaderEpoch int32
	// Replicas are the assigned replicas, in any order.
	Replicas []Replica
	// Compacted is set when the log cleaner removed records of the
	// partition (cleanup.policy with compact): a keyed record missing from
	// the final log while a later record of its key is committed was
	// removed by design, not lost (ackedloss.go).
	Compacted bool `json:",omitempty"`
	// DeletedAt is when a DeleteTopics request last deleted the
	// partition's topic (0: never); DeletedBelow the highest log start
	// offset a DeleteRecords request set (0: none). Records gone by
	// request are not lost (deletion.go).
	DeletedAt    sim.Time `json:",omitempty"`
	DeletedBelow int64    `json:",omitempty"`
}

// Replica returns the replica on broker, and false if there is none.
func (p PartitionFinal) Replica(broker int32) (Replica, bool) {
	for _, r := range p.Replicas {
		if r.Broker == broker {
			return r, true
		}
	}
	return Replica{}, false
}

// Judge returns the replica whose log up to its HW is taken as the
// partition's final committed log: the current Leader if it is alive;
// otherwise the live replica with the highest HW (then LEO, then leader
// epoch, then lowest broker id). It returns false if no replica is alive.
func (p PartitionFinal) Judge() (Replica, bool) {
	if r, ok := p.Replica(p.Leader); ok && p.Leader >= 0 && r.Alive {
		return r, true
	}
	var best Replica
	found := false
	for _, r := range p.Replicas {
		if !r.Alive {
			continue
		}
		if !found || better(r, best) {
			best, found = r, true
		}
	}
	return best, found
}

func better(a, b Replica) bool {
	if a.HW != b.HW {
		return a.HW > b.HW
	}
	if a.LEO != b.LEO {
		return a.LEO > b.LEO
	}
	if a.LeaderEpoch != b.LeaderEpoch {
		return a.LeaderEpoch > b.LeaderEpoch
	}
	return a.Broker < b.Broker
}

// FailureKind says how a broker failed.
type FailureKind uint8

// The kinds of broker failure.
const (
	Crash     FailureKind = iota + 1 // the process died
	PowerLoss                        // the machine lost power
	Isolated                         // a network partition cut it off
	Paused                           // a long pause (GC, VM)
	// DiskWiped: the node, down, came back with a blank disk (the
	// wipe-disk step): it lost every byte, flushed or not, and Kafka's
	// storage tool formatted it anew. A wiped replica counts as one that
	// lost unflushed data (LostUnflushed), and more; a wiped voter of a
	// static KRaft quorum is KAFKA-14077's hazard (checkers/raft.go).
	DiskWiped
)

// String returns "crash", "power-loss", "isolated", "paused" or "wipe-disk".
func (k FailureKind) String() string {
	switch k {
	case Crash:
		return "crash"
	case PowerLoss:
		return "power-loss"
	case Isolated:
		return "isolated"
	case Paused:
		return "paused"
	case DiskWiped:
		return "wipe-disk"
	}
	return "failure(" + strconv.Itoa(int(k)) + ")"
}

// Failure is one fault that hit a broker during the run.
type Failure struct {
	Broker int32
	Kind   FailureKind
	// Time is when it started; End when the broker was back (restarted,
	// reconnected, resumed), or 0 if it never was.
	Time, End sim.Time
	// LostUnflushed is true when the broker lost data not yet flushed to
	// disk (a crash or power loss with the page cache dropped).
	LostUnflushed bool
	// Controller is set for a dedicated KRaft controller (node.id 3000+,
	// c0, c1, ...): it holds no partition replica, so its failure is
	// never a loss fact (contract.go); it is kept for the timeline and for
	// Healed.
	Controller bool `json:",omitempty"`
}

// down reports whether the failure covers instant t.
func (f Failure) down(t sim.Time) bool { return t >= f.Time && (f.End == 0 || t < f.End) }

// UncleanElection is one election of a leader from outside the ISR
// (unclean.leader.election.enable=true).
type UncleanElection struct {
	Topic     string
	Partition int32
	Broker    int32
	Epoch     int32
	Time      sim.Time
}

// Facts are the configuration and fault facts of a run that decide whether
// an anomaly is within Kafka's contract.
type Facts struct {
	// ReplicationFactor of the topics; 0 means "the number of replicas in
	// the partition's Final".
	ReplicationFactor int
	// MinInsyncReplicas is min.insync.replicas (for descriptions).
	MinInsyncReplicas int
	// UncleanElectionEnabled is unclean.leader.election.enable.
	UncleanElectionEnabled bool
	// EligibleLeaderReplicas is KIP-966 part 1 on (KRaft,
	// eligible.leader.replicas.version=1): the contract's rules 4 and 5
	// (the last replica standing, an unclean shutdown re-elected) no
	// longer permit a loss.
	EligibleLeaderReplicas bool
	// Offline lists the partitions left without a leader by design at the
	// end (KIP-966: no eligible replica, unclean election off): their
	// replicas need not converge.
	Offline []OfflinePartition `json:",omitempty"`
	// Unwritable lists the partitions, internal ones included, with fewer
	// replicas than their min.insync.replicas at the end of the run: Kafka
	// refuses every acks=all write to them (NOT_ENOUGH_REPLICAS), whatever
	// heals, so what needs such a write (a transaction's commit, through
	// __transaction_state) may never complete.
	Unwritable []OfflinePartition `json:",omitempty"`
	// UncleanElections lists every unclean election that happened.
	UncleanElections []UncleanElection
	// Failures lists every broker fault, in any order.
	Failures []Failure
	// Healed is true when, at the end, every broker is alive and no network
	// partition remains: the divergence checker then requires convergence.
	Healed bool
	// ISRChanges lists every ISR the partitions' state in ZooKeeper (or the
	// script's manual controller) took, in time order. A partition with no
	// entry is taken to have all its replicas in the ISR.
	ISRChanges []ISRChange
}

// ISRChange is a partition's leader and ISR as recorded from Time on.
type ISRChange struct {
	Topic     string
	Partition int32
	Time      sim.Time
	ISR       []int32
	// Leader is the leader of the state written (-1: none, or not known).
	Leader int32
	// LeaderEpoch is the leader epoch of the state written (-1: not known,
	// as for a leader's own ISR change, which keeps its epoch).
	LeaderEpoch int32
}

// Final is the end state of a run.
type Final struct {
	Partitions []PartitionFinal
	Facts      Facts
	// Liveness is what the liveness phase observed (liveness.go), or nil
	// when the run had none; the liveness verdict is then Unknown.
	Liveness *Liveness `json:",omitempty"`
	// Raft is the metadata quorum's events and final logs on a KRaft run
	// (raft.go), nil in ZooKeeper mode.
	Raft *RaftRun `json:",omitempty"`
}

// Partition returns the final state of topic-partition, and false if Final
// does not hold it.
func (f Final) Partition(topic string, partition int32) (PartitionFinal, bool) {
	for _, p := range f.Partitions {
		if p.Topic == topic && p.Partition == partition {
			return p, true
		}
	}
	return PartitionFinal{}, false
}

// sortedPartitions returns the partitions in topic, partition order.
func (f Final) sortedPartitions() []PartitionFinal {
	ps := append([]PartitionFinal(nil), f.Partitions...)
	sort.SliceStable(ps, func(i, j int) bool {
		return tp{ps[i].Topic, ps[i].Partition}.less(tp{ps[j].Topic, ps[j].Partition})
	})
	return ps
}

// sortedReplicas returns the replicas in broker id order.
func sortedReplicas(rs []Replica) []Replica {
	out := append([]Replica(nil), rs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Broker < out[j].Broker })
	return out
}

// committed returns the entries of r below its HW.
func committed(r Replica) []Entry {
	i := sort.Search(len(r.Log), func(i int) bool { return r.Log[i].Offset >= r.HW })
	return r.Log[:i]
}

func brokerList(ids []int32) string {
	s := "["
	for i, id := range ids {
		if i > 0 {
			s += " "
		}
		s += strconv.Itoa(int(id))
	}
	return s + "]"
}

// OfflinePartition is a partition the cluster keeps leaderless by design
// at the end of a run, and why (the evidence a permitted anomaly names).
type OfflinePartition struct {
	Topic     string
	Partition int32
	Why       string
}

// offlineWhy returns why topic-partition is offline by design, or "".
func offlineWhy(off []OfflinePartition, topic string, partition int32) string {
	for _, o := range off {
		if o.Topic == topic && o.Partition == partition {
			return o.Why
		}
	}
	return ""
}
