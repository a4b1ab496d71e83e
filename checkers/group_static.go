// group_static.go: what the group checker knows of static members
// (KIP-345, group.instance.id).
//
// A static member that restarts takes its member over without a
// rebalance: the new process gets the same generation and the same
// partitions, and the old member id is fenced (FENCED_INSTANCE_ID). So two
// processes of one static instance may both be given a partition in one
// generation: that is a handover, not a double owner. A zombie that still
// polls the partition after its replacement took over is zombie-consume:
// two members consume it at once. Kafka permits it — the fence is on the
// zombie's commits, heartbeats and rejoins, and a zombie that wakes with
// records fetched returns them from poll before its next request is
// answered FENCED_INSTANCE_ID — so it is reported, permitted.
//
// Under group.protocol=consumer (KIP-848) the promise is narrower: a
// process that dies without leaving keeps its member in the group, and
// its successor is refused UNRELEASED_INSTANCE_ID until the session
// expires (then it joins as a new member, a rebalance); only a process
// that left with epoch -2 (a clean Close) is replaced at once, at its
// epoch with its partitions. So a consumer-protocol restart is judged only
// after a clean shutdown.
//
// A process that shut down cleanly just before it died (its revocations at
// the crash's instant: KIP-848's static leave with epoch -2, the only way
// its successor is let in before the session times out) is judged as a
// crash: the coordinator kept its partitions.
//
// static-restart-rebalance: a static member's process that crashed and
// started again within its session (restart - crash <=
// session.timeout.ms - 2 x heartbeat.interval.ms: its last heartbeat was
// at most an interval before the crash, and an interval is left for the
// new process to find the coordinator and join; a process that crashed
// while stalled sent its last heartbeat before the stall, so the session
// is counted from the stall's start) must come back, at its first
// assignment, at the generation it had, with the partitions it had.
// Permitted when another consumer of the group crashed, started again,
// joined, or stalled past its session since the group's last assignment
// (each is a rebalance of its own), when a rebalance was under way at the crash (a revocation since
// the group's last assignment), or when a broker fault overlapped the
// restart (the coordinator may not have seen the rejoin in time). What it
// held is the crashed process's assignments less its revocations (the
// cooperative protocol records only what a generation adds), counted from
// that process's start: a crash records no revocation, and an earlier
// process's partitions are not what the member has now (static-swarm
// eager seed 28: a process given [t-4 t-5] crashed past its session, its
// successor was given [t-2 t-3] as a new member, and the restart of that
// one was judged against all four); the generation is the group's newest
// before the crash. Not judged: restarts later than that, restarts with
// no assignment after, or of a process given nothing before its crash
// (what the coordinator holds for the member is then not in the history).

package checkers

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

// consumerDecl returns the declaration of a consumer process.
func (h History) consumerDecl(process string) (Consumer, bool) {
	for _, c := range h.Consumers {
		if c.Process == process {
			return c, true
		}
	}
	return Consumer{}, false
}

// staticInstance returns the group.instance.id every one of procs
// declares, or "" when they do not share one.
func (h History) staticInstance(procs []string) string {
	inst := ""
	for i, p := range procs {
		c, ok := h.consumerDecl(p)
		if !ok || c.GroupInstanceID == "" || i > 0 && c.GroupInstanceID != inst {
			return ""
		}
		inst = c.GroupInstanceID
	}
	return inst
}

// zombieConsumes finds, among the assignments ops of one partition in one
// generation (in history order) to processes of one static instance, a
// process that consumed the partition at that generation after a later
// process was given it. It returns the Consume op and the Assign it
// overlapped, or nil.
func zombieConsumes(h History, ops []Op) (consume, takeover *Op) {
	for i, a := range ops {
		for _, b := range ops[i+1:] {
			if b.Process == a.Process || b.Invoke < a.Invoke {
				continue
			}
			for j := range h.Ops {
				c := &h.Ops[j]
				if c.Kind == Consume && c.Process == a.Process && c.Group == a.Group && c.Topic == a.Topic &&
					c.Partition == a.Partition && c.Generation == a.Generation && c.Invoke >= b.Invoke {
					bb := b
					return c, &bb
				}
			}
		}
	}
	return nil, nil
}

