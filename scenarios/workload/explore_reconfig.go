package workload

// This file is the KRaft exploration's reconfiguration (KIP-853): with
// -faults reconfig on a dynamic quorum (kafkasim.kraft.version=1) the
// explorer may ask for up to reconfigLimit voter changes per run:
// remove-controller X (kafka-metadata-quorum's RemoveRaftVoter of X's
// voter key, sent to the active controller) and add-controller X
// (AddRaftVoter of the running X with its directory id) of a controller
// it removed. Two changes cover KIP-853's "one reconfiguration" (a voter
// removed and added back) and two changes asked back to back, which a
// correct leader serves one at a time (the second is refused with
// REQUEST_TIMED_OUT while the first is uncommitted): each change moves the
// voter set by one, so any majority of the old set and any majority of
// the new one share a voter, and no two leaders commit apart. The planted
// bug raft-voter-changes-overlap accepts the second at once.
//
// Any voter controller may be removed, the active one too (it resigns
// once its removal commits, broker/raft/voter_change.go).
//
// Simplifications, and why: a voter change is asked only while a quorum
// controller is active (the steps need one to send to); only a removed
// controller that runs is added
// (kafka-metadata-quorum add-controller runs on the node it adds). A
// request the leader refuses (REQUEST_TIMED_OUT, a voter not caught up, a
// leader that lost its epoch before the change committed) still counts:
// the explorer does not retry, an operator would.

import "github.com/kafkasim/kafkasim/scenarios"

// reconfigLimit is how many voter changes a run may ask for.
const reconfigLimit = 2

// reconfigMenu appends the enabled voter changes to menu.
func (e *kraftExplorer) reconfigMenu(menu []action) []action {
	r := e.r
	if r.Cluster.ActiveQuorumController() == "" || e.changes >= reconfigLimit {
		return menu
	}
	for _, i := range e.voters {
		switch {
		case e.broker[i] >= 0:
		case e.removed&(1<<i) == 0:
			menu = append(menu, action{op: "remove-controller", b: int32(i)})
		case e.removed&(1<<i) != 0 && r.World.Up(e.nodes[i]):
			menu = append(menu, action{op: "add-controller", b: int32(i)})
		}
	}
	return menu
}

// reconfig performs a remove-controller or add-controller action.
func (e *kraftExplorer) reconfig(a action) error {
	e.changes++
	if a.op == "remove-controller" {
		e.removed |= 1 << a.b
	} else {
		e.removed &^= 1 << a.b
	}
	return e.exec(scenarios.Step{Op: a.op, Args: []string{e.name(a.b)}})
}
