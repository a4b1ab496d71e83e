package reports

// This file draws a sweep's plots with gonum/plot, each as PNG and SVG:
//
//   - loss.png: the acknowledged-record loss rate, pooled over the seeds,
//     against the first numeric axis of the grid (for example $crash), with
//     its 95% percentile bootstrap interval over seeds as error bars, one
//     line per combination of the other axes; when no axis is numeric, a
//     grouped bar chart: the first axis' values as groups, one bar per
//     combination of the others.
//   - p_run_loss.png: the same layout for the probability that a run loses
//     an acknowledged record, with its 95% Wilson interval over runs.
//   - tradeoff.png: durability against availability, the pooled loss rate
//     against the pooled unavailability, one point per configuration, each
//     in its own colour and shape and labelled beside it (plot_labels.go
//     moves a label off any it would touch), with the bootstrap intervals
//     of both as error bars.
//
// Every legend sits in a column right of the frame, never over the data.
// A numeric axis whose grid spans two decades or more (1, 10, 100, 1000)
// is drawn on a log scale, its labelled ticks far enough apart never to
// touch (logTicks).
//
// A numeric grid axis is ticked at the grid's values (an integer axis
// never shows 2.5); every axis is padded so no point sits on the frame.
//
// The intervals are over seeds, not records (scenarios/sweep_stats.go says
// why). A title says what is plotted and which interval, then the scenario
// and the seeds; it names the sweep's variant only when the grid does not
// sweep variant (a swept variant is in the legend, not the title).
//
// The plots are functions of the rows only, so a merged sweep draws the
// same bytes as an unsharded one.

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kafkasim/kafkasim/scenarios/sweep"
)

// PlotInfo describes one plot written.
type PlotInfo struct {
	// Name is the file name without extension ("loss", "tradeoff").
	Name string
	// Kind is "lines", "bars" or "scatter".
	Kind string
	// Series is the number of lines or bar series (for a scatter, the
	// number of points).
	Series int
	// pointLabels are the trade-off plot's labels beside its points.
	pointLabels *pointLabels
	// labels, when set, are the legend's entries, drawn right of the
	// frame.
	labels []string
}

const plotWidth, plotHeight = 8 * vg.Inch, 5 * vg.Inch

// AxisLabel names a grid key with its unit for an axis or a legend.
func AxisLabel(key string) string {
	k := strings.TrimPrefix(key, "$")
	switch {
	case k == "crash" || k == "power-loss" || k == "pause" || k == "partition" || k == "heal":
		return key + " (probability per fault draw)"
	case k == "fault-every" || k == "interval":
		return key + " (virtual time)"
	case strings.HasSuffix(key, ".ms"):
		return key + " (ms)"
	case strings.HasSuffix(key, ".bytes"):
		return key + " (bytes)"
	}
	return key
}

// numericAxis returns the index of the first grid axis with at least two
// values, all numbers, or -1.
func numericAxis(sw *sweep.Spec) int {
	for i, a := range sw.Grid {
		if a.Key == "variant" || len(a.Values) < 2 {
			continue
		}
		ok := true
		for _, v := range a.Values {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				ok = false
			}
		}
		if ok {
			return i
		}
	}
	return -1
}

// groupRows splits rows by the values of every axis but axis, in first
// appearance order (the grid's order), with each group's label.
func groupRows(sw *sweep.Spec, rows []sweep.Row, axis int) ([]string, [][]sweep.Row) {
	var labels []string
	var groups [][]sweep.Row
	index := map[string]int{}
	for _, r := range rows {
		var parts []string
		for i, a := range sw.Grid {
			if i != axis {
				parts = append(parts, a.Key+"="+r.Values[i])
			}
		}
		label := strings.Join(parts, " ")
		if label == "" {
			label = "all"
		}
		g, ok := index[label]
		if !ok {
			g = len(labels)
			index[label] = g
			labels = append(labels, label)
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], r)
	}
	return labels, groups
}

type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// title says what is plotted, then, on a second line, the scenario (and
// its variant when the grid does not sweep variant) and the seeds.
func title(sw *sweep.Spec, what string) string {
	where := sw.Scenario
	swept := false
	for _, a := range sw.Grid {
		swept = swept || a.Key == "variant"
	}
	if sw.Variant != "" && !swept {
		where += ", variant " + sw.Variant
	}
	return wrapTitle(fmt.Sprintf("%s\nscenario %s, %d seeds per configuration", what, where, sw.Seeds), titleWidth)
}

// metric is one quantity of a row that a plot draws, with its interval.
type metric struct {
	// name is the file name without extension.
	name string
	// quantity and interval name what is plotted, for the title.
	quantity, interval string
	label              string
	// value returns the point and its interval; ok is false when the row
	// has nothing to draw.
	value func(r sweep.Row) (v, lo, hi float64, ok bool)
}

