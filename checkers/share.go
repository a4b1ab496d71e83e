// share.go: the share checker, the promises of share groups (KIP-932,
// "Queues for Kafka", production-ready in Kafka 4.2).
//
// What it checks, per record of a partition a share group consumes:
//   - share-lost: every acknowledged send to a topic of a drained group
//     (ShareGroup.Drained) was delivered (acquired by a member) at least
//     once; with share.auto.offset.reset=latest only the sends invoked
//     after the group's first ShareFetch of the partition completed;
//   - share-unfinished: a record delivered to a drained group ends
//     accepted, rejected, or archived after its last delivery at
//     group.share.delivery.count.limit: one released, or whose lock
//     expired, below the limit is owed another delivery;
//   - share-over-limit: no delivery count exceeds the limit;
//   - share-uncounted: every delivery is counted: a delivery that
//     certainly followed another (its ShareFetch sent after the other's
//     answer came) carries a higher count;
//   - share-double-hold: no record is held by two members at once under
//     a live acquisition lock: two acquisitions by different members
//     certainly less than the lock duration apart (the later answer less
//     than group.share.record.lock.duration.ms after the earlier
//     request), with no acknowledgement or leave of either holder and no
//     state reload between;
//   - share-accept-twice: no record acknowledged OK as ACCEPT twice;
//   - share-redelivered-after-accept: no delivery requested after an
//     ACCEPT was acknowledged OK;
//   - share-lost-acceptance: a share-partition state recovered from
//     __share_group_state (ShareLoad) keeps, as acknowledged or below its
//     start offset, every ACCEPT acknowledged OK before it.
//
// Whether Kafka permits it: share-lost and share-unfinished when the
// record itself may be lost (the contract's loss facts of its send); the
// acceptance anomalies (lost-acceptance, accept-twice,
// redelivered-after-accept), share-unfinished and share-uncounted when
// the data partition or a __share_group_state partition went through an
// unclean election or lost its whole ISR with unflushed data (the share
// coordinator writes with acks=all, so a leader failure alone excuses
// nothing); share-uncounted also after a state reload between the two
// deliveries: Kafka persists a record's delivery count when its state
// changes (acknowledged, released, lock expired), not when it is
// acquired, so a new share-partition leader does not know of an
// acquisition in flight. share-double-hold, share-redelivered-after-accept
// and share-uncounted also when the delivery came from a deposed leader
// (the broker that served the ShareFetch, Op.Leader, was not the leader
// the controller had last elected, Facts.ISRChanges): a ShareFetch carries
// no leader epoch, so a zombie leader hands out records from its stale
// share-partition; KIP-932 fences its writes to __share_group_state (so
// share-accept-twice stays a bug), not its deliveries. share-over-limit
// never.
//
// What it simplifies: lock times are the clients' (the simulator's)
// clock, not the brokers' skewed one; a member's records are taken to be
// released only by its acknowledgements, its leave, the lock's expiry or
// a state reload (not by the coordinator fencing it, which comes after
// the lock expired with Kafka's defaults: 45 s session, 30 s lock).

package checkers

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

// NameShare is the share checker's name.
const NameShare = "share"

// Share checks the share-group promises of h (see the file header).
func Share(h History, f Final) Verdict { return share(h, newContract(f), f) }

// shareKey names one record of one share group.
type shareKey struct {
	group  string
	k      tp
	offset int64
}

type shareRecord struct {
	value      string
	deliveries []*Op // OK ShareAcquire ops holding it, in history order
	counts     []int16
	acks       []*Op
}

// hasShareOps reports whether h recorded any share-group operation.
func hasShareOps(h History) bool {
	return slices.ContainsFunc(h.Ops, func(op Op) bool { return op.Kind >= ShareAcquire && op.Kind <= ShareLeave })
}

// holder names the member that holds what op acquired.
func holder(op *Op) string {
	if op.Member != "" {
		return op.Member
	}
	return op.Process
}

type shareCheck struct {
	h      History
	con    *contract
	groups map[string]ShareGroup
	recs   map[shareKey]*shareRecord
	order  []shareKey
	leaves map[string][]*Op   // group + "\x00" + member
	excuse map[tp][]stateFact // stateExcuse's cache, in time order
	f      Final
}

