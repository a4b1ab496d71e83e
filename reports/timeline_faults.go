package reports

// This file draws the run timeline's faults as bands (crash, power loss,
// pause, clean shutdown on the lanes of the broker they hit; a network
// partition or cut across every lane until the heal), the KRaft quorum's
// leader and epoch as a lane of its own, the legend, and the page's zoom.

import (
	"fmt"
	"html/template"
	"io"
	"strconv"

	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
)

// faultBand is one fault from when it struck until it ended (the node's
// next start, a pause's end, the heal), or the run's end.
type faultBand struct {
	kind   string // crash, power-loss, halt, shutdown, pause, partition, cut
	node   string // "world" for the network
	t0, t1 sim.Time
	what   string
}

// faultColors are the bands' colours and opacities, by kind.
var faultColors = map[string]struct {
	fill    string
	opacity float64
}{"crash": {"#cf222e", 0.14}, "power-loss": {"#a40e26", 0.22}, "halt": {"#cf222e", 0.14}, "shutdown": {"#6e7781", 0.15},
	"pause": {"#d4a72c", 0.25}, "partition": {"#0969da", 0.08}, "cut": {"#0969da", 0.08}}

// faultBands reads the faults from the trace, in the order they struck.
func faultBands(recs []sim.Record) []faultBand {
	var out []faultBand
	open := map[string]int{} // node -> its open band
	var network []int
	var last sim.Time
	for _, rec := range recs {
		last = rec.Time
		switch rec.Kind {
		case "crash", "halt", "shutdown":
			kind := rec.Kind
			if v, _ := rec.Get("lose-unsynced"); kind == "crash" && v == "true" {
				kind = "power-loss"
			}
			if _, ok := open[rec.Name]; ok {
				continue // already down
			}
			open[rec.Name] = len(out)
			out = append(out, faultBand{kind: kind, node: rec.Name, t0: rec.Time, t1: -1})
		case "start":
			if i, ok := open[rec.Name]; ok {
				out[i].t1 = rec.Time
				delete(open, rec.Name)
			}
		case "pause":
			until, _ := rec.Get("until")
			t1, err := strconv.ParseInt(until, 10, 64)
			if err != nil {
				t1 = -1
			}
			out = append(out, faultBand{kind: "pause", node: rec.Name, t0: rec.Time, t1: sim.Time(t1)})
		case "partition", "cut":
			if rec.Name != "world" {
				continue
			}
			var what string
			for _, f := range rec.Fields {
				what += " " + f.String()
			}
			network = append(network, len(out))
			out = append(out, faultBand{kind: rec.Kind, node: "world", t0: rec.Time, t1: -1, what: what})
		case "heal":
			if rec.Name == "world" {
				for _, i := range network {
					out[i].t1 = rec.Time
				}
				network = nil
			}
		}
	}
	for i := range out {
		if out[i].t1 < 0 {
			out[i].t1 = last
		}
	}
	return out
}

// drawFaults returns the bands: a broker's over its lanes, the network's
// from top to bottom.
func drawFaults(axis timeAxis, faults []faultBand, brokerLanes map[int32][][2]float64, top, bottom float64) []shape {
	var out []shape
	for _, f := range faults {
		c := faultColors[f.kind]
		x0, x1 := axis.x(f.t0), axis.x(f.t1)
		w := max(x1-x0, 2)
		title := f.kind + " " + f.node + f.what + " " + f.t0.String() + "–" + f.t1.String()
		if f.node == "world" {
			out = append(out, shape{Kind: shapeRect, X: x0, Y: top, W: w, H: bottom - top, Fill: c.fill, Opacity: c.opacity, Class: "fault " + f.kind, Title: title})
			out = append(out, shape{Kind: shapeText, X: x0 + 2, Y: top + 10, Text: f.kind, Fill: "#0969da"})
			continue
		}
		if !isBrokerName(f.node) {
			continue // a controller's or a client's: a mark in the "other" lane
		}
		id, _ := strconv.Atoi(f.node[1:])
		for i, l := range brokerLanes[int32(id)] {
			out = append(out, shape{Kind: shapeRect, X: x0, Y: l[0], W: w, H: l[1] - l[0], Fill: c.fill, Opacity: c.opacity, Class: "fault " + f.kind, Title: title})
			if i == 0 && w > 50 {
				out = append(out, shape{Kind: shapeText, X: x0 + 2, Y: l[1] - 6, Text: f.kind, Fill: "#a40e26"})
			}
		}
	}
	return out
}

