// consumer.go: the consumer checker, Jepsen's Kafka anomalies on what group
// consumers delivered to their applications (reference checkers.md §2.1).
//
// What it checks, over Consume operations that completed OK:
//   - G1a (aborted read): a delivered value whose Send failed (Fail: the
//     client was told it was certainly not written);
//   - inconsistent-offsets: one offset of a partition holding two values
//     (in deliveries and acknowledged sends);
//   - duplicate: a value delivered twice to one group;
//   - lost-write: an acknowledged value at an offset below the highest
//     offset a group delivered (and at or above where the group started)
//     that the group never delivered;
//   - unseen: acknowledged values past everything a group delivered;
//   - poll-skip / nonmonotonic-poll (between two deliveries to one process,
//     with no Assign or Revoke of the partition between them) and
//     int-poll-skip / int-nonmonotonic-poll (inside one delivery). A skip
//     jumps over a known offset: one acknowledged, delivered, or in the
//     final committed log.
//
// Whether Kafka permits it: any anomaly on a partition with a loss fact
// (contract.go: an unclean election, an acks=1 leader failure, the whole ISR
// down with one member losing unflushed data — the log was truncated and
// offsets reused; for a lost write, a fact that excuses that very record),
// or whose group's __consumer_offsets partition went through an unclean
// election or lost its whole ISR, is permitted, naming the fact; a duplicate is permitted for at-least-once consumers and a
// lost write for at-most-once ones (the patterns' own trade); for
// exactly-once consumers (an idempotent sink) neither is; the rest break
// the contract. Two exceptions are never excused by a loss fact: a lost
// write a KIP-320 consumer should have caught (kip320-skip,
// consumer_kip320.go) and a record read past its fetch response's HW or
// LSO (read-beyond-hw, read-beyond-lso, fetchbound.go).
//
// What it simplifies: a group is judged per partition; values are unique
// per run, as the producers write them.

package checkers

import (
	"slices"
	"sort"
	"strconv"
)

// Names of the consumer checkers.
const (
	NameConsumer = "consumer"
	NameGroup    = "group"
)

// ConsumerNames lists the checkers CheckAll adds when the history has
// consumers.
var ConsumerNames = []string{NameConsumer, NameGroup}

// consumerFacts is what both consumer checkers derive from a history.
type consumerFacts struct {
	h         History
	semantics map[string]string // process -> pattern
	group     map[string]string // process -> group
	unfenced  map[string]bool   // groups with a member committing unfenced
	con       *contract
	loss      map[tp]string  // the first loss fact of a partition that excuses one of its sends
	offsets   string         // why a __consumer_offsets partition may have lost commits ("" if it may not)
	known     map[tp][]int64 // sorted known offsets
	acked     map[tp][]*Op   // acknowledged sends, into h.Ops
	values    map[tp]map[int64]offsetValues
	// compacted are the compacted partitions' key indexes (ackedloss.go):
	// a group may never see a record the cleaner removed first.
	compacted map[tp]*compactionIndex
	// deletedBelow are the log start offsets DeleteRecords set (deletion.go).
	deletedBelow map[tp]int64
	// kip320 are the processes judged by consumer_kip320.go (truncation
	// detection, auto.offset.reset not latest); windows their deliveries.
	kip320  map[string]bool
	windows map[groupTP][][]kip320Delivery
}

// offsetValues are the distinct values seen at one offset: first, then the
// others in the order seen. NB: one value is the rule, so it is held inline
// (a map per offset cost an allocation for each record of a run).
type offsetValues struct {
	first string
	more  []string
}

// add adds v if it is not among the values.
func (vs *offsetValues) add(v string) {
	if vs.first == v || slices.Contains(vs.more, v) {
		return
	}
	vs.more = append(vs.more, v)
}

// count returns the number of distinct values.
func (vs offsetValues) count() int { return 1 + len(vs.more) }

