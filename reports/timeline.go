package reports

// This file lays out the run report's timeline: one lane per broker, one
// for the network and the world, one for the other nodes and one for the
// clients' failed produces, on a time axis that zooms to where events
// happen. The axis spans the first to the last mark drawn (not 0 to the
// end of the run, whose last seconds are often quiet end-phase reads), and
// an idle stretch longer than a fifth of that span is cut out and drawn as
// a break labelled with the time skipped, so 200 ms of faults and a heal
// 10 s later both stay readable. Ticks fall on round times (1, 2 or 5 ×
// 10^k ns) at least ~90 px apart, labelled in one unit per stretch with
// the decimals the step needs ("10.012s", "250ms"). A stretch's width is
// half by its time and half by how many marks it holds.

import (
	"html/template"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
)

// axisSeg is one drawn stretch of the time axis.
type axisSeg struct {
	T0, T1 sim.Time
	X0, X1 float64
}

// timeAxis maps virtual time to x, piecewise linearly over its segments.
type timeAxis struct {
	segs []axisSeg
}

// breakWidth is the width of the break drawn for an idle stretch;
// minSegWidth the least width of a stretch; maxSegs bounds the stretches
// (the smallest gaps are closed first).
const breakWidth, minSegWidth, maxSegs = 40.0, 80.0, 6

// newTimeAxis builds the axis for the given times between x = left and
// x = right.
func newTimeAxis(times []sim.Time, left, right float64) timeAxis {
	ts := append([]sim.Time(nil), times...)
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	if len(ts) == 0 {
		ts = []sim.Time{0}
	}
	span := ts[len(ts)-1] - ts[0]
	// Clusters split at idle gaps, the largest first, at most maxSegs.
	type gap struct {
		at  int
		len sim.Time
	}
	var gaps []gap
	for i := 1; i < len(ts); i++ {
		if g := ts[i] - ts[i-1]; g > span/5 && g > 0 {
			gaps = append(gaps, gap{i, g})
		}
	}
	sort.SliceStable(gaps, func(i, j int) bool { return gaps[i].len > gaps[j].len })
	if len(gaps) > maxSegs-1 {
		gaps = gaps[:maxSegs-1]
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].at < gaps[j].at })
	var segs []axisSeg
	var counts []int // the times in each stretch
	start := 0
	for k := 0; k <= len(gaps); k++ {
		end := len(ts)
		if k < len(gaps) {
			end = gaps[k].at
		}
		segs = append(segs, axisSeg{T0: ts[start], T1: ts[end-1]})
		counts = append(counts, end-start)
		start = end
	}
	// Pad each stretch a little so no mark sits on its edge.
	minPad := max(span/200, sim.Time(100*sim.Microsecond))
	var total float64
	for i := range segs {
		pad := max((segs[i].T1-segs[i].T0)/25, minPad)
		segs[i].T0 = max(segs[i].T0-pad, 0)
		segs[i].T1 += pad
		total += float64(segs[i].T1 - segs[i].T0)
	}
	avail := right - left - breakWidth*float64(len(segs)-1) - minSegWidth*float64(len(segs))
	x := left
	for i := range segs {
		// NB: half the width by time, half by what happens: a busy 200 ms
		// gets room beside a quiet 500 ms.
		share := 0.5*float64(segs[i].T1-segs[i].T0)/total + 0.5*float64(counts[i])/float64(len(ts))
		w := minSegWidth + math.Max(avail, 0)*share
		segs[i].X0, segs[i].X1 = x, x+w
		x += w + breakWidth
	}
	return timeAxis{segs}
}

// x returns the x of time t (a time in a break maps to the break's start).
func (a timeAxis) x(t sim.Time) float64 {
	s := a.segs[len(a.segs)-1]
	for _, sg := range a.segs {
		if t <= sg.T1 {
			s = sg
			break
		}
	}
	t = min(max(t, s.T0), s.T1)
	x := s.X0 + (s.X1-s.X0)*float64(t-s.T0)/float64(max(s.T1-s.T0, 1))
	return math.Round(10*x) / 10
}

// niceStep returns the least of 1, 2, 5 × 10^k ns at least d.
func niceStep(d float64) sim.Time {
	for p := sim.Time(1); ; p *= 10 {
		for _, m := range []sim.Time{1, 2, 5} {
			if float64(m*p) >= d {
				return m * p
			}
		}
	}
}

