package harness

// This file is the runner's side of KRaft mode (KIP-500, KIP-595,
// KIP-631): the node names a step may use (bN, the dedicated controllers
// cN, and 'controller' for the active quorum controller, which is a
// broker in combined mode), the partition leaders as the active
// controller's committed metadata image has them (the end phase and the
// final state read them there, as they read the ZooKeeper controller's
// state in ZooKeeper mode), and the contract's facts read off the
// controllers' partition-committed records (committed states only: a
// proposal that never commits is not a fact).
//
// NB: a dedicated controller is a node of Facts.Failures (with
// Failure.Controller set, node.id 3000+i) but never a replica: its
// failures are on the timeline and decide Healed, never a loss.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/controller"
	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

// quorumController resolves 'controller' in KRaft mode: the active quorum
// controller's node and node.id.
func (r *Runner) quorumController() (sim.NodeID, int32, error) {
	name := r.Cluster.ActiveQuorumController()
	if name == "" {
		return 0, 0, fmt.Errorf("no controller of the KRaft quorum is active now")
	}
	id, _ := r.World.Lookup(name)
	if scenarios.ControllerName.MatchString(name) {
		n, _ := strconv.Atoi(strings.TrimPrefix(name, server.ControllerPrefix))
		return id, server.FirstControllerID + int32(n), nil
	}
	n, _ := strconv.Atoi(name[1:])
	return id, int32(n), nil
}

// activeQuorumImage returns the active quorum controller's name and its
// committed metadata image; nil when no controller is active (or in
// ZooKeeper mode).
func (r *Runner) activeQuorumImage() (string, *metadata.Image) {
	name := r.Cluster.ActiveQuorumController()
	if name == "" {
		return "", nil
	}
	id, _ := r.World.Lookup(name)
	b, _ := r.World.Node(id).(*server.Broker)
	if b == nil || b.QuorumController() == nil {
		return name, nil
	}
	return name, b.QuorumController().Image()
}

// controllerNode resolves cN, a dedicated controller.
func (r *Runner) controllerNode(name string) (sim.NodeID, int32, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, server.ControllerPrefix))
	if err != nil || n < 0 || n >= len(r.Cluster.Controllers) {
		return 0, 0, fmt.Errorf("%q is not a controller (controllers are ctl0..ctl%d)", name, len(r.Cluster.Controllers)-1)
	}
	return r.Cluster.Controllers[n], server.FirstControllerID + int32(n), nil
}

// controllerRange names the dedicated controllers for messages.
func (r *Runner) controllerRange() string {
	if len(r.Cluster.Controllers) == 0 {
		return ""
	}
	return fmt.Sprintf("; controllers ctl0..ctl%d", len(r.Cluster.Controllers)-1)
}

// faultTargets are the nodes the swarm and restart-all act on: the
// brokers, then in KRaft mode the dedicated controllers, by name.
func (r *Runner) faultTargets() []string {
	var out []string
	for i := range r.Cluster.Brokers {
		out = append(out, "b"+strconv.Itoa(i))
	}
	for i := range r.Cluster.Controllers {
		out = append(out, server.NodeName(server.FirstControllerID+int32(i)))
	}
	return out
}

// metadataNodes are the nodes 'metadata' names in a partition's groups
// (scenarios.MetadataNodes): zk, or the dedicated controllers.
func (r *Runner) metadataNodes() []string {
	if !r.Cluster.Spec.KRaft() {
		if r.s.Manual {
			return nil
		}
		return []string{"zk"}
	}
	var out []string
	for i := range r.Cluster.Controllers {
		out = append(out, server.NodeName(server.FirstControllerID+int32(i)))
	}
	return out
}

// restartControllers restarts every dedicated controller that is down.
func (r *Runner) restartControllers() error {
	for i, id := range r.Cluster.Controllers {
		if !r.World.Up(id) {
			if err := r.Step(scenarios.Step{Op: "restart", Args: []string{server.NodeName(server.FirstControllerID + int32(i))}}); err != nil {
				return err
			}
		}
	}
	return nil
}

// leaderOf returns a partition's leader and leader epoch as the
// controller has them: the active ZooKeeper controller's state, or in
// KRaft mode the active quorum controller's committed image; why says
// what is missing when there is none.
func (r *Runner) leaderOf(tp storage.TopicPartition) (leader, epoch int32, why string) {
	if !r.Cluster.Spec.KRaft() {
		ctrl := r.activeController()
		if ctrl == nil {
			return -1, -1, "no active controller"
		}
		leader, epoch = -1, -1
		if st, _, ok := ctrl.PartitionState(controller.TP{Topic: tp.Topic, Partition: tp.Partition}); ok {
			leader, epoch = st.Leader, st.LeaderEpoch
		}
		if leader < 0 {
			return leader, epoch, "the controller has no leader for it"
		}
		return leader, epoch, ""
	}
	name, img := r.activeQuorumImage()
	if img == nil {
		return -1, -1, "no active KRaft controller"
	}
	p, ok := img.Partition(tp.Topic, tp.Partition)
	if !ok || p.Leader < 0 {
		return -1, -1, "the KRaft controller " + name + " has no leader for it"
	}
	return p.Leader, p.LeaderEpoch, ""
}