func newConsumerFacts(h History, f Final, con *contract) *consumerFacts {
	cf := &consumerFacts{h: h, semantics: map[string]string{}, group: map[string]string{}, con: con, loss: map[tp]string{},
		known: map[tp][]int64{}, acked: map[tp][]*Op{}, values: map[tp]map[int64]offsetValues{}}
	cf.unfenced = map[string]bool{}
	for _, pf := range f.Partitions {
		if pf.DeletedBelow > 0 {
			if cf.deletedBelow == nil {
				cf.deletedBelow = map[tp]int64{}
			}
			cf.deletedBelow[tp{pf.Topic, pf.Partition}] = pf.DeletedBelow
		}
		if judge, ok := pf.Judge(); ok && pf.Compacted {
			if cf.compacted == nil {
				cf.compacted = map[tp]*compactionIndex{}
			}
			cf.compacted[tp{pf.Topic, pf.Partition}] = &compactionIndex{pf: pf, judge: judge}
		}
	}
	for _, c := range h.Consumers {
		cf.semantics[c.Process], cf.group[c.Process] = c.Semantics, c.Group
		if c.UnfencedCommits {
			cf.unfenced[c.Group] = true
		}
		if c.TruncationDetection && c.AutoOffsetReset != "latest" {
			if cf.kip320 == nil {
				cf.kip320 = map[string]bool{}
			}
			cf.kip320[c.Process] = true
		}
	}
	cf.lossFacts(h, f)
	// valuesOf returns k's values by offset. NB: the loops below look it
	// up once per op, not per record (hashing a tp hashes its topic).
	valuesOf := func(k tp) map[int64]offsetValues {
		m := cf.values[k]
		if m == nil {
			m = map[int64]offsetValues{}
			cf.values[k] = m
		}
		return m
	}
	addKnown := func(k tp, m map[int64]offsetValues, off int64, v string) {
		vs, ok := m[off]
		if !ok {
			cf.known[k] = append(cf.known[k], off)
			m[off] = offsetValues{first: v}
			return
		}
		vs.add(v)
		m[off] = vs
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		k := tp{op.Topic, op.Partition}
		switch {
		case op.Kind == Send && op.Outcome == OK:
			cf.acked[k] = append(cf.acked[k], op)
			addKnown(k, valuesOf(k), op.Offset, op.Value)
		case op.Kind == Consume && op.Outcome == OK:
			if len(op.Records) > 0 {
				m := valuesOf(k)
				for _, r := range op.Records {
					addKnown(k, m, r.Offset, r.Value)
				}
			}
		}
	}
	for _, pf := range f.Partitions {
		if judge, ok := pf.Judge(); ok {
			k := tp{pf.Topic, pf.Partition}
			if es := committed(judge); len(es) > 0 {
				m := valuesOf(k)
				for _, e := range es {
					addKnown(k, m, e.Offset, e.Value)
				}
			}
		}
	}
	for k := range cf.known {
		slices.Sort(cf.known[k])
	}
	return cf
}

// skipped returns the known offsets strictly between a and b.
func (cf *consumerFacts) skipped(k tp, a, b int64) []int64 {
	ks := cf.known[k]
	i := sort.Search(len(ks), func(i int) bool { return ks[i] > a })
	var out []int64
	removed := cf.removedByCleaner(k)
	for ; i < len(ks) && ks[i] < b; i++ {
		if !removed[ks[i]] {
			out = append(out, ks[i])
		}
	}
	return out
}

// removedByCleaner returns the offsets of k's acknowledged sends the log
// cleaner removed (nil unless k is compacted): a consumer rightly skips
// them.
func (cf *consumerFacts) removedByCleaner(k tp) map[int64]bool {
	x := cf.compacted[k]
	if x == nil {
		return nil
	}
	if x.removed == nil {
		x.removed = map[int64]bool{}
		for _, s := range cf.acked[k] {
			if x.superseded(s.Key, s.Offset, x.holds(s.Offset)) {
				x.removed[s.Offset] = true
			}
		}
	}
	return x.removed
}