func share(h History, con *contract, f Final) Verdict {
	c := &shareCheck{h: h, con: con, f: f, groups: map[string]ShareGroup{}, recs: map[shareKey]*shareRecord{},
		leaves: map[string][]*Op{}, excuse: map[tp][]stateFact{}}
	for _, g := range h.ShareGroups {
		c.groups[g.Group] = g
	}
	rec := func(key shareKey) *shareRecord {
		r := c.recs[key]
		if r == nil {
			r = &shareRecord{}
			c.recs[key] = r
			c.order = append(c.order, key)
		}
		return r
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		k := tp{op.Topic, op.Partition}
		switch op.Kind {
		case ShareAcquire:
			if op.Outcome != OK {
				continue
			}
			for _, r := range op.Records {
				sr := rec(shareKey{op.Group, k, r.Offset})
				sr.value = r.Value
				sr.deliveries = append(sr.deliveries, op)
				sr.counts = append(sr.counts, r.DeliveryCount)
			}
		case ShareAck:
			for _, r := range op.Records {
				sr := rec(shareKey{op.Group, k, r.Offset})
				sr.acks = append(sr.acks, op)
			}
		case ShareLeave:
			c.leaves[op.Group+"\x00"+holder(op)] = append(c.leaves[op.Group+"\x00"+holder(op)], op)
		}
	}
	var out []Anomaly
	for _, key := range c.order {
		out = append(out, c.record(key, c.recs[key])...)
	}
	out = append(out, c.loads()...)
	owed, notes := c.owed()
	out = append(out, owed...)
	if len(h.ShareGroups) == 0 && len(c.order) == 0 {
		return NotJudgedVerdict(NameShare, "no share group in the run")
	}
	return verdict(NameShare, out, false, notes...)
}

// limit returns the group's delivery count limit (Kafka's default 5 when
// the group is not declared).
func (c *shareCheck) limit(group string) int16 {
	if g, ok := c.groups[group]; ok && g.DeliveryCountLimit > 0 {
		return g.DeliveryCountLimit
	}
	return 5
}

// lockDuration returns the group's lock duration (Kafka's default 30 s).
func (c *shareCheck) lockDuration(group string) sim.Duration {
	if g, ok := c.groups[group]; ok && g.LockDuration > 0 {
		return g.LockDuration
	}
	return 30 * sim.Second
}