// kraftFinalLeaders sets each partition's final leader from the active
// quorum controller's image (KRaft mode).
func (r *Runner) kraftFinalLeaders(f *checkers.Final) {
	for i := range f.Partitions {
		pf := &f.Partitions[i]
		tp := storage.TopicPartition{Topic: pf.Topic, Partition: pf.Partition}
		if l, e, why := r.leaderOf(tp); why == "" {
			pf.Leader, pf.LeaderEpoch = l, e
		}
	}
}

// committedKey identifies a committed partition state: its partition and
// partition epoch (every change bumps it).
func committedKey(r sim.Record) string {
	p, _ := r.Get("partition")
	e, _ := r.Get("partition-epoch")
	return p + "/" + e
}

// kraftUncleanElections reads the KRaft controller's unclean elections off
// the trace: its partition-committed records whose leader recovery state
// is RECOVERING (broker/kraft/change.go), which Kafka sets only when a
// leader from outside the ISR is elected with
// unclean.leader.election.enable. Committed records only: a proposal that
// never committed is not a fact of the run.
func kraftUncleanElections(recs []sim.Record) []checkers.UncleanElection {
	var out []checkers.UncleanElection
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Kind != "partition-committed" {
			continue
		}
		if rec, _ := r.Get("recovery"); rec != "1" { // LeaderRecoveryState RECOVERING
			continue
		}
		if key := committedKey(r); seen[key] {
			continue // another controller, or a later life, replaying it
		} else {
			seen[key] = true
		}
		part, _ := r.Get("partition")
		tp, ok := storage.ParseTopicPartition(part)
		if !ok {
			continue
		}
		l, _ := r.Get("leader")
		e, _ := r.Get("leader-epoch")
		leader, _ := strconv.Atoi(l)
		epoch, _ := strconv.Atoi(e)
		out = append(out, checkers.UncleanElection{Topic: tp.Topic, Partition: tp.Partition, Broker: int32(leader), Epoch: int32(epoch), Time: r.Time})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

// kraftISRChanges are the KRaft controllers' committed partition states
// (the first partition-committed record of each partition epoch) as ISR
// changes (leader, leader epoch and ISR of the state each change leads
// to), as controller-partition-state records are in ZooKeeper mode.
//
// A change's Time is when the controller that wrote it appended it to the
// metadata log (its partition-change record with the same partition
// epoch, leader, leader epoch and ISR, the last one before the commit),
// not when its commit was first seen: the metadata log orders the
// controller's decisions, and a committed change stands at its place in
// that order. A failure after the append is ordered after the change in
// everything Kafka does about it (the failed broker's fencing or its
// re-registration are later records), so a replica added to the ISR by a
// record that commits only after its power loss was in the ISR when it
// lost its data (kraft-dynamic-wipe seed 276: b2 joins t-0's ISR at 19 s
// while the quorum has no majority, loses power at 31 s, the record
// commits at 54 s and b2 is elected from it at 60 s with a shorter log,
// Kafka's rule 5 hazard). A change that never commits is no fact.
func kraftISRChanges(recs []sim.Record) []checkers.ISRChange {
	var out []checkers.ISRChange
	seen := map[string]bool{}
	appended := map[string]sim.Time{} // proposalKey -> time of its last partition-change
	for _, r := range recs {
		if r.Kind == "partition-change" {
			appended[proposalKey(r)] = r.Time
			continue
		}
		if r.Kind != "partition-committed" {
			continue
		}
		if key := committedKey(r); seen[key] {
			continue // another controller, or a later life, replaying it
		} else {
			seen[key] = true
		}
		part, _ := r.Get("partition")
		tp, ok := storage.ParseTopicPartition(part)
		isr, _ := r.Get("isr")
		if !ok || !strings.HasPrefix(isr, "[") || !strings.HasSuffix(isr, "]") {
			continue
		}
		l, _ := r.Get("leader")
		e, _ := r.Get("leader-epoch")
		leader, _ := strconv.Atoi(l)
		epoch, _ := strconv.Atoi(e)
		at := r.Time
		if t, ok := appended[proposalKey(r)]; ok {
			at = t
		}
		ch := checkers.ISRChange{Topic: tp.Topic, Partition: tp.Partition, Time: at, Leader: int32(leader), LeaderEpoch: int32(epoch)}
		for _, f := range strings.Split(strings.Trim(isr, "[]"), ",") {
			if id, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
				ch.ISR = append(ch.ISR, int32(id))
			}
		}
		out = append(out, ch)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

// proposalKey identifies a partition state by everything a
// partition-change and the partition-committed record of the same change
// share: partition, partition epoch, leader, leader epoch and ISR.
func proposalKey(r sim.Record) string {
	p, _ := r.Get("partition")
	e, _ := r.Get("partition-epoch")
	l, _ := r.Get("leader")
	le, _ := r.Get("leader-epoch")
	isr, _ := r.Get("isr")
	return p + "/" + e + "/" + l + "/" + le + "/" + isr
}

// kraftOffline lists the partitions KIP-966 keeps offline by design at the
// end of a run: with eligible leader replicas on and unclean leader
// election off, a partition whose ISR and ELR are both empty (their members
// fenced, or removed after an unclean shutdown) has no replica Kafka may
// elect, and stays leaderless until an operator acts (or unclean recovery,
// KIP-966 part 2, which is not modelled). Its liveness conditions and its
// replicas' non-convergence are then what the contract promises, not bugs.
func (r *Runner) kraftOffline() []checkers.OfflinePartition {
	if !r.Cluster.Spec.KRaft() || !r.Observer.Facts.EligibleLeaderReplicas || r.Observer.Facts.UncleanElectionEnabled {
		return nil
	}
	_, img := r.activeQuorumImage()
	if img == nil {
		return nil
	}
	var out []checkers.OfflinePartition
	for _, p := range img.Partitions() {
		if p.Leader >= 0 || len(p.ISR) > 0 || len(p.ELR) > 0 {
			continue
		}
		out = append(out, checkers.OfflinePartition{Topic: p.Topic, Partition: p.Partition,
			Why: "permitted: KIP-966 keeps " + p.Topic + "-" + strconv.Itoa(int(p.Partition)) + " offline: its ISR and ELR are empty (last known ELR " +
				fmt.Sprint(p.LastKnownELR) + ") and unclean.leader.election.enable=false, so no replica may lead until an operator acts"})
	}
	return out
}

// mayWipe reports whether the swarm may wipe name's disk now: a broker
// always; a controller of a dynamic quorum (kraft.version 1) only while no
// other controller whose disk was wiped is still out of the voter set, as
// an operator replaces one controller's disk at a time and waits for it
// to rejoin (KIP-853: a quorum of three that loses two voters' disks has
// no majority left, whatever it does). A static quorum's controllers
// always: what follows is KAFKA-14077, permitted.
func (r *Runner) mayWipe(name string) bool {
	if !strings.HasPrefix(name, "ctl") || r.Cluster.Spec.Config.Broker.KRaft.KRaftVersion == 0 {
		return true
	}
	for i, id := range r.Cluster.Controllers {
		other := server.NodeName(server.FirstControllerID + int32(i))
		if other == name || !r.wiped[other] {
			continue
		}
		if b, ok := r.World.Node(id).(*server.Broker); ok && r.World.Up(id) && b.Raft() != nil && b.Raft().IsVoter() {
			delete(r.wiped, other) // rejoined
			continue
		}
		return false
	}
	return true
}

// voterChange executes add-controller and remove-controller, as
// kafka-metadata-quorum --bootstrap-controller does them (KIP-853):
// AddRaftVoter of the node with the directory id of its meta.properties
// (the node must be running), or RemoveRaftVoter of the voter of its id
// with the directory id the voter set holds (describe --replication
// shows it), sent to the active quorum controller. The answer (after the
// change commits, or the refusal) is the leader's raft-voter-change trace
// record; a refusal is an outcome, not an error of the script.
func (r *Runner) voterChange(st scenarios.Step) error {
	name := st.Args[0]
	id, ok := r.World.Lookup(name)
	if !ok {
		return fmt.Errorf("%q is not a node of this cluster", name)
	}
	target, _ := r.World.Node(id).(*server.Broker)
	leaderID, _, err := r.quorumController()
	if err != nil {
		return fmt.Errorf("%s %s: %w (the request needs the quorum's leader)", st.Op, name, err)
	}
	leader, _ := r.World.Node(leaderID).(*server.Broker)
	if leader == nil || leader.Raft() == nil {
		return fmt.Errorf("%s %s: the active controller has no raft client", st.Op, name)
	}
	var node int32
	if scenarios.ControllerName.MatchString(name) {
		n, _ := strconv.Atoi(strings.TrimPrefix(name, server.ControllerPrefix))
		node = server.FirstControllerID + int32(n)
	} else {
		n, _ := strconv.Atoi(name[1:])
		node = int32(n)
	}
	var req kmsg.Request
	switch st.Op {
	case "add-controller":
		if target == nil || !r.World.Up(id) || target.Raft() == nil {
			return fmt.Errorf("add-controller %s: %s is not running: kafka-metadata-quorum add-controller runs on the node it adds (restart it first)", name, name)
		}
		a := kmsg.NewPtrAddRaftVoterRequest()
		a.VoterID, a.VoterDirectoryID = node, target.Raft().DirectoryID()
		req = a
	default:
		dir, _ := leader.Raft().VoterDirectoryID(node)
		rm := kmsg.NewPtrRemoveRaftVoterRequest()
		rm.VoterID, rm.VoterDirectoryID = node, dir
		req = rm
	}
	return r.World.Act(leaderID, func(ctx *sim.Context) {
		leader.Raft().Handle(ctx, -1, req, func(kmsg.Response) {})
	})
}
