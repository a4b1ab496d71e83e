package reports

import (
	"math"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/kafkasim/kafkasim/scenarios/sweep"
)

// drawnText is a string the plot drew, with its box.
type drawnText struct {
	s   string
	box vg.Rectangle
}

// drawRecorded draws p as writePlot would (the same size, the legend
// beside the frame) onto a recorder and returns the text drawn, the
// picture's size and the data area and legend column.
func drawRecorded(p *plot.Plot, labels []string) (texts []drawnText, size vg.Point, data, legend vg.Rectangle) {
	width, height, legW := plotSize(p, labels)
	var rec recorder.Canvas
	data, legend = drawPlot(&rec, width, height, legW, p, labels)
	// NB: a rotated label (the y axis') is drawn through Rotate and
	// Translate: follow the canvas' transform to find where it lands.
	m := affine{1, 0, 0, 1, 0, 0}
	var stack []affine
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.Push:
			stack = append(stack, m)
		case *recorder.Pop:
			m, stack = stack[len(stack)-1], stack[:len(stack)-1]
		case *recorder.Translate:
			m = m.then(affine{1, 0, 0, 1, float64(a.Point.X), float64(a.Point.Y)})
		case *recorder.Rotate:
			c, s := math.Cos(a.Angle), math.Sin(a.Angle)
			m = m.then(affine{c, s, -s, c, 0, 0})
		case *recorder.Scale:
			m = m.then(affine{a.X, 0, 0, a.Y, 0, 0})
		case *recorder.FillString:
			face := font.DefaultCache.Lookup(a.Font, a.Size)
			ext := face.Extents()
			x0, y0 := float64(a.Point.X), float64(a.Point.Y-ext.Descent)
			x1, y1 := float64(a.Point.X+face.Width(a.String)), float64(a.Point.Y+ext.Ascent)
			box := vg.Rectangle{Min: vg.Point{X: vg.Length(math.Inf(1)), Y: vg.Length(math.Inf(1))}, Max: vg.Point{X: vg.Length(math.Inf(-1)), Y: vg.Length(math.Inf(-1))}}
			for _, c := range [][2]float64{{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}} {
				x, y := m.apply(c[0], c[1])
				box.Min.X, box.Min.Y = min(box.Min.X, vg.Length(x)), min(box.Min.Y, vg.Length(y))
				box.Max.X, box.Max.Y = max(box.Max.X, vg.Length(x)), max(box.Max.Y, vg.Length(y))
			}
			texts = append(texts, drawnText{a.String, box})
		}
	}
	return texts, vg.Point{X: width, Y: height}, data, legend
}

// affine is a 2-D transform: x' = a x + c y + e, y' = b x + d y + f.
type affine struct{ a, b, c, d, e, f float64 }

// then is m followed, in the canvas' local frame, by n (m · n).
func (m affine) then(n affine) affine {
	return affine{m.a*n.a + m.c*n.b, m.b*n.a + m.d*n.b, m.a*n.c + m.c*n.d, m.b*n.c + m.d*n.d, m.a*n.e + m.c*n.f + m.e, m.b*n.e + m.d*n.f + m.f}
}

func (m affine) apply(x, y float64) (float64, float64) {
	return m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f
}

// xTickOverlaps returns the pairs of the grid's x tick labels (drawn
// below the data area) whose boxes touch.
func xTickOverlaps(texts []drawnText, data vg.Rectangle, values []string) [][2]string {
	var ticks []drawnText
	for _, t := range texts {
		if t.box.Max.Y <= data.Min.Y && indexOf(values, t.s) >= 0 {
			ticks = append(ticks, t)
		}
	}
	var out [][2]string
	for i := range ticks {
		for j := 0; j < i; j++ {
			if overlaps(ticks[i].box, ticks[j].box) {
				out = append(out, [2]string{ticks[j].s, ticks[i].s})
			}
		}
	}
	return out
}

