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
// the decimals the step needs ("10.012s", "250ms").

import (
	"math"
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
	start := 0
	for k := 0; k <= len(gaps); k++ {
		end := len(ts)
		if k < len(gaps) {
			end = gaps[k].at
		}
		segs = append(segs, axisSeg{T0: ts[start], T1: ts[end-1]})
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
		w := minSegWidth + math.Max(avail, 0)*float64(segs[i].T1-segs[i].T0)/total
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

// timeline lays the trace's notable records out on one lane per broker,
// plus a lane for the network, one for the other nodes and one for the
// produces that failed or timed out.
func (d *htmlReport) timeline(r *harness.Result) {
	if r.World == nil || len(r.World.Trace().Records()) == 0 {
		d.NoTrace = true
		return
	}
	recs := r.World.Trace().Records()
	lane := map[string]int{}
	for i := 0; i < r.World.Nodes(); i++ {
		name := r.World.Name(sim.NodeID(i))
		if len(name) > 1 && name[0] == 'b' && strings.Trim(name[1:], "0123456789") == "" {
			lane[name] = len(d.Lanes)
			d.Lanes = append(d.Lanes, name)
		}
	}
	network := len(d.Lanes)
	clients := network + 2
	d.Lanes = append(d.Lanes, "network", "other")
	if len(d.FailedProduces) > 0 {
		d.Lanes = append(d.Lanes, "produce failed")
	}
	const laneH = 34
	for i := range d.Lanes {
		d.LaneY = append(d.LaneY, 52+float64(i)*laneH)
	}
	d.Height = 52 + float64(len(d.Lanes))*laneH
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
	times := make([]sim.Time, len(marks))
	for i, m := range marks {
		times[i] = m.t
	}
	axis := newTimeAxis(times, d.Left, d.Width-20)
	d.Ticks, d.Breaks = axis.ticks()
	for _, m := range marks {
		d.Marks = append(d.Marks, htmlMark{X: axis.x(m.t), Y: d.LaneY[m.lane], Class: m.class, Kind: m.kind, Text: m.text})
	}
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
