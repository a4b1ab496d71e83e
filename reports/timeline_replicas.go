package reports

// This file draws the run timeline's replica lanes, the picture every KIP
// draws (KIP-101's and KIP-279's figures): one lane per replica of each
// judged partition with its LEO (solid) and HW (dashed) over simulated
// time, a band while it leads (with its leader epoch), a grey band while
// its broker is down, a purple bar while it is in the leader's ISR; each
// acknowledged record that was lost marked where it was acknowledged (a
// red dot on the acknowledging leader's lane, at its offset) and where a
// replica's log was first seen without it (a red bar on that replica's
// lane, over the offsets it lost: a truncation, or the first look at a
// log a power loss cut short, once the restarted broker loads it). All of it comes from the harness' recorded
// state changes (harness.StateChange) and truncations, deterministically.
//
// Simplification: the lost records marked one by one are those the
// acked-loss verdict lists (its first checkers.MaxAnomalies); a group with
// more is also a translucent box over its offsets and acknowledgement
// times, and the truncation bars cover the listed records only.

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
)

// maxTimelinePartitions bounds the partitions the timeline draws.
const maxTimelinePartitions = 4

// replicaLaneH is a replica lane's height, partHeaderH a partition's title row's.
const replicaLaneH, partHeaderH = 40.0, 18.0

// lostRecord is an acknowledged record the acked-loss verdict lists.
type lostRecord struct {
	value  string
	offset int64
	acked  sim.Time
	leader int32 // the broker that acknowledged it, -1 if unknown
}

// truncMark is a truncation that removed lost records from a replica.
type truncMark struct {
	t        sim.Time
	broker   int32
	from, to int64
	n        int
}

// partLanes is one partition's lanes.
type partLanes struct {
	tp      string
	brokers []int32
	changes []harness.StateChange
	maxOff  int64
	lost    []lostRecord
	truncs  []truncMark
	// unlisted are the acked-loss groups with records the verdict only
	// counts: each is drawn as a box over its offsets and times.
	unlisted []checkers.AnomalyGroup
}

// replicaLanes picks the partitions to draw (those with lost or divergent
// records first, then those the clients wrote, then the others but the
// internal topics, each in the order they first changed, at most
// maxTimelinePartitions) and gathers their changes, lost records and
// truncations; it returns how many partitions it left out.
func replicaLanes(r *harness.Result) ([]*partLanes, int) {
	flagged := map[string]bool{}
	lost := map[string][]lostRecord{}
	leaderOf := map[int]int32{}
	sent := map[string]bool{} // the partitions the clients wrote: the ones judged
	for _, op := range r.History.Ops {
		if op.Kind == checkers.Send {
			leaderOf[op.Index] = op.Leader
			sent[op.Topic+"-"+strconv.Itoa(int(op.Partition))] = true
		}
	}
	unlisted := map[string][]checkers.AnomalyGroup{}
	for _, v := range r.Verdicts {
		if v.Checker != checkers.NameAckedLoss && v.Checker != checkers.NameDivergence {
			continue
		}
		for _, g := range v.Groups {
			if g.Kind != checkers.KindCommittedLost && g.Count > g.Listed {
				tp := g.Topic + "-" + strconv.Itoa(int(g.Partition))
				unlisted[tp] = append(unlisted[tp], g)
				flagged[tp] = true
			}
		}
		for _, a := range v.Anomalies {
			tp := a.Topic + "-" + strconv.Itoa(int(a.Partition))
			flagged[tp] = true
			if v.Checker == checkers.NameAckedLoss && a.Kind != checkers.KindCommittedLost && len(a.Offsets) > 0 && len(a.Times) == 2 {
				lr := lostRecord{value: a.Value, offset: a.Offsets[0], acked: a.Times[1], leader: -1}
				if len(a.Ops) > 0 {
					if l, ok := leaderOf[a.Ops[0]]; ok {
						lr.leader = l
					}
				}
				lost[tp] = append(lost[tp], lr)
			}
		}
	}
	byTP := map[string]*partLanes{}
	var order []*partLanes
	for _, c := range r.Changes {
		p := byTP[c.Partition]
		if p == nil {
			if len(c.Replicas) == 0 {
				continue
			}
			p = &partLanes{tp: c.Partition, lost: lost[c.Partition], unlisted: unlisted[c.Partition]}
			for _, rep := range c.Replicas {
				p.brokers = append(p.brokers, rep.Broker)
			}
			byTP[c.Partition] = p
			order = append(order, p)
		}
		p.changes = append(p.changes, c)
		for _, rep := range c.Replicas {
			p.maxOff = max(p.maxOff, rep.LEO)
		}
	}
	// NB: internal topics (__consumer_offsets, __transaction_state) only
	// when the clients wrote them or the checkers flag them.
	rank := func(tp string) int {
		switch {
		case flagged[tp]:
			return 0
		case sent[tp]:
			return 1
		case strings.HasPrefix(tp, "__"):
			return 3
		}
		return 2
	}
	kept := order[:0]
	for _, p := range order {
		if rank(p.tp) < 3 {
			kept = append(kept, p)
		}
	}
	order = kept
	sort.SliceStable(order, func(i, j int) bool { return rank(order[i].tp) < rank(order[j].tp) })
	omitted := 0
	if len(order) > maxTimelinePartitions {
		omitted = len(order) - maxTimelinePartitions
		order = order[:maxTimelinePartitions]
	}
	for _, p := range order {
		p.truncs = lostTruncations(r.Truncations, p.tp, p.lost)
		for _, l := range p.lost {
			p.maxOff = max(p.maxOff, l.offset+1)
		}
		for _, g := range p.unlisted {
			p.maxOff = max(p.maxOff, g.To+1)
		}
	}
	return order, omitted
}

