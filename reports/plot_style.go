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
	width, height := plotWidth, plotHeight
	var leg plot.Legend
	var legW vg.Length
	if len(labels) > 0 {
		leg = p.Legend
		p.Legend = plot.NewLegend()
		defer func() { p.Legend = leg }()
		for _, l := range labels {
			legW = max(legW, leg.TextStyle.Width(l))
		}
		legW += leg.ThumbnailWidth + vg.Points(24)
		width += legW
	}
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	default:
		c = vgsvg.New(width, height)
	}
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -legW, 0, 0))
	if len(labels) > 0 {
		leg.Top, leg.Left = true, true
		leg.YOffs = -vg.Points(40) // below the title
		leg.Draw(draw.Crop(dc, width-legW+vg.Points(8), 0, 0, 0))
	}
	_, err := c.WriteTo(w)
	return err
}
