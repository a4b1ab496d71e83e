// group_epochs.go: the group checker's epoch-aware invariants of the
// consumer group protocol (KIP-848), where a Consume, Commit, Assign and
// Revoke carry the member epoch as Generation:
//
//   - epoch-double-owner: no partition is held by two processes at one
//     member epoch of a group, counting both the assignments (Assign) and
//     the deliveries a process polled and processed (Consume) at that
//     epoch: the coordinator hands a partition to a new member only at an
//     epoch past the one its previous owner held it at (KIP-848
//     "Reconciliation": revoke, acknowledge, then assign). Two Assigns at
//     one generation are group.go's double-owner; this adds the pairs a
//     delivery reveals. Judged for the processes that declared
//     GroupProtocol "consumer" only: a classic member records the
//     generation JoinGroup gave it, which is not durable until SyncGroup's
//     record commits, so after a coordinator fail-over the next rebalance
//     may hand out the same generation again (a cooperative member keeps
//     delivering under the generation its lost sync never confirmed; seen
//     in group-swarm cooperative seed 3). A member epoch is handed out only
//     once the coordinator's records hold it.
//   - consume-after-revoke: a process delivers no record of a partition
//     after it gave the partition up (Revoke: OnRevoked or OnLost ran;
//     under KIP-848 the revocation is acknowledged only after that), until
//     a rebalance gives it back (Assign). A delivery polled before the
//     revocation and processed after it is not one: the Consume's
//     invocation (the poll) is what counts. Judged for both protocols.
//
// Whether Kafka permits it: never. Operations outside group management
// (Generation < 0) are not judged. Committed offsets going backwards are
// group.go's commit-backwards (permitted only by a loss fact of
// __consumer_offsets or unfenced commits).

package checkers

import (
	"slices"
	"strconv"
)

// epochAnomalies returns the epoch-double-owner and consume-after-revoke
// anomalies of h.
func epochAnomalies(h History) []Anomaly {
	type key struct {
		group string
		inc   int // the group's incarnation (History.incarnation)
		epoch int32
		k     tp
	}
	type holder struct {
		proc    string
		assign  bool // an Assign, not only deliveries
		opIndex int
	}
	holders := map[key][]holder{}
	var order []key
	type pk struct {
		proc string
		k    tp
	}
	revokedAt := map[pk]Op{}    // the process's last Revoke of the partition, while not reassigned
	epochs := map[string]bool{} // processes whose Generation is a KIP-848 member epoch
	for _, c := range h.Consumers {
		epochs[c.Process] = c.GroupProtocol == "consumer"
	}
	var out []Anomaly
	for _, op := range h.Ops {
		if op.Generation < 0 || op.Group == "" {
			continue
		}
		k := tp{op.Topic, op.Partition}
		switch op.Kind {
		case Assign, Consume:
			if op.Kind == Consume && op.Outcome != OK {
				continue
			}
			if !epochs[op.Process] {
				if op.Kind == Assign {
					delete(revokedAt, pk{op.Process, k})
				} else if r, ok := revokedAt[pk{op.Process, k}]; ok && op.Invoke > r.Complete {
					out = append(out, consumeAfterRevoke(op, r))
					delete(revokedAt, pk{op.Process, k})
				}
				continue
			}
			key := key{op.Group, h.incarnation(op.Group, op.Invoke), op.Generation, k}
			hs := holders[key]
			if len(hs) == 0 {
				order = append(order, key)
			}
			i := slices.IndexFunc(hs, func(x holder) bool { return x.proc == op.Process })
			if i < 0 {
				holders[key] = append(hs, holder{proc: op.Process, assign: op.Kind == Assign, opIndex: op.Index})
			} else if op.Kind == Assign {
				hs[i].assign = true
			}
			if op.Kind == Assign {
				delete(revokedAt, pk{op.Process, k})
				continue
			}
			if r, ok := revokedAt[pk{op.Process, k}]; ok && op.Invoke > r.Complete {
				out = append(out, consumeAfterRevoke(op, r))
				delete(revokedAt, pk{op.Process, k}) // one report per revocation
			}
		case Revoke:
			revokedAt[pk{op.Process, k}] = op
		}
	}
	for _, key := range order {
		hs := holders[key]
		assigns := 0
		for _, x := range hs {
			if x.assign {
				assigns++
			}
		}
		if len(hs) < 2 || assigns == len(hs) {
			continue // alone, or every holder assigned: group.go's double-owner
		}
		var procs []string
		a := Anomaly{Kind: "epoch-double-owner", Topic: key.k.topic, Partition: key.k.partition}
		for _, x := range hs {
			how := "delivered"
			if x.assign {
				how = "assigned"
			}
			procs = append(procs, x.proc+" ("+how+")")
			a.Ops = append(a.Ops, x.opIndex)
		}
		a.Description = "at member epoch " + strconv.Itoa(int(key.epoch)) + " of group " + key.group + " " + key.k.String() +
			" was held by " + joinStrings(procs)
		out = append(out, a)
	}
	return out
}

func consumeAfterRevoke(op, r Op) Anomaly {
	k := tp{op.Topic, op.Partition}
	return Anomaly{Kind: "consume-after-revoke", Topic: k.topic, Partition: k.partition,
		Offsets: []int64{op.FetchOffset}, Ops: []int{r.Index, op.Index},
		Description: op.Process + " delivered " + k.String() + " from offset " + strconv.FormatInt(op.FetchOffset, 10) +
			" at epoch " + strconv.Itoa(int(op.Generation)) + " of group " + op.Group + " after giving it up (" + r.Error +
			" at epoch " + strconv.Itoa(int(r.Generation)) + ")"}
}