// lostTruncations finds, for each shortening of a replica of tp, the lost
// records it removed (at their offsets, before and not after).
func lostTruncations(ts []harness.Truncation, tp string, lost []lostRecord) []truncMark {
	if len(lost) == 0 {
		return nil
	}
	isLost := map[string]bool{}
	for _, l := range lost {
		isLost[l.value] = true
	}
	var out []truncMark
	for _, t := range ts {
		if t.Partition != tp {
			continue
		}
		after := map[int64]string{}
		for _, e := range t.After {
			after[e.Offset] = e.Value
		}
		m := truncMark{t: t.Time, broker: t.Broker, from: -1}
		for _, e := range t.Before {
			if v, ok := after[e.Offset]; isLost[e.Value] && (!ok || v != e.Value) {
				if m.from < 0 {
					m.from = e.Offset
				}
				m.from, m.to = min(m.from, e.Offset), max(m.to, e.Offset)
				m.n++
			}
		}
		if m.n > 0 {
			out = append(out, m)
		}
	}
	return out
}

// times are the partition's times the axis must show.
func (p *partLanes) times() []sim.Time {
	var ts []sim.Time
	for _, c := range p.changes {
		ts = append(ts, c.Time)
	}
	for _, l := range p.lost {
		ts = append(ts, l.acked)
	}
	for _, t := range p.truncs {
		ts = append(ts, t.t)
	}
	return ts
}

// span is a stretch of a lane in one state.
type span struct {
	t0, t1 sim.Time
	text   string
}

