package reports

// This file draws a matrix's heat map (matrix.png, matrix.svg) with
// gonum/plot: releases across, scenarios down (each labelled with what it
// ran: matrix.Row.RanAs, wrapped), each cell coloured by what its runs
// mean (cellMeaning: contract broken red, permitted loss amber, offline by
// design blue, unknown grey-violet, ok green), its p_run_loss as the
// intensity within that colour, and labelled with its text
// (MatrixCellText: "2/5 D1 L1"); a cell where runs diverged gets a thick
// purple border, one with a liveness failure a dashed black one; a cell
// that cannot run on its release is grey and says n/a. A key under the
// map explains the colours, the letters and the borders, so the picture
// reads without matrix.md.

import (
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/kafkasim/kafkasim/scenarios/matrix"
)

var (
	naColour       = color.RGBA{215, 215, 215, 255}
	divergedColour = color.RGBA{148, 103, 189, 255} // the palette's purple
	livenessColour = color.RGBA{0, 0, 0, 255}
)

// meaning is what a cell's runs mean, in order of precedence.
type meaning struct {
	name      string
	pale, hue color.RGBA // the colour at loss 0 and at loss 1
}

// The meanings of a cell: a run that broke Kafka's contract outweighs one
// a checker could not judge, which outweighs a loss the contract permits,
// a partition offline by design (KIP-966's ELR waiting) and ok.
var (
	meaningBroken    = meaning{"contract broken (B)", color.RGBA{250, 200, 200, 255}, color.RGBA{180, 20, 30, 255}}
	meaningUnknown   = meaning{"unknown or not carried out (?, F)", color.RGBA{225, 220, 235, 255}, color.RGBA{120, 110, 140, 255}}
	meaningPermitted = meaning{"loss permitted by the contract", color.RGBA{255, 236, 179, 255}, color.RGBA{230, 120, 0, 255}}
	meaningOffline   = meaning{"offline by design (O)", color.RGBA{200, 225, 250, 255}, color.RGBA{30, 100, 200, 255}}
	meaningOK        = meaning{"ok", color.RGBA{198, 239, 206, 255}, color.RGBA{198, 239, 206, 255}}
	meanings         = []meaning{meaningBroken, meaningUnknown, meaningPermitted, meaningOffline, meaningOK}
)

// cellMeaning is what a ran cell's runs mean.
func cellMeaning(r matrix.Row) meaning {
	switch {
	case r.RunsBug > 0:
		return meaningBroken
	case r.RunsUnknown > 0 || r.RunsFailed > 0:
		return meaningUnknown
	case r.RunsWithLoss > 0 || r.RunsPermitted > 0 || r.RunsCommittedLost > 0 || r.RunsSkipped > 0:
		return meaningPermitted
	case r.RunsOffline > 0:
		return meaningOffline
	}
	return meaningOK
}

// cellColour is the cell's meaning with its loss fraction as intensity:
// a quarter of the way from pale to full at no loss, full at loss 1, so
// a contract break without loss is still plainly red.
func cellColour(r matrix.Row) color.RGBA {
	m := cellMeaning(r)
	p := 0.25 + 0.75*r.PRunLoss
	if m == meaningOK {
		p = 0
	}
	mix := func(a, b uint8) uint8 { return uint8(float64(a) + p*(float64(b)-float64(a)) + 0.5) }
	return color.RGBA{mix(m.pale.R, m.hue.R), mix(m.pale.G, m.hue.G), mix(m.pale.B, m.hue.B), 255}
}

// dark reports whether white text reads better on c than black.
func dark(c color.RGBA) bool {
	return 0.299*float64(c.R)+0.587*float64(c.G)+0.114*float64(c.B) < 140
}

// heatMap is the plotter: cell (i, j) is version i, scenario j (the first
// scenario on top).
type heatMap struct {
	scen, vers []string
	at         map[[2]string]matrix.Row
}

func (h heatMap) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	sty := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(9)), XAlign: draw.XCenter, YAlign: draw.YCenter,
		Handler: plot.DefaultTextHandler}
	n := len(h.scen)
	for j, s := range h.scen {
		for i, v := range h.vers {
			r := h.at[[2]string{s, v}]
			y := float64(n - 1 - j)
			x0, x1, y0, y1 := tx(float64(i)-0.5), tx(float64(i)+0.5), ty(y-0.5), ty(y+0.5)
			cell := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			fc := naColour
			if r.Status == matrix.StatusRan {
				fc = cellColour(r)
			}
			c.FillPolygon(fc, cell)
			c.StrokeLines(draw.LineStyle{Color: color.White, Width: vg.Points(1)}, append(cell, cell[0]))
			inset := vg.Points(2.5)
			in := []vg.Point{{X: x0 + inset, Y: y0 + inset}, {X: x1 - inset, Y: y0 + inset}, {X: x1 - inset, Y: y1 - inset}, {X: x0 + inset, Y: y1 - inset}}
			in = append(in, in[0])
			if r.RunsDiverged > 0 {
				c.StrokeLines(draw.LineStyle{Color: divergedColour, Width: vg.Points(3)}, in)
			}
			if r.RunsLivenessFailed > 0 {
				c.StrokeLines(draw.LineStyle{Color: livenessColour, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}, in)
			}
			sty.Color = color.Black
			if dark(fc) {
				sty.Color = color.White // legible on a dark cell
			}
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, MatrixCellText(r))
		}
	}
}

