// group.go: the group checker, invariants of consumer groups.
//
// What it checks:
//   - double-owner: no partition is assigned to two processes in one
//     generation of a group (the coordinator's generations fence zombies;
//     two owners in one generation would be the assignor's or the
//     coordinator's bug);
//   - commit-backwards: a group's acknowledged commits of a partition never
//     go below an earlier acknowledged one (in completion order);
//   - offset-rewind: a process that gets a partition starts no lower than
//     the group's highest commit acknowledged before the assignment (a
//     lower start means an acknowledged commit was lost).
//
// Whether Kafka permits it: commit-backwards and offset-rewind are
// permitted when a __consumer_offsets partition went through an unclean
// election or lost its whole ISR, or the data partition (whose truncation
// resets positions) has a loss fact (contract.go),
// or when a member of the group commits unfenced (offsets.storage=
// zookeeper: OffsetCommit v0 has no generation, so a member fenced out of
// the group can still store an older offset); double-owner never.
//
// What it simplifies: seeks are not recorded, so a process that seeks
// backwards must not be judged here (scenarios do not seek in groups).

package checkers

import (
	"slices"
	"strconv"

	"github.com/kafkasim/kafkasim/sim"
)

// Groups checks the group invariants.
func Groups(h History, f Final) Verdict {
	return groups(h, newConsumerFacts(h, f, newContract(f)))
}

// groups is Groups with the run's consumer facts given (CheckAll builds
// them once for Consumers and Groups).
func groups(h History, cf *consumerFacts) Verdict {
	var anomalies []Anomaly
	type genKey struct {
		group string
		gen   int32
		k     tp
	}
	owners := map[genKey][]Op{}
	var order []genKey
	type gk struct {
		group string
		k     tp
	}
	maxCommit := map[gk]Op{}
	assigned := map[string]map[tp]Op{} // process -> partition -> its pending Assign
	for _, op := range h.Ops {
		k := tp{op.Topic, op.Partition}
		switch op.Kind {
		case Assign:
			if op.Generation >= 0 {
				key := genKey{op.Group, op.Generation, k}
				if _, ok := owners[key]; !ok {
					order = append(order, key)
				}
				owners[key] = append(owners[key], op)
			}
			if assigned[op.Process] == nil {
				assigned[op.Process] = map[tp]Op{}
			}
			assigned[op.Process][k] = op
		case Commit:
			if op.Outcome != OK {
				continue
			}
			key := gk{op.Group, k}
			prev, ok := maxCommit[key]
			if ok && op.Offset < prev.Offset {
				anomalies = append(anomalies, Anomaly{Kind: "commit-backwards", Topic: k.topic, Partition: k.partition,
					Offsets: []int64{prev.Offset, op.Offset}, Ops: []int{prev.Index, op.Index}, Times: []sim.Time{prev.Complete, op.Complete},
					Description: "group " + op.Group + " committed " + strconv.FormatInt(op.Offset, 10) + " after " + strconv.FormatInt(prev.Offset, 10) + cf.unfencedNote(op.Group) + cf.groupLossNote(k, op.Group),
					Permitted:   cf.permitted(k) || cf.unfenced[op.Group]})
			}
			if !ok || op.Offset >= prev.Offset {
				maxCommit[key] = op
			}
		case Consume:
			a, ok := assigned[op.Process][k]
			if !ok {
				continue
			}
			delete(assigned[op.Process], k) // only the first delivery after an assignment
			best := int64(-1)
			bestOp := -1
			for _, c := range h.Ops {
				if c.Kind == Commit && c.Outcome == OK && c.Group == a.Group && c.Topic == k.topic && c.Partition == k.partition &&
					c.Complete < a.Invoke && c.Offset > best {
					best, bestOp = c.Offset, c.Index
				}
			}
			if bestOp >= 0 && op.FetchOffset < best {
				anomalies = append(anomalies, Anomaly{Kind: "offset-rewind", Topic: k.topic, Partition: k.partition,
					Offsets: []int64{best, op.FetchOffset}, Ops: []int{bestOp, a.Index, op.Index},
					Description: op.Process + " resumed group " + a.Group + " at " + strconv.FormatInt(op.FetchOffset, 10) +
						" below the acknowledged commit " + strconv.FormatInt(best, 10) + cf.unfencedNote(a.Group) + cf.groupLossNote(k, a.Group),
					Permitted: cf.permitted(k) || cf.unfenced[a.Group]})
			}
		}
	}
	for _, key := range order {
		ops := owners[key]
		var procs []string
		for _, o := range ops {
			if !slices.Contains(procs, o.Process) {
				procs = append(procs, o.Process)
			}
		}
		if len(procs) > 1 {
			a := Anomaly{Kind: "double-owner", Topic: key.k.topic, Partition: key.k.partition,
				Description: "generation " + strconv.Itoa(int(key.gen)) + " of group " + key.group + " gave it to " + joinStrings(procs)}
			for _, o := range ops {
				a.Ops = append(a.Ops, o.Index)
			}
			anomalies = append(anomalies, a)
		}
	}
	return verdict(NameGroup, anomalies, false, "judged "+strconv.Itoa(len(order))+" assignment(s)")
}

// groupLossNote is the evidence of a rewind permitted by a loss fact (and
// not already by unfenced commits).
func (cf *consumerFacts) groupLossNote(k tp, group string) string {
	if cf.unfenced[group] {
		return ""
	}
	return cf.lossNote(k)
}

// unfencedNote explains a permitted rewind of a group that commits unfenced.
func (cf *consumerFacts) unfencedNote(group string) string {
	if cf.unfenced[group] {
		return " (offsets.storage=zookeeper: OffsetCommit v0 is not fenced by generation, so a stale member's commit lands)"
	}
	return ""
}