var lossMetric = metric{
	name:     "loss",
	quantity: "acknowledged-record loss rate (pooled)",
	interval: "95% percentile bootstrap interval over seeds",
	label:    "acknowledged records lost (fraction, pooled over seeds)",
	value: func(r sweep.Row) (float64, float64, float64, bool) {
		return r.LossRate, r.LossLow, r.LossHigh, r.Acked > 0 // nothing acknowledged: no loss rate
	},
}

var runLossMetric = metric{
	name:     "p_run_loss",
	quantity: "probability that a run loses an acknowledged record",
	interval: "95% Wilson interval over runs",
	label:    "runs that lost an acknowledged record (fraction)",
	value: func(r sweep.Row) (float64, float64, float64, bool) {
		return r.PRunLoss, r.PRunLossLow, r.PRunLossHigh, r.Runs > 0
	},
}

// LossPlot draws the pooled loss rate against the grid's first numeric
// axis, one line per combination of the other axes, or a grouped bar
// chart when no axis is numeric.
func LossPlot(sw *sweep.Spec, rows []sweep.Row) (*plot.Plot, PlotInfo, error) {
	return metricPlot(lossMetric, sw, rows)
}

// RunLossPlot draws the probability that a run loses an acknowledged
// record, laid out as LossPlot.
func RunLossPlot(sw *sweep.Spec, rows []sweep.Row) (*plot.Plot, PlotInfo, error) {
	return metricPlot(runLossMetric, sw, rows)
}

func metricPlot(m metric, sw *sweep.Spec, rows []sweep.Row) (*plot.Plot, PlotInfo, error) {
	p := plot.New()
	p.Y.Label.Text = m.label
	p.Y.Min = 0
	p.Legend.Top = true
	axis := numericAxis(sw)
	if axis < 0 {
		return metricBars(p, m, sw, rows)
	}
	key := sw.Grid[axis].Key
	p.Title.Text = title(sw, m.quantity+" against "+key+", "+m.interval)
	p.X.Label.Text = AxisLabel(key)
	labels, groups := groupRows(sw, rows, axis)
	series := 0
	var shown []string // the legend's entries
	for g, grp := range groups {
		var pts errPoints
		sort.SliceStable(grp, func(i, j int) bool { return num(grp[i].Values[axis]) < num(grp[j].Values[axis]) })
		for _, r := range grp {
			v, lo, hi, ok := m.value(r)
			if !ok {
				continue
			}
			pts.XYs = append(pts.XYs, plotter.XY{X: num(r.Values[axis]), Y: v})
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{v - lo, hi - v})
		}
		if len(pts.XYs) == 0 {
			continue
		}
		line, scatter, err := plotter.NewLinePoints(pts.XYs)
		if err != nil {
			return nil, PlotInfo{}, err
		}
		line.Color, scatter.Color = seriesColor(g), seriesColor(g)
		line.Dashes = plotutil.Dashes(g)
		scatter.Shape = plotutil.Shape(g)
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, PlotInfo{}, err
		}
		bars.Color = seriesColor(g)
		p.Add(line, scatter, bars)
		p.Legend.Add(labels[g], line, scatter)
		shown = append(shown, labels[g])
		series++
	}
	pad(p, true)
	padBelow(&p.Y)
	p.X.Tick.Marker = gridTicker(sw.Grid[axis].Values)
	if decades(sw.Grid[axis].Values) {
		logAxis(&p.X, sw.Grid[axis].Values)
		p.X.Label.Text += " (log scale)"
	}
	return p, PlotInfo{Name: m.name, Kind: "lines", Series: series, labels: shown}, nil
}

// pad widens the axes around the data (drawn once every plotter is
// added): 4% on each side of x, when x is numeric, so no error bar sits on
// the frame, and 15% above y, room for the legend.
func pad(p *plot.Plot, x bool) {
	if span := p.X.Max - p.X.Min; x && span > 0 {
		p.X.Min, p.X.Max = p.X.Min-0.04*span, p.X.Max+0.04*span
	}
	if span := p.Y.Max - p.Y.Min; span > 0 {
		p.Y.Max += 0.15 * span
	}
}

// titleWidth is the longest title line, in characters, that fits the
// frame of a plotWidth plot at the title's size.
const titleWidth = 86