// lossFacts fills cf.loss and cf.offsets from the contract.
func (cf *consumerFacts) lossFacts(h History, f Final) {
	for _, op := range h.Ops {
		k := tp{op.Topic, op.Partition}
		if _, done := cf.loss[k]; done || op.Kind != Send || op.Outcome == Fail {
			continue
		}
		if why, ok := cf.con.lossExcuse(op); ok {
			cf.loss[k] = why
		}
	}
	var offs []tp
	for _, u := range f.Facts.UncleanElections {
		if u.Topic == "__consumer_offsets" {
			offs = append(offs, tp{u.Topic, u.Partition})
		}
	}
	for _, pf := range f.Partitions {
		if pf.Topic == "__consumer_offsets" {
			offs = append(offs, tp{pf.Topic, pf.Partition})
		}
	}
	sort.SliceStable(offs, func(i, j int) bool { return offs[i].less(offs[j]) })
	for _, k := range offs {
		for _, lf := range cf.con.lossFacts(k) {
			if lf.kind != lossLeaderFailure && cf.offsets == "" { // commits are written with acks=all
				cf.offsets = lf.why + " on " + k.String()
			}
		}
	}
}

// permitted reports whether an anomaly on k is within the contract because
// k, or a __consumer_offsets partition, may have lost data.
func (cf *consumerFacts) permitted(k tp) bool { return cf.loss[k] != "" || cf.offsets != "" }

// lossNote is the evidence for permitted(k): "; permitted: ..." or "".
func (cf *consumerFacts) lossNote(k tp) string {
	switch {
	case cf.loss[k] != "":
		return "; " + cf.loss[k]
	case cf.offsets != "":
		return "; " + cf.offsets
	}
	return ""
}

// Consumers checks the deliveries of group consumers.
func Consumers(h History, f Final) Verdict {
	return consumers(h, newConsumerFacts(h, f, newContract(f)))
}