// staticRestarts judges each restart of a static member
// (static-restart-rebalance, the file comment). failures are the run's
// broker faults.
func staticRestarts(h History, failures []Failure) []Anomaly {
	var out []Anomaly
	for _, c := range h.Consumers {
		if c.GroupInstanceID == "" || c.SessionTimeout <= 0 {
			continue
		}
		for _, down := range c.Crashes {
			up, restarted := sim.Time(0), false
			for _, t := range c.Restarts {
				if t >= down {
					up, restarted = t, true
					break
				}
			}
			// silent is when the member last could heartbeat: the
			// crash, or the start of a stall the crash struck in.
			silent := down
			for _, p := range c.Pauses {
				if p.From <= down && down < p.To {
					silent = min(silent, p.From)
				}
			}
			if !restarted || up.Sub(silent) > c.SessionTimeout-2*c.HeartbeatInterval {
				continue
			}
			if c.GroupProtocol == "consumer" && !closedAt(h, c.Process, down) {
				continue // KIP-848 keeps the member only for a process that left with epoch -2
			}
			// born is when the crashed process started: the run's start,
			// or its latest restart before the crash.
			born := sim.Time(0)
			for _, t := range c.Restarts {
				if t < down {
					born = max(born, t)
				}
			}
			// owned is what the crashed process held (its assignments
			// less its revocations: the cooperative protocol records only
			// what a generation adds); groupGen the group's newest
			// generation anyone was assigned in before the crash.
			// NB: only since born — a crash records no revocation, so an
			// earlier process's partitions would otherwise still count.
			owned, given := map[string]bool{}, false
			groupGen, genAt := int32(-1), sim.Time(0)
			for _, op := range h.Ops {
				if op.Group != c.Group || op.Invoke > down || op.Kind != Assign && op.Kind != Revoke || shutdownRevoke(op, c.Process, down) {
					continue
				}
				if op.Kind == Assign && op.Generation >= groupGen {
					groupGen, genAt = op.Generation, op.Invoke
				}
				if op.Process == c.Process && op.Invoke >= born {
					owned[tpString(op.Topic, op.Partition)] = op.Kind == Assign
					given = given || op.Kind == Assign
				}
			}
			var before []string
			for k, in := range owned {
				if in {
					before = append(before, k)
				}
			}
			var afterAt sim.Time
			afterGen, after := int32(-1), []string(nil)
			for _, op := range h.Ops {
				if op.Kind != Assign || op.Process != c.Process || op.Group != c.Group || op.Invoke < up {
					continue
				}
				if afterGen < 0 {
					afterAt, afterGen = op.Invoke, op.Generation
				}
				if op.Invoke == afterAt {
					after = append(after, tpString(op.Topic, op.Partition))
				}
			}
			if groupGen < 0 || afterGen < 0 || !given {
				continue
			}
			slices.Sort(before)
			slices.Sort(after)
			after = slices.Compact(after)
			if afterGen == groupGen && slices.Equal(before, after) {
				continue
			}
			var why []string
			if others := otherMembershipChanges(h, c, groupGen, genAt, afterAt); others != "" {
				why = append(why, "other members came or went meanwhile: "+others)
			}
			if revoking := rebalancing(h, c.Group, genAt, down, c.Process); revoking != "" {
				why = append(why, "the group was rebalancing when it crashed ("+revoking+" revoked partitions)")
			}
			if n := brokerFaults(failures, down.Add(-c.SessionTimeout), afterAt); n > 0 {
				why = append(why, strconv.Itoa(n)+" broker fault(s) meanwhile (the coordinator may not have seen the rejoin within the session)")
			}
			a := Anomaly{Kind: "static-restart-rebalance", Times: []sim.Time{down, afterAt},
				Description: c.Process + " (group.instance.id " + c.GroupInstanceID + ") crashed and started again " +
					up.Sub(down).String() + " later, within session.timeout.ms " + c.SessionTimeout.String() + ", and was assigned" +
					", at generation " + strconv.Itoa(int(afterGen)) + " with [" + strings.Join(after, " ") + "]; when it crashed the group was at generation " +
					strconv.Itoa(int(groupGen)) + " and it held [" + strings.Join(before, " ") + "] (KIP-345: a static member's restart within its session does not rebalance)",
				Permitted: len(why) > 0}
			if len(why) > 0 {
				a.Description += "; " + strings.Join(why, "; ")
			}
			out = append(out, a)
		}
	}
	return out
}

// closedAt reports whether process revoked partitions as it shut down at
// down (shutdownRevoke).
func closedAt(h History, process string, down sim.Time) bool {
	for _, op := range h.Ops {
		if shutdownRevoke(op, process, down) {
			return true
		}
	}
	return false
}

// shutdownRevoke reports whether op is process's revocation at the instant
// it crashed (down): the clean shutdown just before the kill (the harness's
// kill-consumer close=true), whose partitions a static member keeps at the
// coordinator (KIP-345; KIP-848's leave with epoch -2).
func shutdownRevoke(op Op, process string, down sim.Time) bool {
	return op.Kind == Revoke && op.Process == process && op.Invoke == down
}

// rebalancing names the processes of group that revoked partitions in
// (from, to]: a rebalance under way. The crashed process's own shutdown
// revocation at to is not one.
func rebalancing(h History, group string, from, to sim.Time, crashed string) string {
	var names []string
	for _, op := range h.Ops {
		if op.Kind == Revoke && op.Group == group && op.Invoke > from && op.Invoke <= to && !shutdownRevoke(op, crashed, to) && !slices.Contains(names, op.Process) {
			names = append(names, op.Process)
		}
	}
	return strings.Join(names, ", ")
}

// brokerFaults counts the broker faults that overlap [from, to].
func brokerFaults(failures []Failure, from, to sim.Time) int {
	n := 0
	for _, f := range failures {
		if f.Time <= to && (f.End == 0 || f.End >= from) {
			n++
		}
	}
	return n
}

// otherMembershipChanges names the other consumers of c's group that
// crashed or started again in (from, to], stalled long enough for their
// session to expire in it (or woke in it from such a stall), or whose
// first assignment came after generation gen: each rebalances the group
// on its own.
func otherMembershipChanges(h History, c Consumer, gen int32, from, to sim.Time) string {
	var names []string
	for _, o := range h.Consumers {
		if o.Process == c.Process || o.Group != c.Group {
			continue
		}
		changed := false
		for _, t := range append(slices.Clone(o.Crashes), o.Restarts...) {
			changed = changed || t > from && t <= to
		}
		for _, p := range o.Pauses {
			// A stall longer than session.timeout.ms less a heartbeat
			// interval may expire the member (from p.From+session-interval
			// on: its last heartbeat was at most an interval before the
			// stall), and the process that wakes rejoins.
			expires := p.From.Add(o.SessionTimeout - o.HeartbeatInterval)
			changed = changed || o.SessionTimeout > 0 && p.To > expires && expires <= to && p.To > from
		}
		for _, op := range h.Ops {
			if op.Process == o.Process && op.Kind == Assign {
				changed = changed || op.Generation > gen && op.Invoke <= to
				break // NB: its first assignment only
			}
		}
		if changed {
			names = append(names, o.Process)
		}
	}
	return strings.Join(names, ", ")
}