// MatrixPlot draws the heat map of a matrix's rows.
func MatrixPlot(sp *matrix.Spec, rows []matrix.Row) *plot.Plot {
	scen, vers, at := pivot(rows)
	p := plot.New()
	p.Title.Text = "which Kafka loses what: " + itoa(sp.Seeds) + " seeds per cell; colour: what the runs mean, deeper: more runs lost a record\n" +
		"rows: scenario and what it ran (its variant: -variant, else the first; its settings; the release's keys over them)"
	if common := commonSettings(sp); len(common) > 0 {
		p.Title.Text += "\n" + wrapList("every run (-config, -set): ", common, plotLabelWidth*2)
	}
	p.X.Label.Text = "Kafka release (inter.broker.protocol.version; -kraft: KRaft mode)"
	p.X.Min, p.X.Max = -0.5, float64(len(vers))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(scen))-0.5
	var xt, yt []plot.Tick
	for i, v := range vers {
		xt = append(xt, plot.Tick{Value: float64(i), Label: v})
	}
	for j, s := range scen {
		yt = append(yt, plot.Tick{Value: float64(len(scen) - 1 - j), Label: rowLabel(firstRow(rows, s))})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	p.Y.Tick.Marker = plot.ConstantTicks(yt)
	p.Add(heatMap{scen: scen, vers: vers, at: at})
	return p
}

func itoa(n int) string { return ftoa(float64(n), 0) }

// plotLabelWidth is the widest line of a row's label, in characters.
const plotLabelWidth = 56

// rowLabel is a row's tick label: the scenario, then what it ran
// (matrix.Row.RanAs), wrapped at plotLabelWidth between settings.
func rowLabel(r matrix.Row) string {
	var items []string
	for i, kv := range r.Settings {
		if i < len(r.Settings)-1 {
			kv += ", "
		} else if len(r.Replaced) > 0 {
			kv += "; "
		}
		items = append(items, kv)
	}
	for i, kv := range r.Replaced {
		if i < len(r.Replaced)-1 {
			kv += ", "
		} else {
			kv += " "
		}
		items = append(items, kv)
	}
	if len(r.Replaced) > 0 {
		items = append(items, "overridden by the release")
	}
	head := "variant " + r.Variant
	if len(items) == 0 {
		return r.Scenario + "\n" + head
	}
	items[len(items)-1] += ")"
	return r.Scenario + "\n" + wrapList(head+" (", items, plotLabelWidth)
}

// wrapList joins prefix and items into lines of about width characters,
// breaking only between items.
func wrapList(prefix string, items []string, width int) string {
	var lines []string
	line := prefix
	for _, it := range items {
		if len(line)+len(it) > width && line != prefix && line != "  " {
			lines = append(lines, strings.TrimRight(line, " "))
			line = "  "
		}
		line += it
	}
	return strings.Join(append(lines, line), "\n")
}

// labelLines returns the most lines and characters of a tick label.
func labelLines(labels []string) (lines, chars int) {
	for _, l := range labels {
		ls := strings.Split(l, "\n")
		lines = max(lines, len(ls))
		for _, x := range ls {
			chars = max(chars, len(x))
		}
	}
	return lines, chars
}