// quorumSpan is a KRaft quorum leader's term.
type quorumSpan struct {
	node   string
	epoch  string
	t0, t1 sim.Time
}

// quorumSpans reads the KRaft quorum's leaders from the raft clients'
// raft-leader records: each leads until the next leader, its resignation
// or its crash.
func quorumSpans(recs []sim.Record) []quorumSpan {
	var out []quorumSpan
	end := func(t sim.Time) {
		if n := len(out); n > 0 && out[n-1].t1 < 0 {
			out[n-1].t1 = t
		}
	}
	var last sim.Time
	for _, rec := range recs {
		last = rec.Time
		switch rec.Kind {
		case "raft-leader":
			end(rec.Time)
			epoch, _ := rec.Get("epoch")
			out = append(out, quorumSpan{node: rec.Name, epoch: epoch, t0: rec.Time, t1: -1})
		case "raft-resign", "crash", "halt", "shutdown":
			if n := len(out); n > 0 && out[n-1].node == rec.Name {
				end(rec.Time)
			}
		}
	}
	end(last)
	return out
}

// drawQuorum draws the quorum's lane from y and returns the y below it.
func drawQuorum(dr *drawing, axis timeAxis, spans []quorumSpan, y float64, end sim.Time) float64 {
	const h = 30.0
	dr.add(shape{Kind: shapeText, X: 4, Y: y + h/2 + 4, Text: "KRaft leader"})
	for i, s := range spans {
		x0, x1 := axis.x(s.t0), axis.x(s.t1)
		fill := "#fff8c5"
		if i%2 == 1 {
			fill = "#ffe58f"
		}
		text := s.node + " e" + s.epoch
		dr.add(shape{Kind: shapeRect, X: x0, Y: y + 4, W: max(x1-x0, 2), H: h - 8, Fill: fill, Stroke: "#bf8700", Class: "quorum",
			Title: "quorum leader " + text + " " + s.t0.String() + "–" + s.t1.String()})
		if x1-x0 > 48 {
			dr.add(shape{Kind: shapeText, X: x0 + 3, Y: y + h/2 + 4, Text: text})
		}
	}
	return y + h
}

// legend draws the key below y and returns the picture's height.
func legend(dr *drawing, y float64) float64 {
	x := timelineLeft
	item := func(s shape, text string) {
		if w := 22 + 7*float64(len(text)); x+w > timelineWidth {
			x, y = timelineLeft, y+18 // the next row
		}
		s.X += x
		s.Y += y
		s.X2 += x
		s.Y2 += y
		for i := range s.Pts {
			if i%2 == 0 {
				s.Pts[i] += x
			} else {
				s.Pts[i] += y
			}
		}
		dr.add(s)
		dr.add(shape{Kind: shapeText, X: x + 22, Y: y + 10, Text: text})
		x += 22 + 7*float64(len(text)) + 14
	}
	dr.add(shape{Kind: shapeText, X: 4, Y: y + 10, Text: "key"})
	item(shape{Kind: shapeLine, X: 0, Y: 6, X2: 18, Y2: 6, Stroke: "#24292f", StrokeW: 1.5}, "LEO")
	item(shape{Kind: shapeLine, X: 0, Y: 6, X2: 18, Y2: 6, Stroke: "#1a7f37", StrokeW: 1.5, Dash: true}, "HW")
	item(shape{Kind: shapeRect, X: 0, Y: 0, W: 18, H: 12, Fill: "#ddf4ff"}, "leader")
	item(shape{Kind: shapeRect, X: 0, Y: 8, W: 18, H: 3, Fill: "#8250df"}, "in ISR")
	item(shape{Kind: shapeRect, X: 0, Y: 0, W: 18, H: 12, Fill: "#d0d7de", Opacity: 0.6}, "down")
	item(shape{Kind: shapeRect, X: 0, Y: 0, W: 18, H: 12, Fill: "#a40e26", Opacity: 0.22}, "crash/power loss")
	item(shape{Kind: shapeRect, X: 0, Y: 0, W: 18, H: 12, Fill: "#d4a72c", Opacity: 0.25}, "pause")
	item(shape{Kind: shapeRect, X: 0, Y: 0, W: 18, H: 12, Fill: "#0969da", Opacity: 0.08}, "partition")
	item(shape{Kind: shapeRect, X: 7, Y: 4, W: 4, H: 4, Fill: "#cf222e"}, "acked, later lost")
	item(shape{Kind: shapeRect, X: 7, Y: 0, W: 5, H: 12, Fill: "#cf222e"}, "truncated away")
	item(shape{Kind: shapeRect, X: 0, Y: 0, W: 18, H: 12, Fill: "#cf222e", Opacity: 0.25}, "lost records not listed one by one")
	return y + 22
}