// record judges one record's deliveries and acknowledgements.
func (c *shareCheck) record(key shareKey, r *shareRecord) []Anomaly {
	var out []Anomaly
	base := Anomaly{Topic: key.k.topic, Partition: key.k.partition, Value: r.value, Offsets: []int64{key.offset}}
	limit := c.limit(key.group)
	for i, d := range r.deliveries {
		if r.counts[i] > limit {
			a := base
			a.Kind, a.Ops, a.Times = "share-over-limit", []int{d.Index}, []sim.Time{d.Complete}
			a.Description = holder(d) + " of share group " + key.group + " got delivery " + strconv.Itoa(int(r.counts[i])) +
				", past group.share.delivery.count.limit=" + strconv.Itoa(int(limit))
			out = append(out, a)
			break
		}
	}
uncounted:
	for i, x := range r.deliveries {
		for j := i + 1; j < len(r.deliveries); j++ {
			y := r.deliveries[j]
			if x.Complete >= y.Invoke || r.counts[j] > r.counts[i] {
				continue
			}
			a := base
			a.Kind, a.Ops, a.Times = "share-uncounted", []int{x.Index, y.Index}, []sim.Time{x.Complete, y.Invoke}
			a.Description = "share group " + key.group + " delivered it with count " + strconv.Itoa(int(r.counts[i])) + " to " + holder(x) +
				", then with count " + strconv.Itoa(int(r.counts[j])) + " to " + holder(y) + ": a delivery went uncounted"
			if why, ok := c.zombie(y); ok {
				a.Permitted, a.Description = true, a.Description+"; "+why
			} else if l, ok := c.loadBetween(key, x.Invoke, y.Complete); ok {
				a.Permitted = true
				a.Description += "; permitted: b" + strconv.Itoa(int(l.Broker)) + " recovered the share-partition from __share_group_state at " + l.Time.String() +
					" (Kafka persists a delivery count when the record's state changes, not when it is acquired)"
			} else if why, ok := c.stateExcuse(key.k, y.Complete); ok {
				a.Permitted, a.Description = true, a.Description+"; "+why
			}
			out = append(out, a)
			break uncounted
		}
	}
	out = append(out, c.doubleHold(key, r, base)...)
	var accepts []*Op
	for _, a := range r.acks {
		if a.AckType == AckAccept && a.Outcome == OK {
			accepts = append(accepts, a)
		}
	}
	if len(accepts) > 1 {
		why, excused := c.stateExcuse(key.k, accepts[1].Complete)
		a := base
		a.Kind, a.Ops, a.Times = "share-accept-twice", []int{accepts[0].Index, accepts[1].Index}, []sim.Time{accepts[0].Complete, accepts[1].Complete}
		a.Description = "share group " + key.group + " acknowledged it as ACCEPT twice, by " + holder(accepts[0]) + " and " + holder(accepts[1])
		a.Permitted = excused
		if excused {
			a.Description += "; " + why
		}
		out = append(out, a)
	}
	if len(accepts) > 0 {
		first := accepts[0]
		for _, d := range r.deliveries {
			if d.Invoke > first.Complete {
				why, excused := c.stateExcuse(key.k, d.Complete)
				if zw, ok := c.zombie(d); ok && !excused {
					why, excused = zw, true
				}
				a := base
				a.Kind, a.Ops, a.Times = "share-redelivered-after-accept", []int{first.Index, d.Index}, []sim.Time{first.Complete, d.Invoke}
				a.Description = "share group " + key.group + " delivered it to " + holder(d) + " after " + holder(first) + "'s ACCEPT was acknowledged at " + first.Complete.String()
				a.Permitted = excused
				if excused {
					a.Description += "; " + why
				}
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// doubleHold finds two members holding the record under live locks.
func (c *shareCheck) doubleHold(key shareKey, r *shareRecord, base Anomaly) []Anomaly {
	lock := c.lockDuration(key.group)
	for i, x := range r.deliveries {
		for j := i + 1; j < len(r.deliveries); j++ {
			y := r.deliveries[j]
			if holder(x) == holder(y) {
				continue
			}
			lo, hi := min(x.Invoke, y.Invoke), max(x.Complete, y.Complete)
			if hi-lo >= sim.Time(lock) || c.released(key, x, lo, hi) || c.released(key, y, lo, hi) {
				continue
			}
			if _, ok := c.loadBetween(key, lo, hi); ok {
				continue
			}
			a := base
			a.Kind, a.Ops, a.Times = "share-double-hold", []int{x.Index, y.Index}, []sim.Time{x.Complete, y.Complete}
			for _, d := range []*Op{x, y} {
				if why, ok := c.zombie(d); ok && !a.Permitted {
					a.Permitted, a.Reason = true, why
				}
			}
			a.Description = "share group " + key.group + " gave it to " + holder(x) + " (delivery " + strconv.Itoa(int(r.counts[i])) + ") and to " +
				holder(y) + " (delivery " + strconv.Itoa(int(r.counts[j])) + ") within " + sim.Duration(hi-lo).String() +
				", under group.share.record.lock.duration.ms=" + strconv.FormatInt(int64(lock/sim.Millisecond), 10) + ", with no acknowledgement or leave between"
			if a.Permitted {
				a.Description += "; " + a.Reason
				a.Reason = ""
			}
			return []Anomaly{a}
		}
	}
	return nil
}

// released reports whether d's holder may have given the record back by
// hi: an acknowledgement of it (not certainly failed) or a leave sent in
// [lo, hi].
func (c *shareCheck) released(key shareKey, d *Op, lo, hi sim.Time) bool {
	for _, a := range c.recs[key].acks {
		if holder(a) == holder(d) && a.Outcome != Fail && a.Invoke <= hi && a.Invoke >= lo {
			return true
		}
	}
	for _, l := range c.leaves[key.group+"\x00"+holder(d)] {
		if l.Invoke >= lo && l.Invoke <= hi {
			return true
		}
	}
	return false
}

// zombie returns why delivery d may come from a deposed leader: the
// broker that served it (Op.Leader) was not the partition's leader the
// controller had last elected when the ShareFetch was sent.
func (c *shareCheck) zombie(d *Op) (string, bool) {
	if d.Leader < 0 {
		return "", false
	}
	leader, epoch, at := int32(-1), int32(-1), sim.Time(0)
	for _, ch := range c.f.Facts.ISRChanges {
		if ch.Topic != d.Topic || ch.Partition != d.Partition || ch.Time > d.Invoke || ch.LeaderEpoch < 0 || ch.LeaderEpoch < epoch {
			continue
		}
		leader, epoch, at = ch.Leader, ch.LeaderEpoch, ch.Time
	}
	if leader < 0 || leader == d.Leader {
		return "", false
	}
	return "permitted: b" + strconv.Itoa(int(d.Leader)) + " served it as a deposed leader (the controller made b" + strconv.Itoa(int(leader)) +
		" leader at epoch " + strconv.Itoa(int(epoch)) + " at " + at.String() + "): a ShareFetch carries no leader epoch, so a zombie leader hands out " +
		"records from its stale share-partition (KIP-932 fences its writes to __share_group_state, not its deliveries)", true
}

// loadBetween returns a state reload of the record's share-partition in
// [lo, hi].
func (c *shareCheck) loadBetween(key shareKey, lo, hi sim.Time) (ShareLoad, bool) {
	for _, l := range c.h.ShareLoads {
		if l.Group == key.group && l.Topic == key.k.topic && l.Partition == key.k.partition && l.Time >= lo && l.Time <= hi {
			return l, true
		}
	}
	return ShareLoad{}, false
}

// stateExcuse returns why the share state of k may be lost by time at: a
// loss fact (other than an acks=1 leader failure) of k or of a
// __share_group_state partition, at or before at.
func (c *shareCheck) stateExcuse(k tp, at sim.Time) (string, bool) {
	facts, ok := c.excuse[k]
	if !ok {
		cands := []tp{k}
		for _, u := range c.f.Facts.UncleanElections {
			if u.Topic == "__share_group_state" && !slices.Contains(cands, tp{u.Topic, u.Partition}) {
				cands = append(cands, tp{u.Topic, u.Partition})
			}
		}
		for _, pf := range c.f.Partitions {
			if pf.Topic == "__share_group_state" && !slices.Contains(cands, tp{pf.Topic, pf.Partition}) {
				cands = append(cands, tp{pf.Topic, pf.Partition})
			}
		}
		for _, s := range cands {
			for _, lf := range c.con.lossFacts(s) {
				if lf.kind != lossLeaderFailure {
					facts = append(facts, stateFact{lf.time, lf.why + " on " + s.String()})
				}
			}
		}
		slices.SortStableFunc(facts, func(a, b stateFact) int { return cmpTime(a.time, b.time) })
		c.excuse[k] = facts
	}
	if len(facts) > 0 && facts[0].time <= at {
		return facts[0].why, true
	}
	return "", false
}

// stateFact is a loss fact that may lose share state.
type stateFact struct {
	time sim.Time
	why  string
}

func cmpTime(a, b sim.Time) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// loads checks that every recovered state keeps the acceptances
// acknowledged before it.
func (c *shareCheck) loads() []Anomaly {
	var out []Anomaly
	for _, l := range c.h.ShareLoads {
		k := tp{l.Topic, l.Partition}
		var lost []int64
		var ops []int
		for i := range c.h.Ops {
			op := &c.h.Ops[i]
			if op.Kind != ShareAck || op.AckType != AckAccept || op.Outcome != OK || op.Group != l.Group || op.Topic != l.Topic ||
				op.Partition != l.Partition || op.Complete >= l.Time {
				continue
			}
			n := len(lost)
			for _, r := range op.Records {
				if !l.done(r.Offset) && !slices.Contains(lost, r.Offset) {
					lost = append(lost, r.Offset)
				}
			}
			if len(lost) > n {
				ops = append(ops, op.Index)
			}
		}
		if len(lost) == 0 {
			continue
		}
		slices.Sort(lost)
		a := Anomaly{Kind: "share-lost-acceptance", Topic: l.Topic, Partition: l.Partition, Offsets: lost, Ops: ops,
			Replicas: []int32{l.Broker}, Times: []sim.Time{l.Time},
			Description: "b" + strconv.Itoa(int(l.Broker)) + " recovered share group " + l.Group + "'s state (epoch " + strconv.Itoa(int(l.StateEpoch)) +
				", start offset " + strconv.FormatInt(l.StartOffset, 10) + ") without " + strconv.Itoa(len(lost)) + " acceptance(s) acknowledged before it"}
		if why, ok := c.stateExcuse(k, l.Time); ok {
			a.Permitted, a.Description = true, a.Description+"; "+why
		}
		out = append(out, a)
	}
	return out
}

// owed judges, per declared group, what every acknowledged send to its
// topics got (share-lost, share-unfinished) and counts the outcomes for
// the notes.
func (c *shareCheck) owed() ([]Anomaly, []string) {
	var out []Anomaly
	var notes []string
	for _, g := range c.h.ShareGroups {
		first := map[tp]sim.Time{} // the first ShareFetch answer of each partition
		for i := range c.h.Ops {
			op := &c.h.Ops[i]
			if op.Kind == ShareAcquire && op.Group == g.Group && op.Outcome == OK {
				k := tp{op.Topic, op.Partition}
				if t, ok := first[k]; !ok || op.Complete < t {
					first[k] = op.Complete
				}
			}
		}
		limit := c.limit(g.Group)
		var judged, accepted, rejected, archived, redelivered, deliveries, lost, unfinished int
		for i := range c.h.Ops {
			op := &c.h.Ops[i]
			if op.Kind != Send || op.Outcome != OK || !slices.Contains(g.Topics, op.Topic) {
				continue
			}
			k := tp{op.Topic, op.Partition}
			if g.AutoOffsetReset == "latest" {
				if t, ok := first[k]; !ok || op.Invoke <= t {
					continue
				}
			}
			judged++
			key := shareKey{g.Group, k, op.Offset}
			r := c.recs[key]
			base := Anomaly{Topic: k.topic, Partition: k.partition, Value: op.Value, Offsets: []int64{op.Offset}, Ops: []int{op.Index}}
			if r == nil || len(r.deliveries) == 0 {
				lost++
				if !g.Drained {
					continue
				}
				a := base
				a.Kind = "share-lost"
				a.Description = "acknowledged at offset " + strconv.FormatInt(op.Offset, 10) + ", never delivered to share group " + g.Group
				if why, ok := c.con.lossExcuse(*op); ok {
					a.Permitted, a.Description = true, a.Description+"; "+why
				}
				out = append(out, a)
				continue
			}
			deliveries += len(r.deliveries)
			if len(r.deliveries) > 1 {
				redelivered++
			}
			acc, rej := false, false
			for _, a := range r.acks {
				if a.Outcome == Fail {
					continue
				}
				acc = acc || a.AckType == AckAccept
				rej = rej || a.AckType == AckReject
			}
			last := r.counts[len(r.counts)-1]
			for _, n := range r.counts {
				last = max(last, n)
			}
			switch {
			case acc:
				accepted++
			case rej:
				rejected++
			case last >= limit:
				archived++
			default:
				unfinished++
				if !g.Drained {
					continue
				}
				a := base
				a.Kind = "share-unfinished"
				a.Ops = append(a.Ops, r.deliveries[len(r.deliveries)-1].Index)
				a.Description = "share group " + g.Group + " delivered it " + strconv.Itoa(len(r.deliveries)) + " time(s), last count " + strconv.Itoa(int(last)) +
					" below group.share.delivery.count.limit=" + strconv.Itoa(int(limit)) + ", and it was never accepted or rejected: another delivery was owed"
				if why, ok := c.con.lossExcuse(*op); ok {
					a.Permitted, a.Description = true, a.Description+"; "+why
				} else if why, ok := c.stateExcuse(k, sim.Time(math.MaxInt64)); ok {
					a.Permitted, a.Description = true, a.Description+"; "+why
				}
				out = append(out, a)
			}
		}
		var b strings.Builder
		b.WriteString("share group " + g.Group + ": " + strconv.Itoa(judged) + " acknowledged records owed, " + strconv.Itoa(deliveries) + " deliveries; " +
			strconv.Itoa(accepted) + " accepted, " + strconv.Itoa(rejected) + " rejected, " + strconv.Itoa(archived) + " archived at the delivery limit (" +
			strconv.Itoa(int(limit)) + "), " + strconv.Itoa(redelivered) + " redelivered, " + strconv.Itoa(lost) + " never delivered, " + strconv.Itoa(unfinished) + " unfinished")
		if !g.Drained {
			b.WriteString(" (not drained: never delivered and unfinished records are not judged)")
		}
		notes = append(notes, b.String())
	}
	return out, notes
}