// tickLabel renders t in the unit of the stretch (up to end) with the
// decimals step needs.
func tickLabel(t, step, end sim.Time) string {
	unit, name := sim.Time(sim.Second), "s"
	switch {
	case end < sim.Time(sim.Microsecond):
		unit, name = 1, "ns"
	case end < sim.Time(sim.Millisecond):
		unit, name = sim.Time(sim.Microsecond), "µs"
	case end < sim.Time(sim.Second):
		unit, name = sim.Time(sim.Millisecond), "ms"
	}
	dec := 0
	for s := step; s < unit && dec < 9; s *= 10 {
		dec++
	}
	return strconv.FormatFloat(float64(t)/float64(unit), 'f', dec, 64) + name
}

// ticks returns the axis' tick marks and its breaks (Text: the time cut).
func (a timeAxis) ticks() (ticks, breaks []htmlMark) {
	last := math.Inf(-1)
	for i, s := range a.segs {
		n := math.Max(1, (s.X1-s.X0)/90)
		step := niceStep(float64(s.T1-s.T0) / n)
		for t := (s.T0 + step - 1) / step * step; t <= s.T1; t += step {
			x := a.x(t)
			if x-last < 60 || i+1 < len(a.segs) && s.X1-x < 30 {
				continue // too close to the last tick, or to the break after
			}
			ticks = append(ticks, htmlMark{X: x, Y: 30, Text: tickLabel(t, step, s.T1)})
			last = x
		}
		if i+1 < len(a.segs) {
			next := a.segs[i+1]
			breaks = append(breaks, htmlMark{X: s.X1 + breakWidth/2, Y: 14, Text: "+" + (next.T0 - s.T1).String()})
			last = next.X0 // no tick right after a break either
		}
	}
	return ticks, breaks
}

// timelineMark is one mark before the axis is known.
type timelineMark struct {
	t     sim.Time
	lane  int
	class string
	kind  string
	text  string
}

// markColors are the event marks' colours, by class.
var markColors = map[string]string{"fault": "#cf222e", "heal": "#1a7f37", "leader": "#0969da", "follower": "#8c959f",
	"isr": "#8250df", "truncate": "#bf8700", "failed": "#e36209"}

// timelineLeft is where the lanes start (the labels sit left of it);
// timelineWidth the picture's width.
const timelineLeft, timelineWidth = 120.0, 1100.0

