package reports

// This file draws a matrix's heat map (matrix.png, matrix.svg) with
// gonum/plot: releases across, scenarios down (each labelled with what it
// ran: matrix.Row.RanAs, wrapped), each cell filled by
// p_run_loss (white at 0 to red at 1) and labelled with its text
// (MatrixCellText: "2/5 D1 L1"); a cell where runs diverged gets a thick
// purple border, one with a liveness failure a dashed black one; a cell
// that cannot run on its release is grey and says n/a.

import (
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kafkasim/kafkasim/scenarios/matrix"
)

var (
	naColour        = color.RGBA{215, 215, 215, 255}
	divergedColour  = color.RGBA{148, 103, 189, 255} // the palette's purple
	livenessColour  = color.RGBA{0, 0, 0, 255}
	lossColourHigh  = color.RGBA{214, 39, 40, 255} // the palette's red
	lossColourEmpty = color.RGBA{255, 255, 255, 255}
)

// lossColour interpolates white (0) to red (1).
func lossColour(p float64) color.Color {
	mix := func(a, b uint8) uint8 { return uint8(float64(a) + p*(float64(b)-float64(a)) + 0.5) }
	return color.RGBA{mix(lossColourEmpty.R, lossColourHigh.R), mix(lossColourEmpty.G, lossColourHigh.G), mix(lossColourEmpty.B, lossColourHigh.B), 255}
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
			var fc color.Color = naColour
			if r.Status == matrix.StatusRan {
				fc = lossColour(r.PRunLoss)
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
			if r.Status == matrix.StatusRan && r.PRunLoss > 0.6 {
				sty.Color = color.White // legible on dark red
			}
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, MatrixCellText(r))
		}
	}
}

// MatrixPlot draws the heat map of a matrix's rows.
func MatrixPlot(sp *matrix.Spec, rows []matrix.Row) *plot.Plot {
	scen, vers, at := pivot(rows)
	p := plot.New()
	p.Title.Text = "which Kafka loses what: P(a run loses an acknowledged record), " + itoa(sp.Seeds) + " seeds per cell\n" +
		"white 0 to red 1; purple border: runs diverged; dashed border: liveness failed; grey: n/a\n" +
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
	for _, format := range []string{"png", "svg"} {
		path := filepath.Join(dir, "matrix."+format)
		if err := WriteFileAtomic(path, func(w io.Writer) error {
			wt, err := p.WriterTo(width, height, format)
			if err != nil {
				return err
			}
			_, err = wt.WriteTo(w)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}