// draw lays the partition's lanes out from y and returns the y below
// them; each replica lane is added to its broker's lanes for the faults.
func (p *partLanes) draw(dr *drawing, axis timeAxis, y float64, end sim.Time, brokerLanes map[int32][][2]float64) float64 {
	dr.add(shape{Kind: shapeText, X: 4, Y: y + 13, Text: p.tp + " (offsets 0–" + strconv.FormatInt(p.maxOff, 10) + ")", Bold: true})
	y += partHeaderH
	laneTop := map[int32]float64{}
	offY := func(top float64, off int64) float64 {
		return top + replicaLaneH - 6 - float64(off)/float64(max(p.maxOff, 1))*(replicaLaneH-14)
	}
	for i, b := range p.brokers {
		top := y
		laneTop[b] = top
		brokerLanes[b] = append(brokerLanes[b], [2]float64{top, top + replicaLaneH})
		name := "b" + strconv.Itoa(int(b))
		dr.add(shape{Kind: shapeText, X: 14, Y: top + replicaLaneH/2 + 4, Text: name})
		dr.add(shape{Kind: shapeLine, X: timelineLeft, Y: top + replicaLaneH, X2: timelineWidth, Y2: top + replicaLaneH, Stroke: "#dddddd"})
		var leads, down, inISR []span
		var leo, hw []float64
		add := func(ss *[]span, on bool, t sim.Time, text string) {
			n := len(*ss)
			open := n > 0 && (*ss)[n-1].t1 < 0
			switch {
			case on && open && (*ss)[n-1].text != text:
				(*ss)[n-1].t1 = t
				*ss = append(*ss, span{t, -1, text})
			case on && !open:
				*ss = append(*ss, span{t, -1, text})
			case !on && open:
				(*ss)[n-1].t1 = t
			}
		}
		step := func(pts *[]float64, t sim.Time, v int64) {
			// NB: x snapped to whole pixels, so a line whose value changes
			// a thousand times over 150 px has ~300 points, not 2,000.
			x, yv := math.Round(axis.x(t)), math.Round(offY(top, v)*10)/10
			n := len(*pts)
			switch {
			case n == 0:
				*pts = append(*pts, x, yv)
			case (*pts)[n-1] == yv:
			case (*pts)[n-2] == x:
				(*pts)[n-1] = yv // NB: one pixel column keeps its last value: the line stays short
			default:
				*pts = append(*pts, x, (*pts)[n-1], x, yv)
			}
		}
		for _, c := range p.changes {
			rep := c.Replicas[i]
			isr := leaderISR(c.Replicas)
			add(&leads, rep.Alive && rep.Role == checkers.Leader, c.Time, "leader e"+strconv.Itoa(int(rep.LeaderEpoch)))
			add(&down, !rep.Alive, c.Time, "down")
			add(&inISR, isr != nil && containsID(isr, b), c.Time, "in the ISR")
			if rep.Alive {
				step(&leo, c.Time, rep.LEO)
				step(&hw, c.Time, rep.HW)
			}
		}
		for _, ss := range [][]span{leads, down, inISR} {
			for k := range ss {
				if ss[k].t1 < 0 {
					ss[k].t1 = end
				}
			}
		}
		for _, s := range down {
			x0, x1 := axis.x(s.t0), axis.x(s.t1)
			dr.add(shape{Kind: shapeRect, X: x0, Y: top + 2, W: max(x1-x0, 1), H: replicaLaneH - 4, Fill: "#d0d7de", Opacity: 0.6, Class: "down", Title: name + " down " + s.t0.String() + "–" + s.t1.String()})
		}
		for _, s := range leads {
			x0, x1 := axis.x(s.t0), axis.x(s.t1)
			dr.add(shape{Kind: shapeRect, X: x0, Y: top + 2, W: max(x1-x0, 1), H: replicaLaneH - 4, Fill: "#ddf4ff", Class: "lead", Title: name + " " + s.text + " " + s.t0.String() + "–" + s.t1.String()})
			if x1-x0 > 60 {
				dr.add(shape{Kind: shapeText, X: x0 + 3, Y: top + 12, Text: s.text, Fill: "#0969da"})
			}
		}
		for _, s := range inISR {
			x0, x1 := axis.x(s.t0), axis.x(s.t1)
			dr.add(shape{Kind: shapeRect, X: x0, Y: top + replicaLaneH - 4, W: max(x1-x0, 1), H: 3, Fill: "#8250df", Class: "isr", Title: name + " in the ISR " + s.t0.String() + "–" + s.t1.String()})
		}
		// NB: each line runs to the end of the run at its last value.
		for _, l := range []struct {
			pts  []float64
			col  string
			dash bool
			what string
		}{{leo, "#24292f", false, "LEO"}, {hw, "#1a7f37", true, "HW"}} {
			if n := len(l.pts); n > 0 {
				pts := append(l.pts, axis.x(end), l.pts[n-1])
				dr.add(shape{Kind: shapePath, Pts: pts, Stroke: l.col, StrokeW: 1.5, Dash: l.dash, Class: "line-" + l.what, Title: name + " " + l.what})
			}
		}
		y += replicaLaneH
	}
	// Lost records: dots where acknowledged, bars where truncated away;
	// dots that fall on one 3-px cell are drawn once, with their count.
	type cell struct{ x, y int }
	dots := map[cell]int{}
	var cells []cell
	var first []lostRecord
	for _, l := range p.lost {
		leader := l.leader
		if _, ok := laneTop[leader]; !ok {
			leader = leaderAt(p, l.acked)
		}
		top, ok := laneTop[leader]
		if !ok {
			continue
		}
		c := cell{int(axis.x(l.acked) / 3), int(offY(top, l.offset) / 3)}
		if dots[c] == 0 {
			cells = append(cells, c)
			first = append(first, l)
		}
		dots[c]++
	}
	for i, c := range cells {
		title := "acknowledged " + first[i].value + " at offset " + strconv.FormatInt(first[i].offset, 10) + " at " + first[i].acked.String() + ", lost"
		if n := dots[c]; n > 1 {
			title += " (and " + strconv.Itoa(n-1) + " more here)"
		}
		dr.add(shape{Kind: shapeRect, X: float64(c.x*3) - 1, Y: float64(c.y*3) - 1, W: 4, H: 4, Fill: "#cf222e", Class: "acked-lost", Title: title})
	}
	// A group with records the verdict only counts: a box over its
	// offsets and acknowledgement times on the lane of the leader then.
	for _, g := range p.unlisted {
		top, ok := laneTop[leaderAt(p, g.AckedFrom)]
		if !ok {
			continue
		}
		x0, x1, y0, y1 := axis.x(g.AckedFrom), axis.x(g.AckedTo), offY(top, g.To), offY(top, g.From)
		dr.add(shape{Kind: shapeRect, X: x0 - 1, Y: y0 - 1, W: x1 - x0 + 2, H: y1 - y0 + 2, Fill: "#cf222e", Opacity: 0.25, Stroke: "#cf222e",
			Class: "acked-lost-group", Title: g.String()})
	}
	for _, t := range p.truncs {
		top, ok := laneTop[t.broker]
		if !ok {
			continue
		}
		x, y0, y1 := axis.x(t.t), offY(top, t.to), offY(top, t.from)
		dr.add(shape{Kind: shapeRect, X: x - 2, Y: y0 - 2, W: 5, H: y1 - y0 + 4, Fill: "#cf222e", Stroke: "#82071e", Class: "truncated-lost",
			Title: "b" + strconv.Itoa(int(t.broker)) + " at " + t.t.String() + ": its log no longer holds " + strconv.Itoa(t.n) + " acknowledged records that were lost (offsets " +
				strconv.FormatInt(t.from, 10) + "–" + strconv.FormatInt(t.to, 10) + "): a truncation, or a restart after losing unflushed data"})
	}
	return y + 6
}

// leaderISR is the ISR of the live leader of the highest epoch, nil if
// none leads.
func leaderISR(rs []checkers.ReplicaState) []int32 {
	var isr []int32
	epoch := int32(-1)
	for _, r := range rs {
		if r.Alive && r.Role == checkers.Leader && r.LeaderEpoch > epoch {
			isr, epoch = r.ISR, r.LeaderEpoch
		}
	}
	return isr
}

// leaderAt is the partition's live leader at t (-1 if none).
func leaderAt(p *partLanes, t sim.Time) int32 {
	leader := int32(-1)
	for _, c := range p.changes {
		if c.Time > t {
			break
		}
		leader = -1
		epoch := int32(-1)
		for _, r := range c.Replicas {
			if r.Alive && r.Role == checkers.Leader && r.LeaderEpoch > epoch {
				leader, epoch = r.Broker, r.LeaderEpoch
			}
		}
	}
	return leader
}

func containsID(ids []int32, b int32) bool {
	for _, id := range ids {
		if id == b {
			return true
		}
	}
	return false
}