// WriteMatrixPlots writes matrix.png and matrix.svg into dir, each
// atomically.
func WriteMatrixPlots(dir string, sp *matrix.Spec, rows []matrix.Row) error {
	p := MatrixPlot(sp, rows)
	scen, vers, _ := pivot(rows)
	var labels []string
	for _, s := range scen {
		labels = append(labels, rowLabel(firstRow(rows, s)))
	}
	lines, chars := labelLines(labels)
	titleLines := strings.Count(p.Title.Text, "\n") + 1
	width := vg.Inch * vg.Length(max(1+0.075*float64(chars)+0.85*float64(len(vers)), 7.5))
	height := vg.Inch * vg.Length(1.2+0.18*float64(titleLines)+max(0.45, 0.17*float64(lines))*float64(len(scen)))
	height += matrixKeyHeight
	width = max(width+matrixLeftMargin, matrixKeyWidth())
	for _, format := range []string{"png", "svg"} {
		path := filepath.Join(dir, "matrix."+format)
		if err := WriteFileAtomic(path, func(w io.Writer) error {
			var c vg.CanvasWriterTo = vgsvg.New(width, height)
			if format == "png" {
				c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
			}
			dc := draw.New(c)
			// NB: a left margin: gonum sizes the axis for its widest tick
			// label, but sets a multi-line label a few points further left.
			p.Draw(draw.Crop(dc, matrixLeftMargin, 0, matrixKeyHeight, 0))
			drawMatrixKey(draw.Crop(dc, 0, 0, 0, -(height - matrixKeyHeight)))
			_, err := c.WriteTo(w)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// matrixLeftMargin is the room left of the row labels.
const matrixLeftMargin = vg.Length(18)

// matrixKeyHeight is the height of the key under the heat map.
const matrixKeyHeight = vg.Length(1.35 * vg.Inch)

// keyStyle is the key's text.
func keyStyle() draw.TextStyle {
	return draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(9)), XAlign: draw.XLeft, YAlign: draw.YCenter,
		Handler: plot.DefaultTextHandler}
}

// matrixKeyWidth is the width the key needs: its widest row.
func matrixKeyWidth() vg.Length {
	sty := keyStyle()
	w := sty.Width("colour:") + vg.Points(8) + vg.Points(26) + sty.Width("n/a")
	for _, m := range meanings {
		w += 2*vg.Points(23) + vg.Points(4) + sty.Width(m.name) + vg.Points(14)
	}
	for _, l := range matrixLetters {
		w = max(w, sty.Width(l))
	}
	return w + vg.Points(24)
}

// matrixLetters explains MatrixCellText's marks.
var matrixLetters = []string{
	"k/n: k of n runs lost an acknowledged record;  B k: k runs broke Kafka's contract;  O k: offline by design (ELR waiting);  ? k: undecided;  F k: not carried out",
	"S k: a consumer silently skipped records;  C k: a committed (not acknowledged) record lost;  D k: replicas diverged;  L k: liveness failed;  n/a: cannot run on the release",
}

// drawMatrixKey draws the key: a swatch per meaning (pale to deep by the
// loss fraction), the letters, and the borders.
func drawMatrixKey(c draw.Canvas) {
	sty := keyStyle()
	x, y := c.Min.X+vg.Points(12), c.Max.Y-vg.Points(14)
	box := func(x, y vg.Length, fill color.Color) []vg.Point {
		sq := []vg.Point{{X: x, Y: y - vg.Points(6)}, {X: x + vg.Points(22), Y: y - vg.Points(6)}, {X: x + vg.Points(22), Y: y + vg.Points(6)}, {X: x, Y: y + vg.Points(6)}}
		c.FillPolygon(fill, sq)
		return append(sq, sq[0])
	}
	c.FillText(sty, vg.Point{X: x, Y: y}, "colour:")
	x += sty.Width("colour:") + vg.Points(8)
	for _, m := range meanings {
		for k, p := range []float64{0, 1} {
			r := matrix.Row{RunsWithLoss: 1, PRunLoss: p}
			switch m {
			case meaningBroken:
				r.RunsBug = 1
			case meaningUnknown:
				r.RunsUnknown = 1
			case meaningOffline:
				r.RunsWithLoss, r.RunsOffline = 0, 1
			case meaningOK:
				r.RunsWithLoss = 0
			}
			if m == meaningOK && k == 1 {
				break
			}
			box(x, y, cellColour(r))
			x += vg.Points(23)
		}
		x += vg.Points(4)
		c.FillText(sty, vg.Point{X: x, Y: y}, m.name)
		x += sty.Width(m.name) + vg.Points(14)
	}
	box(x, y, naColour)
	c.FillText(sty, vg.Point{X: x + vg.Points(26), Y: y}, "n/a")
	y -= vg.Points(18)
	x = c.Min.X + vg.Points(12)
	c.FillText(sty, vg.Point{X: x, Y: y}, "(each colour's pale box: no run lost a record; deep box: every run did)")
	for _, l := range matrixLetters {
		y -= vg.Points(16)
		c.FillText(sty, vg.Point{X: x, Y: y}, l)
	}
	y -= vg.Points(18)
	in := box(x, y, color.White)
	c.StrokeLines(draw.LineStyle{Color: divergedColour, Width: vg.Points(3)}, in)
	c.FillText(sty, vg.Point{X: x + vg.Points(28), Y: y}, "runs diverged")
	x += vg.Points(28) + sty.Width("runs diverged") + vg.Points(16)
	in = box(x, y, color.White)
	c.StrokeLines(draw.LineStyle{Color: livenessColour, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}, in)
	c.FillText(sty, vg.Point{X: x + vg.Points(28), Y: y}, "liveness failed")
}