// timeline draws the run: one lane per replica of each judged partition
// (timeline_replicas.go), a lane for the KRaft quorum's leader, then the
// trace's notable records on one lane per broker, a lane for the network,
// one for the other nodes and one for the produces that failed or timed
// out; faults are bands across the lanes they hit.
func (d *htmlReport) timeline(r *harness.Result) {
	if r.World == nil || len(r.World.Trace().Records()) == 0 {
		d.NoTrace = true
		return
	}
	recs := r.World.Trace().Records()
	var lanes []string
	lane := map[string]int{}
	for i := 0; i < r.World.Nodes(); i++ {
		name := r.World.Name(sim.NodeID(i))
		if isBrokerName(name) {
			lane[name] = len(lanes)
			lanes = append(lanes, name)
		}
	}
	network := len(lanes)
	clients := network + 2
	lanes = append(lanes, "network", "other")
	if len(d.FailedProduces) > 0 {
		lanes = append(lanes, "produce failed")
	}
	var marks []timelineMark
	for _, rec := range recs {
		class, ok := markKinds[rec.Kind]
		if !ok || (rec.Kind == "start" && rec.Name == "controller") {
			continue
		}
		if rec.Kind == "start" {
			if inc, _ := rec.Get("incarnation"); inc == "0" {
				continue // the first start is no event
			}
		}
		kind := rec.Kind
		if v, _ := rec.Get("lose-unsynced"); kind == "crash" && v == "true" {
			kind = "power-loss"
		}
		l, ok := lane[rec.Name]
		switch {
		case rec.Name == "world":
			l = network
		case !ok:
			l = network + 1
		}
		var fields []string
		for _, f := range rec.Fields {
			fields = append(fields, f.String())
		}
		ev := htmlEvent{Time: rec.Time.String(), Event: rec.Event, Node: rec.Name, Kind: kind, Fields: strings.Join(fields, " "), Class: class}
		d.Events = append(d.Events, ev)
		if rec.Kind == "truncate" {
			d.Truncations = append(d.Truncations, ev)
		}
		marks = append(marks, timelineMark{rec.Time, l, class, kind, rec.Time.String() + " " + rec.Name + " " + kind + " " + ev.Fields})
	}
	for _, f := range d.FailedProduces {
		marks = append(marks, timelineMark{f.at, clients, "failed", f.Outcome, f.Time + " " + f.Process + " produce " + f.Value + " to " + f.Partition + ": " + f.Outcome + " " + f.Error})
	}
	parts, omitted := replicaLanes(r)
	quorum := quorumSpans(recs)
	faults := faultBands(recs)
	times := make([]sim.Time, 0, len(marks))
	for _, m := range marks {
		times = append(times, m.t)
	}
	for _, p := range parts {
		times = append(times, p.times()...)
	}
	for _, q := range quorum {
		times = append(times, q.t0)
	}
	for _, f := range faults {
		times = append(times, f.t0, f.t1)
	}
	axis := newTimeAxis(times, timelineLeft, timelineWidth-20)
	end := slices.Max(append(times, 0))
	var dr drawing
	dr.Width = timelineWidth
	y := 44.0
	brokerLanes := map[int32][][2]float64{} // broker -> the lanes (top, bottom) its faults cover
	for _, p := range parts {
		y = p.draw(&dr, axis, y, end, brokerLanes)
	}
	if len(quorum) > 0 {
		d.HasQuorum = true
		y = drawQuorum(&dr, axis, quorum, y, end)
	}
	const laneH = 30.0
	laneY := make([]float64, len(lanes))
	for i, l := range lanes {
		laneY[i] = y + laneH/2
		dr.add(shape{Kind: shapeText, X: 4, Y: laneY[i] + 4, Text: l})
		dr.add(shape{Kind: shapeLine, X: timelineLeft, Y: laneY[i], X2: timelineWidth, Y2: laneY[i], Stroke: "#bbbbbb"})
		if isBrokerName(l) {
			id, _ := strconv.Atoi(l[1:])
			brokerLanes[int32(id)] = append(brokerLanes[int32(id)], [2]float64{y, y + laneH})
		}
		y += laneH
	}
	bands := drawFaults(axis, faults, brokerLanes, 44, y)
	for _, m := range marks {
		dr.add(shape{Kind: shapeRect, X: axis.x(m.t) - 2, Y: laneY[m.lane] - 8, W: 4, H: 16, Fill: markColors[m.class], Class: "mark " + m.class, Title: m.text})
	}
	ticks, breaks := axis.ticks()
	var top []shape
	for _, tk := range ticks {
		top = append(top, shape{Kind: shapeLine, X: tk.X, Y: 34, X2: tk.X, Y2: y, Stroke: "#e4e4e4"},
			shape{Kind: shapeText, X: tk.X, Y: tk.Y, Text: tk.Text, Anchor: "middle"})
	}
	// NB: grid and bands first, so the lines and marks stay on top; the
	// breaks last, so no line runs through time that is not drawn.
	dr.Shapes = append(append(top, bands...), dr.Shapes...)
	for _, b := range breaks {
		dr.add(shape{Kind: shapeRect, X: b.X - 12, Y: 20, W: 24, H: y - 20, Fill: "#ffffff", Stroke: "#999999", Dash: true, Class: "break"})
		dr.add(shape{Kind: shapeText, X: b.X, Y: b.Y, Text: b.Text, Anchor: "middle"})
	}
	dr.Height = legend(&dr, y+8)
	d.timelineDrawing = &dr
	if omitted > 0 {
		d.TimelineNote = strconv.Itoa(omitted) + " more partitions are not drawn (the report draws those with lost or divergent records first)."
	}
	var b strings.Builder
	if err := dr.svg(&b, "timeline"); err == nil {
		d.Timeline = template.HTML(b.String()) // NB: drawing.svg escapes every text
	}
}

// isBrokerName reports whether a node's name is a broker's (b0, b1, ...).
func isBrokerName(name string) bool {
	return len(name) > 1 && name[0] == 'b' && strings.Trim(name[1:], "0123456789") == ""
}

// htmlProduce is a produce that failed or whose outcome is unknown.
type htmlProduce struct {
	Time, Process, Partition, Value, Outcome, Error string
	at                                              sim.Time
}

// maxFailedProduces bounds the failed produces the report lists and draws.
const maxFailedProduces = 500

// failedProduces collects the produces the history says failed (a Kafka
// error: certainly not written) or timed out (unknown), in history order.
func (d *htmlReport) failedProduces(h checkers.History) {
	for _, op := range h.Ops {
		if op.Kind != checkers.Send || (op.Outcome != checkers.Fail && op.Outcome != checkers.Info) {
			continue
		}
		if len(d.FailedProduces) == maxFailedProduces {
			d.FailedOmitted++
			continue
		}
		outcome := "failed"
		if op.Outcome == checkers.Info {
			outcome = "unknown"
		}
		d.FailedProduces = append(d.FailedProduces, htmlProduce{Time: op.Complete.String(), Process: op.Process,
			Partition: op.Topic + "-" + strconv.Itoa(int(op.Partition)), Value: op.Value, Outcome: outcome, Error: op.Error, at: op.Complete})
	}
}