// zoomScript zooms the timeline in the page: the buttons and the wheel
// scale the SVG's viewBox about a point, a drag moves it. It touches
// nothing outside the page.
const zoomScript = template.JS(`(function () {
  var svg = document.getElementById("timeline");
  if (!svg) { return; }
  var W = svg.viewBox.baseVal.width, H = svg.viewBox.baseVal.height;
  var v = {x: 0, y: 0, w: W, h: H};
  function set() { svg.setAttribute("viewBox", v.x + " " + v.y + " " + v.w + " " + v.h); }
  function zoom(f, cx, cy) {
    var w = Math.min(W, Math.max(W / 64, v.w * f)), h = w * H / W;
    v.x = Math.min(Math.max(0, cx - (cx - v.x) * w / v.w), W - w);
    v.y = Math.min(Math.max(0, cy - (cy - v.y) * h / v.h), H - h);
    v.w = w; v.h = h; set();
  }
  document.querySelectorAll("button[data-zoom]").forEach(function (b) {
    b.addEventListener("click", function () {
      var z = b.getAttribute("data-zoom");
      if (z === "reset") { v = {x: 0, y: 0, w: W, h: H}; set(); return; }
      zoom(z === "in" ? 0.5 : 2, v.x + v.w / 2, v.y + v.h / 2);
    });
  });
  function at(e) { var r = svg.getBoundingClientRect(); return {x: v.x + (e.clientX - r.left) / r.width * v.w, y: v.y + (e.clientY - r.top) / r.height * v.h}; }
  svg.addEventListener("wheel", function (e) { e.preventDefault(); var p = at(e); zoom(e.deltaY < 0 ? 0.8 : 1.25, p.x, p.y); }, {passive: false});
  var drag = null;
  svg.addEventListener("mousedown", function (e) { drag = {x: e.clientX, y: e.clientY, vx: v.x, vy: v.y}; });
  window.addEventListener("mouseup", function () { drag = null; });
  svg.addEventListener("mousemove", function (e) {
    if (!drag) { return; }
    var r = svg.getBoundingClientRect();
    v.x = Math.min(Math.max(0, drag.vx - (e.clientX - drag.x) / r.width * v.w), W - v.w);
    v.y = Math.min(Math.max(0, drag.vy - (e.clientY - drag.y) / r.height * v.h), H - v.h);
    set();
  });
})();`)

// WriteTimeline writes r's timeline, the picture of the HTML report, as
// format "svg" or "png". The run must have kept its trace (replay, or
// scenarios.Options{Timeline: true}).
func WriteTimeline(w io.Writer, r *harness.Result, format string) error {
	var d htmlReport
	d.failedProduces(r.History)
	d.timeline(r)
	if d.timelineDrawing == nil {
		return fmt.Errorf("the run kept no trace: no timeline to draw")
	}
	switch format {
	case "svg":
		return d.timelineDrawing.svg(w, "")
	case "png":
		return d.timelineDrawing.png(w)
	}
	return fmt.Errorf("timeline format %q: want svg or png", format)
}
