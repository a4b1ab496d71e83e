package reports

// This file labels the trade-off plot's points in place: each point's
// configuration is written beside it, right of it where it fits, else
// left; a label that would touch one placed before moves down or up a
// line at a time until it is free, with a thin line back to its point.
// Points that coincide (every acks=1 configuration at unavailability 0)
// so get a column of labels instead of a blot.

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// pointLabels is a plotter of labels beside points.
type pointLabels struct {
	pts    []plotter.XY
	labels []string
	colors []color.Color
	// placed are the labels' boxes as last drawn (for the tests).
	placed []vg.Rectangle
}

func (l *pointLabels) style() draw.TextStyle {
	return draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(9)), XAlign: draw.XLeft, YAlign: draw.YCenter,
		Handler: plot.DefaultTextHandler}
}

// overlaps reports whether a and b share more than an edge.
func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// inside reports whether a lies within b.
func inside(a, b vg.Rectangle) bool {
	return a.Min.X >= b.Min.X && a.Max.X <= b.Max.X && a.Min.Y >= b.Min.Y && a.Max.Y <= b.Max.Y
}

// Plot implements plot.Plotter.
func (l *pointLabels) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	sty := l.style()
	gap := vg.Points(7)
	l.placed = l.placed[:0]
	for i, pt := range l.pts {
		x, y := tx(pt.X), ty(pt.Y)
		w, h := sty.Width(l.labels[i]), sty.Height(l.labels[i])+vg.Points(2)
		box := func(dy vg.Length, right bool) vg.Rectangle {
			x0 := x + gap
			if !right {
				x0 = x - gap - w
			}
			return vg.Rectangle{Min: vg.Point{X: x0, Y: y + dy - h/2}, Max: vg.Point{X: x0 + w, Y: y + dy + h/2}}
		}
		free := func(b vg.Rectangle) bool {
			if !inside(b, c.Rectangle) {
				return false
			}
			for _, o := range l.placed {
				if overlaps(b, o) {
					return false
				}
			}
			return true
		}
		chosen, found := box(0, true), false
		for k := 0; k < 60 && !found; k++ {
			dy := h * vg.Length((k+1)/2) // 0, h, h, 2h, 2h, ...
			if k%2 == 1 {
				dy = -dy // below first: the title is above
			}
			for _, right := range []bool{true, false} {
				if b := box(dy, right); free(b) {
					chosen, found = b, true
					break
				}
			}
		}
		l.placed = append(l.placed, chosen)
		mid := vg.Point{X: chosen.Min.X, Y: (chosen.Min.Y + chosen.Max.Y) / 2}
		if chosen.Max.X <= x {
			mid.X = chosen.Max.X
		}
		if mid.Y != y {
			c.StrokeLine2(draw.LineStyle{Color: l.colors[i], Width: vg.Points(0.5)}, x, y, mid.X, mid.Y)
		}
		sty.Color = l.colors[i]
		c.FillText(sty, vg.Point{X: chosen.Min.X, Y: mid.Y}, l.labels[i])
	}
}