// consumers is Consumers with the run's consumer facts given (CheckAll
// builds them once for Consumers and Groups).
func consumers(h History, cf *consumerFacts) Verdict {
	var anomalies []Anomaly
	// inconsistent-offsets
	for _, k := range sortedTPs(cf.values) {
		for _, off := range cf.known[k] {
			if vs := cf.values[k][off]; vs.count() > 1 {
				names := append([]string{vs.first}, vs.more...)
				slices.Sort(names)
				anomalies = append(anomalies, Anomaly{Kind: "inconsistent-offsets", Topic: k.topic, Partition: k.partition,
					Offsets: []int64{off}, Description: "offset holds " + strconv.Itoa(len(names)) + " values: " + joinStrings(names) + cf.lossNote(k), Permitted: cf.loss[k] != ""})
			}
		}
	}
	anomalies = append(anomalies, abortedReads(h)...)
	anomalies = append(anomalies, fetchBounds(h)...)
	// Per group: duplicates, lost writes, unseen.
	type delivery struct {
		op     int
		offset int64
	}
	byGroup := map[string]map[tp]map[string][]delivery{}
	start := map[string]map[tp]int64{}
	// NB: a value's first delivery is a one-element slice carved from a
	// shared block (most values are delivered once: a slice each cost an
	// allocation per record); a second one makes append copy it out.
	var block []delivery
	deliver := func(ds []delivery, d delivery) []delivery {
		if ds != nil {
			return append(ds, d)
		}
		if len(block) == cap(block) {
			block = make([]delivery, 0, 1024)
		}
		block = append(block, d)
		return block[len(block)-1 : len(block) : len(block)]
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Kind != Consume || op.Outcome != OK || op.Group == "" {
			continue
		}
		k := tp{op.Topic, op.Partition}
		if byGroup[op.Group] == nil {
			byGroup[op.Group], start[op.Group] = map[tp]map[string][]delivery{}, map[tp]int64{}
		}
		dv := byGroup[op.Group][k]
		if dv == nil {
			dv = map[string][]delivery{}
			byGroup[op.Group][k] = dv
			start[op.Group][k] = op.FetchOffset
		}
		start[op.Group][k] = min(start[op.Group][k], op.FetchOffset)
		for _, r := range op.Records {
			dv[r.Value] = deliver(dv[r.Value], delivery{op.Index, r.Offset})
		}
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for _, g := range groups {
		for _, k := range sortedTPs(byGroup[g]) {
			dv := byGroup[g][k]
			values := make([]string, 0, len(dv))
			bound := int64(-1)
			for v, ds := range dv {
				values = append(values, v)
				for _, d := range ds {
					bound = max(bound, d.offset)
				}
			}
			slices.Sort(values)
			for _, v := range values {
				if ds := dv[v]; len(ds) > 1 {
					a := Anomaly{Kind: "duplicate", Topic: k.topic, Partition: k.partition, Value: v,
						Description: "delivered " + strconv.Itoa(len(ds)) + " times to group " + g}
					for _, d := range ds {
						a.Offsets, a.Ops = append(a.Offsets, d.offset), append(a.Ops, d.op)
					}
					a.Permitted = cf.mayDuplicate(h.Ops[ds[0].op].Process) || cf.mayDuplicate(h.Ops[ds[1].op].Process)
					if !a.Permitted && cf.permitted(k) {
						a.Permitted, a.Description = true, a.Description+cf.lossNote(k)
					}
					anomalies = append(anomalies, a)
				}
			}
			var unseen []*Op
			for _, s := range cf.acked[k] {
				if _, ok := dv[s.Value]; ok || s.Offset < start[g][k] || s.Offset < cf.deletedBelow[k] {
					continue // NB: below DeleteRecords' log start: deleted by request (deletion.go)
				}
				if x := cf.compacted[k]; x != nil && x.superseded(s.Key, s.Offset, x.holds(s.Offset)) {
					continue // the cleaner removed it: a later record of its key is committed
				}
				if s.Offset > bound {
					unseen = append(unseen, s)
					continue
				}
				a := Anomaly{Kind: "lost-write", Topic: k.topic, Partition: k.partition, Value: s.Value, Offsets: []int64{s.Offset}, Ops: []int{s.Index},
					Description: "acknowledged, never delivered to group " + g + ", which delivered up to offset " + strconv.FormatInt(bound, 10)}
				a.Permitted = cf.groupSemantics(g) == AtMostOnce
				// The record itself may be lost, or a truncation of the
				// partition below the group's position (offsets reused)
				// made the group skip it: before KIP-320 a consumer cannot
				// tell; with it, a skip it should have caught is a bug
				// (consumer_kip320.go).
				if why, ops, ok := cf.kip320Skip(g, k, s); ok && !a.Permitted {
					a.Kind, a.Description, a.Ops = "kip320-skip", a.Description+why, append(a.Ops, ops...)
				} else if why, ok := cf.con.lossExcuse(*s); ok && !a.Permitted {
					a.Permitted, a.Description = true, a.Description+"; "+why
				} else if !a.Permitted && cf.permitted(k) {
					a.Permitted, a.Description = true, a.Description+cf.lossNote(k)
				}
				anomalies = append(anomalies, a)
			}
			if len(unseen) > 0 {
				a := Anomaly{Kind: "unseen", Topic: k.topic, Partition: k.partition, Value: unseen[0].Value,
					Description: strconv.Itoa(len(unseen)) + " acknowledged value(s) past offset " + strconv.FormatInt(bound, 10) + " never delivered to group " + g,
					Permitted:   cf.groupSemantics(g) == AtMostOnce}
				if !a.Permitted && cf.permitted(k) {
					a.Permitted, a.Description = true, a.Description+cf.lossNote(k)
				}
				for _, s := range unseen {
					a.Offsets, a.Ops = append(a.Offsets, s.Offset), append(a.Ops, s.Index)
				}
				anomalies = append(anomalies, a)
			}
		}
	}
	anomalies = append(anomalies, cf.pollOrder()...)
	return verdict(NameConsumer, anomalies, false, "judged "+strconv.Itoa(len(groups))+" group(s)")
}

// mayDuplicate reports whether process's pattern lets it deliver a value
// twice: at-least-once, auto-commit and undeclared ones may.
func (cf *consumerFacts) mayDuplicate(process string) bool {
	s := cf.semantics[process]
	return s != AtMostOnce && s != ExactlyOnce
}

// abortedReads finds G1a: values delivered by a Consume although their
// Send failed. A failed send was answered with an error Kafka returns only
// before appending (or a request that never left the client), so its
// value in a log means the answer was wrong (or kafkasim's reading of
// it): never permitted.
func abortedReads(h History) []Anomaly {
	failed := map[string]int{} // value -> index of its failed Send
	for _, op := range h.Ops {
		if op.Kind == Send && op.Outcome == Fail {
			failed[op.Value] = op.Index
		}
	}
	if len(failed) == 0 {
		return nil
	}
	var out []Anomaly
	reported := map[string]bool{}
	for _, op := range h.Ops {
		if op.Kind != Consume || op.Outcome != OK {
			continue
		}
		for _, r := range op.Records {
			send, ok := failed[r.Value]
			if !ok || reported[r.Value] {
				continue
			}
			reported[r.Value] = true
			out = append(out, Anomaly{Kind: "G1a", Topic: op.Topic, Partition: op.Partition, Value: r.Value,
				Offsets: []int64{r.Offset}, Ops: []int{send, op.Index},
				Description: op.Process + " read a value whose send failed (" + h.Ops[send].Error + ")"})
		}
	}
	return out
}

func (cf *consumerFacts) groupSemantics(g string) string {
	s := ""
	for p, pg := range cf.group {
		if pg == g && cf.semantics[p] != "" {
			if s != "" && s != cf.semantics[p] {
				return "" // NB: mixed patterns: judged strictly
			}
			s = cf.semantics[p]
		}
	}
	return s
}

// pollOrder finds skips and going back within and between one process's
// deliveries of a partition.
func (cf *consumerFacts) pollOrder() []Anomaly {
	var out []Anomaly
	type key struct {
		process string
		k       tp
	}
	last := map[key]struct {
		offset int64
		op     int
	}{}
	for _, op := range cf.h.Ops {
		k := tp{op.Topic, op.Partition}
		pk := key{op.Process, k}
		switch {
		case op.Kind == Assign || op.Kind == Revoke:
			delete(last, pk)
			continue
		case op.Kind != Consume || op.Outcome != OK || len(op.Records) == 0:
			continue
		}
		prev, ok := last[pk]
		for i, r := range op.Records {
			from, ext := prev.offset, true
			if i > 0 {
				from, ext = op.Records[i-1].Offset, false
			} else if !ok {
				continue
			}
			kind := ""
			var offs []int64
			switch {
			case r.Offset <= from:
				kind, offs = "nonmonotonic-poll", []int64{from, r.Offset}
			default:
				if s := cf.skipped(k, from, r.Offset); len(s) > 0 {
					kind, offs = "poll-skip", s
				}
			}
			if kind == "" {
				continue
			}
			a := Anomaly{Kind: kind, Topic: k.topic, Partition: k.partition, Value: r.Value, Offsets: offs, Ops: []int{op.Index}, Permitted: cf.loss[k] != ""}
			if ext {
				a.Ops = []int{prev.op, op.Index}
				a.Description = op.Process + ": offset " + strconv.FormatInt(r.Offset, 10) + " after " + strconv.FormatInt(from, 10) + " in the previous delivery"
			} else {
				a.Kind = "int-" + kind
				a.Description = op.Process + ": offset " + strconv.FormatInt(r.Offset, 10) + " after " + strconv.FormatInt(from, 10) + " in one delivery"
			}
			if a.Permitted {
				a.Description += "; " + cf.loss[k]
			}
			out = append(out, a)
		}
		last[pk] = struct {
			offset int64
			op     int
		}{op.Records[len(op.Records)-1].Offset, op.Index}
	}
	return out
}

func joinStrings(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
