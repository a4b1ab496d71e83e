// group.go: the group checker, invariants of consumer groups.
//
// What it checks:
//   - double-owner: no partition is assigned to two processes in one
//     generation of a group (the coordinator's generations fence zombies;
//     two owners in one generation would be the assignor's or the
//     coordinator's bug), except two processes of one static member
//     (group.instance.id) handing it over (group_static.go);
//   - zombie-consume: the earlier of those polled the partition after the
//     later one had it (permitted: Kafka fences the zombie's commits, not
//     what it fetched before it learnt it was fenced);
//   - static-restart-rebalance: a static member restarted within its
//     session comes back at its generation with its partitions
//     (KIP-345, group_static.go);
//   - commit-backwards: a group's acknowledged commits of a partition never
//     go below an earlier acknowledged one (in completion order);
//   - offset-rewind: a process that gets a partition starts no lower than
//     the group's highest commit acknowledged before the assignment (a
//     lower start means an acknowledged commit was lost);
//   - lost-commit: every committed offset a member read (FetchCommitted,
//     OffsetFetch) is the group's last commit of the partition
//     acknowledged before the read was sent, or a later one: an answer
//     below it, that no commit which may have landed after it explains,
//     means the coordinator forgot an acknowledged commit — acked-loss for
//     offsets (commits are written to __consumer_offsets with acks=all and
//     answered once the ISR has them).
//
// Whether Kafka permits it: lost-commit only when a __consumer_offsets
// partition went through an unclean election or lost its whole ISR with
// unflushed data (the offsets themselves may be lost), or the group
// commits unfenced (offsets.storage=zookeeper); a data partition's loss
// facts do not touch the committed offsets. commit-backwards and offset-rewind are
// permitted when a __consumer_offsets partition went through an unclean
// election or lost its whole ISR, or the data partition (whose truncation
// resets positions) has a loss fact (contract.go),
// or when a member of the group commits unfenced (offsets.storage=
// zookeeper: OffsetCommit v0 has no generation, so a member fenced out of
// the group can still store an older offset); double-owner never.
//
// The epoch-aware invariants (epoch-double-owner, consume-after-revoke;
// KIP-848's member epochs) are group_epochs.go's.
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
		inc   int // the group's incarnation (History.incarnation)
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
				key := genKey{op.Group, h.incarnation(op.Group, op.Invoke), op.Generation, k}
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
			if inst := h.staticInstance(procs); inst != "" {
				c, b := zombieConsumes(h, ops)
				if c == nil {
					continue // a static member's restart took it over
				}
				anomalies = append(anomalies, Anomaly{Kind: "zombie-consume", Topic: key.k.topic, Partition: key.k.partition,
					Ops: []int{b.Index, c.Index}, Times: []sim.Time{b.Invoke, c.Invoke},
					Description: "generation " + strconv.Itoa(int(key.gen)) + " of group " + key.group + ": " + c.Process +
						" (group.instance.id " + inst + ") polled it after " + b.Process + " took the instance over: two members consumed it at once" +
						" (Kafka fences a zombie's commits, not the records it already fetched)",
					Permitted: true})
				continue
			}
			a := Anomaly{Kind: "double-owner", Topic: key.k.topic, Partition: key.k.partition,
				Description: "generation " + strconv.Itoa(int(key.gen)) + " of group " + key.group + " gave it to " + joinStrings(procs)}
			for _, o := range ops {
				a.Ops = append(a.Ops, o.Index)
			}
			anomalies = append(anomalies, a)
		}
	}
	anomalies = append(anomalies, epochAnomalies(h)...) // group_epochs.go
	anomalies = append(anomalies, cf.lostCommits()...)
	anomalies = append(anomalies, staticRestarts(h, cf.con.facts.Failures)...)
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

// lostCommits finds committed offsets read below an acknowledged commit
// (lost-commit, the file comment).
func (cf *consumerFacts) lostCommits() []Anomaly {
	var out []Anomaly
	type gk struct {
		group string
		k     tp
	}
	commits := map[gk][]*Op{}
	for i := range cf.h.Ops {
		op := &cf.h.Ops[i]
		if op.Kind == Commit && op.Outcome != Fail {
			key := gk{op.Group, tp{op.Topic, op.Partition}}
			commits[key] = append(commits[key], op)
		}
	}
	for i := range cf.h.Ops {
		f := &cf.h.Ops[i]
		if f.Kind != FetchCommitted || f.Outcome != OK {
			continue
		}
		cs := commits[gk{f.Group, tp{f.Topic, f.Partition}}]
		// last: the last commit acknowledged before the read was sent.
		var last *Op
		for _, c := range cs {
			if c.Outcome == OK && c.Complete < f.Invoke && (last == nil || c.Complete >= last.Complete) {
				last = c
			}
		}
		if last == nil || f.Offset >= last.Offset {
			continue
		}
		// A commit of the offset read that may have been applied after
		// last (not acknowledged before last was sent) and before the
		// read was answered supersedes it.
		superseded := false
		for _, c := range cs {
			if c.Offset == f.Offset && c != last && c.Invoke < f.Complete && (c.Outcome != OK || c.Complete > last.Invoke) {
				superseded = true
				break
			}
		}
		if superseded {
			continue
		}
		k := tp{f.Topic, f.Partition}
		read := "no committed offset"
		if f.Offset >= 0 {
			read = "committed offset " + strconv.FormatInt(f.Offset, 10)
		}
		a := Anomaly{Kind: "lost-commit", Topic: k.topic, Partition: k.partition, Offsets: []int64{last.Offset, f.Offset},
			Ops: []int{last.Index, f.Index}, Times: []sim.Time{last.Complete, f.Invoke},
			Description: f.Process + " read " + read + " of group " + f.Group + " after the group's commit of " + strconv.FormatInt(last.Offset, 10) +
				" was acknowledged (by " + last.Process + ", generation " + strconv.Itoa(int(last.Generation)) + "), and no later commit wrote it back: the coordinator lost an acknowledged commit" +
				cf.unfencedNote(f.Group),
			Permitted: cf.offsets != "" || cf.unfenced[f.Group]}
		if cf.offsets != "" && !cf.unfenced[f.Group] {
			a.Description += "; " + cf.offsets
		}
		out = append(out, a)
	}
	return out
}