// TestPlotsReadAtAGlance: on every sweep plot no text leaves the picture
// (no clipped title, label or legend), every legend entry sits outside
// the data area, a grid spanning decades (1, 10, 100, 1000) is a log
// axis whose tick labels never touch (a linear one prints 1 and 10 over
// each other, "110": checked below, so the check can fail), and the
// trade-off plot labels each point beside it, no two labels touching.
func TestPlotsReadAtAGlance(t *testing.T) {
	flush := []string{"1", "10", "100", "1000"}
	specs := []*sweep.Spec{
		{Scenario: "power-outage", Variant: "page-cache", Seeds: 3, Grid: []sweep.Axis{{Key: "log.flush.interval.messages", Values: flush}, {Key: "acks", Values: []string{"1", "all"}}}},
		{Scenario: "swarm", Variant: "kip279-safe", Seeds: 3, Grid: []sweep.Axis{{Key: "acks", Values: []string{"1", "all"}}, {Key: "truncation", Values: []string{"hw", "kip101", "kip279"}}}},
	}
	for _, sw := range specs {
		rows := sweep.Aggregate(sw, fakeRecords(sw))
		for _, draw := range []func(*sweep.Spec, []sweep.Row) (*plot.Plot, PlotInfo, error){LossPlot, RunLossPlot, TradeoffPlot} {
			p, info, err := draw(sw, rows)
			if err != nil {
				t.Fatal(err)
			}
			name := sw.Scenario + " " + info.Name
			texts, size, data, legend := drawRecorded(p, info.labels)
			frame := vg.Rectangle{Max: size}
			for _, tx := range texts {
				if !inside(tx.box, frame) {
					t.Errorf("%s: %q is clipped: %v outside %v", name, tx.s, tx.box, frame)
				}
				if indexOf(info.labels, tx.s) >= 0 && (tx.box.Min.X < data.Max.X || !inside(tx.box, legend)) {
					t.Errorf("%s: the legend entry %q at %v is not in the column right of the data %v", name, tx.s, tx.box, data)
				}
			}
			if sw.Grid[0].Key == "log.flush.interval.messages" && info.Kind == "lines" {
				if _, ok := p.X.Scale.(plot.LogScale); !ok {
					t.Errorf("%s: a grid over three decades on a linear axis", name)
				}
				if o := xTickOverlaps(texts, data, flush); len(o) > 0 {
					t.Errorf("%s: tick labels touch: %v", name, o)
				}
				// The same axis linear: the check sees 1 and 10 collide.
				p.X.Scale, p.X.Min, p.X.Max, p.X.Tick.Marker = plot.LinearScale{}, 0, 1000, valueTicks(flush)
				lin, _, ldata, _ := drawRecorded(p, info.labels)
				if len(xTickOverlaps(lin, ldata, flush)) == 0 {
					t.Errorf("%s: on a linear axis 1 and 10 should touch; the overlap check sees nothing", name)
				}
			}
			if info.Kind == "scatter" {
				if info.pointLabels == nil || len(info.pointLabels.placed) != len(rows) {
					t.Fatalf("%s: %d rows, labels %+v", name, len(rows), info.pointLabels)
				}
				drawn := 0
				for _, tx := range texts {
					if indexOf(info.pointLabels.labels, tx.s) >= 0 {
						drawn++
					}
				}
				if drawn != len(rows) {
					t.Errorf("%s: %d point labels drawn, want %d", name, drawn, len(rows))
				}
				pl := info.pointLabels.placed
				for i := range pl {
					if !inside(pl[i], data) {
						t.Errorf("%s: label %q outside the data area", name, info.pointLabels.labels[i])
					}
					for j := 0; j < i; j++ {
						if overlaps(pl[i], pl[j]) {
							t.Errorf("%s: labels %q and %q touch", name, info.pointLabels.labels[j], info.pointLabels.labels[i])
						}
					}
				}
			}
		}
	}
}
