package reports

// This file holds what the sweep's plots share: a palette of distinct
// colours, tick marks that fit the axis (the grid's own values on a
// numeric axis, integers on an integer one, no negative tick on a
// fraction axis padded below zero), and drawing with the legend outside
// the plot's frame (the trade-off plot's one entry per configuration
// would cover its points).

import (
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// palette is Tableau's 10 colours: distinct for the colour-blind too.
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

// seriesColor and seriesShape give series i a colour, and past the
// palette's length a new shape, so every series differs from every other.
func seriesColor(i int) color.Color { return palette[i%len(palette)] }

func seriesShape(i int) draw.GlyphDrawer { return plotutil.Shape(i / len(palette) % 7) }

// valueTicks puts a tick at each of a grid axis' values, labelled as the
// grid writes them ($clients=2,4,8 gets 2, 4 and 8, never 2.5).
type valueTicks []string

func (v valueTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, s := range v {
		if x := num(s); x >= lo && x <= hi {
			out = append(out, plot.Tick{Value: x, Label: s})
		}
	}
	return out
}

// integerTicks keeps the default ticks that are integers.
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value == math.Trunc(t.Value) {
			if t.Label != "" {
				t.Label = strconv.FormatFloat(t.Value, 'f', 0, 64)
			}
			out = append(out, t)
		}
	}
	return out
}

// nonNegativeTicks drops the ticks below zero of an axis padded below 0.
type nonNegativeTicks struct{}

func (nonNegativeTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value >= 0 {
			out = append(out, t)
		}
	}
	return out
}

// gridTicker returns the ticker of a numeric grid axis.
func gridTicker(values []string) plot.Ticker {
	if len(values) <= 12 {
		return valueTicks(values)
	}
	for _, v := range values {
		if _, err := strconv.Atoi(v); err != nil {
			return plot.DefaultTicks{}
		}
	}
	return integerTicks{}
}

// padBelow lowers an axis' minimum from 0 by 4% of its span, so points at
// 0 sit off the frame, and hides the negative ticks.
func padBelow(a *plot.Axis) {
	if span := a.Max - a.Min; span > 0 {
		a.Min -= 0.04 * span
	}
	a.Tick.Marker = nonNegativeTicks{}
}

// writePlot draws p as format ("png", "svg") into w; with labels, the
// plot's legend goes into a column right of the frame, as wide as its
// longest label.
func writePlot(w io.Writer, p *plot.Plot, labels []string, format string) error {
	width, height, legW := plotSize(p, labels)
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	default:
		c = vgsvg.New(width, height)
	}
	drawPlot(c, width, height, legW, p, labels)
	_, err := c.WriteTo(w)
	return err
}

// plotSize is a plot's picture: plotWidth × plotHeight, widened by the
// legend's column (legW) when it has labels.
func plotSize(p *plot.Plot, labels []string) (width, height, legW vg.Length) {
	width, height = plotWidth, plotHeight
	if len(labels) > 0 {
		for _, l := range labels {
			legW = max(legW, p.Legend.TextStyle.Width(l))
		}
		legW += p.Legend.ThumbnailWidth + vg.Points(24)
		width += legW
	}
	return width, height, legW
}

// drawPlot draws p onto c and returns its data area and its legend's
// column (empty without labels).
func drawPlot(c vg.Canvas, width, height, legW vg.Length, p *plot.Plot, labels []string) (data, legend vg.Rectangle) {
	dc := draw.NewCanvas(c, width, height)
	leg := p.Legend
	if len(labels) > 0 {
		p.Legend = plot.NewLegend()
		defer func() { p.Legend = leg }()
	}
	// NB: a margin left of the y axis' label: gonum sets it on the edge,
	// and its descenders ("p", "g") fell outside the picture.
	frame := draw.Crop(dc, vg.Points(4), -legW, 0, 0)
	p.Draw(frame)
	data = p.DataCanvas(frame).Rectangle
	if len(labels) > 0 {
		leg.Top, leg.Left = true, true
		leg.YOffs = -vg.Points(40) // below the title
		col := draw.Crop(dc, width-legW+vg.Points(8), 0, 0, 0)
		leg.Draw(col)
		legend = col.Rectangle
	}
	return data, legend
}

// decades reports whether a numeric grid axis spans two decades or more
// (1, 10, 100, 1000): on a linear axis its small values would crowd into
// one corner and their ticks print over each other ("110").
func decades(values []string) bool {
	lo, hi := math.Inf(1), 0.0
	for _, v := range values {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return false
		}
		lo, hi = min(lo, f), max(hi, f)
	}
	return len(values) > 1 && hi/lo >= 100
}

// logAxis makes a an axis of the grid's values on a log scale, padded by
// a factor each side, ticked at the values (logTicks).
func logAxis(a *plot.Axis, values []string) {
	lo, hi := math.Inf(1), 0.0
	for _, v := range values {
		lo, hi = min(lo, num(v)), max(hi, num(v))
	}
	pad := math.Pow(hi/lo, 0.04)
	a.Scale = plot.LogScale{}
	a.Min, a.Max = lo/pad, hi*pad
	a.Tick.Marker = logTicks(values)
}

// logTicks ticks a log axis at the grid's values, each at least a twelfth
// of the axis' decades from the last one labelled, so no two labels meet
// however many values the grid has; the values skipped keep an unlabelled
// tick.
type logTicks []string

// minLogGap is the least distance between labelled ticks, as a fraction
// of the axis' span in decades.
const minLogGap = 1.0 / 12

func (v logTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	span := math.Log10(hi) - math.Log10(lo)
	last := math.Inf(-1)
	for _, s := range v {
		x := num(s)
		if x < lo || x > hi || x <= 0 {
			continue
		}
		t := plot.Tick{Value: x}
		if math.Log10(x)-last >= minLogGap*span {
			t.Label = s
			last = math.Log10(x)
		}
		out = append(out, t)
	}
	return out
}
