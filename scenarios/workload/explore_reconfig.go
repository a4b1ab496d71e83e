package workload

// This file is the KRaft exploration's reconfiguration (KIP-853): with
// -faults reconfig on a dynamic quorum (kafkasim.kraft.version=1) the
// explorer may, once per run, remove a controller from the voter set
// (remove-controller X: kafka-metadata-quorum's RemoveRaftVoter of X's
// voter key, sent to the active controller) and then add that controller
// back (add-controller X: AddRaftVoter of the running X with its directory
// id). That is "one reconfiguration" of KIP-853's safety argument: each
// change moves the voter set by one, at most one change is uncommitted at
// a time, so any majority of the old set and any majority of the new one
// share a voter, and no two leaders are elected in one epoch.
//
// Simplifications, and why: only a dedicated controller that is not the
// active one is removed (kafkasim's leader refuses to remove itself,
// broker/raft/voter_change.go, so offering it would only explore a
// refusal), and only while a quorum controller is active (the steps need
// one to send to); the add is of the removed controller only, while it
// runs (kafka-metadata-quorum add-controller runs on the node it adds).
// A request the leader refuses (REQUEST_TIMED_OUT while it has not
// committed in its epoch, a voter that is not caught up, a leader that
// lost its epoch before the change committed) still uses the action up:
// the explorer does not retry, an operator would.

import "github.com/kafkasim/kafkasim/scenarios"

// reconfigMenu appends the enabled voter changes to menu.
func (e *kraftExplorer) reconfigMenu(menu []action) []action {
	r := e.r
	active := r.Cluster.ActiveQuorumController()
	if active == "" {
		return menu
	}
	switch {
	case e.removed < 0:
		for _, i := range e.voters {
			if e.broker[i] < 0 && e.name(int32(i)) != active {
				menu = append(menu, action{op: "remove-controller", b: int32(i)})
			}
		}
	case !e.readded && r.World.Up(e.nodes[e.removed]):
		menu = append(menu, action{op: "add-controller", b: e.removed})
	}
	return menu
}

// reconfig performs a remove-controller or add-controller action.
func (e *kraftExplorer) reconfig(a action) error {
	if a.op == "remove-controller" {
		e.removed = a.b
	} else {
		e.readded = true
	}
	return e.exec(scenarios.Step{Op: a.op, Args: []string{e.name(a.b)}})
}