// wrapTitle breaks each line longer than width after its last ", " that
// keeps it within width (a title wider than the frame is clipped).
func wrapTitle(s string, width int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for len(line) > width {
			i := strings.LastIndex(line[:width], ", ")
			if i < 0 {
				break
			}
			out = append(out, line[:i+1])
			line = line[i+2:]
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

func num(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// metricBars draws the grouped bar chart: the first axis' values as
// groups, one bar series per combination of the other axes.
func metricBars(p *plot.Plot, m metric, sw *sweep.Spec, rows []sweep.Row) (*plot.Plot, PlotInfo, error) {
	first := sw.Grid[0]
	p.Title.Text = title(sw, m.quantity+" by "+first.Key+", "+m.interval)
	p.X.Label.Text = AxisLabel(first.Key)
	labels, series := groupRows(sw, rows, 0)
	n := len(series)
	step := 0.8 / float64(n)
	width := vg.Points(math.Max(2, 0.9*step*430/float64(len(first.Values))))
	for s, grp := range series {
		vals := make(plotter.Values, len(first.Values))
		var pts errPoints
		for _, r := range grp {
			g := indexOf(first.Values, r.Values[0])
			v, lo, hi, ok := m.value(r)
			vals[g] = v
			if ok {
				x := float64(g) + (float64(s)-float64(n-1)/2)*step
				pts.XYs = append(pts.XYs, plotter.XY{X: x, Y: v})
				pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{v - lo, hi - v})
			}
		}
		bc, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, PlotInfo{}, err
		}
		bc.Color = seriesColor(s)
		bc.LineStyle.Width = 0
		bc.XMin = (float64(s) - float64(n-1)/2) * step
		p.Add(bc)
		if len(pts.XYs) > 0 {
			eb, err := plotter.NewYErrorBars(pts)
			if err != nil {
				return nil, PlotInfo{}, err
			}
			p.Add(eb)
		}
		p.Legend.Add(labels[s], bc)
	}
	p.NominalX(first.Values...)
	pad(p, false)
	return p, PlotInfo{Name: m.name, Kind: "bars", Series: n, labels: labels}, nil
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// TradeoffPlot draws the pooled loss rate against the pooled
// unavailability, one labelled point per configuration, with the bootstrap
// intervals over seeds of both as error bars.
func TradeoffPlot(sw *sweep.Spec, rows []sweep.Row) (*plot.Plot, PlotInfo, error) {
	p := plot.New()
	p.Title.Text = title(sw, "durability against availability: loss rate (pooled) against unavailability (pooled),\n"+
		"95% percentile bootstrap intervals over seeds on both axes")
	p.X.Label.Text = "unavailability (fraction of produce attempts refused or timed out, pooled over seeds)"
	p.Y.Label.Text = lossMetric.label
	p.X.Min, p.Y.Min = 0, 0
	info := PlotInfo{Name: "tradeoff", Kind: "scatter"}
	names := &pointLabels{} // each point's configuration beside it
	for _, r := range rows {
		if r.Attempts == 0 {
			continue
		}
		var pts struct {
			plotter.XYs
			plotter.XErrors
			plotter.YErrors
		}
		pts.XYs = plotter.XYs{{X: r.Unavailability, Y: r.LossRate}}
		pts.XErrors = plotter.XErrors{{Low: r.Unavailability - r.UnavailLow, High: r.UnavailHigh - r.Unavailability}}
		pts.YErrors = plotter.YErrors{{Low: r.LossRate - r.LossLow, High: r.LossHigh - r.LossRate}}
		// Each configuration its own colour and shape (both cycle, at
		// different lengths), so points on the same spot stay apart.
		i := info.Series
		sc, err := plotter.NewScatter(pts.XYs)
		if err != nil {
			return nil, info, err
		}
		sc.Color, sc.Shape, sc.Radius = seriesColor(i), plotutil.Shape(i%7), vg.Points(4)
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, info, err
		}
		xb, err := plotter.NewXErrorBars(pts)
		if err != nil {
			return nil, info, err
		}
		eb.Color, xb.Color = seriesColor(i), seriesColor(i)
		p.Add(eb, xb, sc)
		names.pts = append(names.pts, pts.XYs[0])
		names.labels = append(names.labels, strings.Join(r.Config, " "))
		names.colors = append(names.colors, seriesColor(i))
		info.Series++
	}
	if info.Series == 0 {
		return p, info, nil
	}
	p.Add(names)
	info.pointLabels = names
	pad(p, false)
	padBelow(&p.X)
	padBelow(&p.Y)
	return p, info, nil
}

// WriteSweepPlots writes the loss, run-loss and trade-off plots into dir as PNG and
// SVG (each file atomically) and says what each holds.
func WriteSweepPlots(dir string, sw *sweep.Spec, rows []sweep.Row) ([]PlotInfo, error) {
	var infos []PlotInfo
	for _, draw := range []func(*sweep.Spec, []sweep.Row) (*plot.Plot, PlotInfo, error){LossPlot, RunLossPlot, TradeoffPlot} {
		p, info, err := draw(sw, rows)
		if err != nil {
			return nil, err
		}
		for _, format := range []string{"png", "svg"} {
			path := filepath.Join(dir, info.Name+"."+format)
			if err := WriteFileAtomic(path, func(w io.Writer) error { return writePlot(w, p, info.labels, format) }); err != nil {
				return nil, err
			}
		}
		infos = append(infos, info)
	}
	return infos, nil
}
