package reports

// This file is a small display list: the run timeline is laid out once as
// shapes in pixels (y down, as SVG), then written as inline SVG for the
// HTML report and timeline.svg, or drawn through gonum's vg canvas into
// timeline.png, so the three pictures cannot disagree. Every text and
// title is escaped here: a record value such as <script> stays text.

import (
	"fmt"
	"html"
	"image/color"
	"io"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// shapeKind is what a shape draws.
type shapeKind uint8

const (
	shapeRect shapeKind = iota
	shapeLine           // X,Y to X2,Y2
	shapePath           // Pts, an open polyline
	shapeText           // Text at X,Y (baseline), Anchor
)

// shape is one element of the picture. Colours are "#rrggbb".
type shape struct {
	Kind                shapeKind
	X, Y, W, H, X2, Y2  float64
	Pts                 []float64 // x0 y0 x1 y1 ...
	Fill, Stroke        string
	Opacity, StrokeW    float64 // 0: opaque; 0: 1 px
	Dash                bool
	Text, Anchor, Class string
	Title               string // a tooltip in the page
	Bold                bool
}

// drawing is a picture of Width × Height pixels.
type drawing struct {
	Width, Height float64
	Shapes        []shape
}

func (d *drawing) add(s shape) { d.Shapes = append(d.Shapes, s) }

func num1(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// svg writes the drawing as one <svg> element, with id when not empty.
func (d *drawing) svg(w io.Writer, id string) error {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" role="img"`, num1(d.Width), num1(d.Height), num1(d.Width), num1(d.Height))
	if id != "" {
		fmt.Fprintf(&b, ` id="%s"`, html.EscapeString(id))
	}
	b.WriteString(` font-family="ui-monospace, monospace" font-size="11">` + "\n")
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%s" height="%s" fill="#ffffff"/>`+"\n", num1(d.Width), num1(d.Height))
	for _, s := range d.Shapes {
		attrs := ""
		if s.Class != "" {
			attrs += ` class="` + html.EscapeString(s.Class) + `"`
		}
		if s.Opacity > 0 {
			attrs += ` opacity="` + num1(s.Opacity) + `"`
		}
		if s.Stroke != "" {
			attrs += ` stroke="` + s.Stroke + `"`
			if s.StrokeW > 0 {
				attrs += ` stroke-width="` + num1(s.StrokeW) + `"`
			}
			if s.Dash {
				attrs += ` stroke-dasharray="4 3"`
			}
		}
		title := ""
		if s.Title != "" {
			title = "<title>" + html.EscapeString(s.Title) + "</title>"
		}
		switch s.Kind {
		case shapeRect:
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"%s>%s</rect>`, num1(s.X), num1(s.Y), num1(s.W), num1(s.H), orNone(s.Fill), attrs, title)
		case shapeLine:
			fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"%s>%s</line>`, num1(s.X), num1(s.Y), num1(s.X2), num1(s.Y2), attrs, title)
		case shapePath:
			var pts []string
			for i := 0; i+1 < len(s.Pts); i += 2 {
				pts = append(pts, num1(s.Pts[i])+","+num1(s.Pts[i+1]))
			}
			fmt.Fprintf(&b, `<polyline fill="none" points="%s"%s>%s</polyline>`, strings.Join(pts, " "), attrs, title)
		case shapeText:
			anchor := ""
			if s.Anchor != "" {
				anchor = ` text-anchor="` + s.Anchor + `"`
			}
			if s.Bold {
				anchor += ` font-weight="bold"`
			}
			fill := ""
			if s.Fill != "" {
				fill = ` fill="` + s.Fill + `"`
			}
			fmt.Fprintf(&b, `<text x="%s" y="%s"%s%s%s>%s%s</text>`, num1(s.X), num1(s.Y), anchor, fill, attrs, html.EscapeString(s.Text), title)
		}
		b.WriteByte('\n')
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func orNone(c string) string {
	if c == "" {
		return "none"
	}
	return c
}

// rgb parses "#rrggbb" with opacity (0: opaque) into a colour.
func rgb(s string, opacity float64) color.Color {
	if len(s) != 7 || s[0] != '#' {
		return color.Black
	}
	v, _ := strconv.ParseUint(s[1:], 16, 32)
	c := color.NRGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}
	if opacity > 0 {
		c.A = uint8(255 * opacity)
	}
	return c
}

// png draws the drawing into a PNG, 1 px of the layout = 1 pt at 96 dpi.
func (d *drawing) png(w io.Writer) error {
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(d.Width), vg.Length(d.Height)), vgimg.UseDPI(96), vgimg.UseBackgroundColor(color.White))
	h := d.Height
	pt := func(x, y float64) vg.Point { return vg.Point{X: vg.Length(x), Y: vg.Length(h - y)} }
	regular := font.DefaultCache.Lookup(font.Font{Typeface: "Liberation", Variant: "Mono"}, 9)
	bold := font.DefaultCache.Lookup(font.Font{Typeface: "Liberation", Variant: "Mono", Weight: 700}, 9)
	_ = plot.DefaultFont // the fonts registered by plot's init
	for _, s := range d.Shapes {
		var p vg.Path
		switch s.Kind {
		case shapeRect:
			p.Move(pt(s.X, s.Y))
			p.Line(pt(s.X+s.W, s.Y))
			p.Line(pt(s.X+s.W, s.Y+s.H))
			p.Line(pt(s.X, s.Y+s.H))
			p.Close()
			if s.Fill != "" {
				c.SetColor(rgb(s.Fill, s.Opacity))
				c.Fill(p)
			}
		case shapeLine:
			p.Move(pt(s.X, s.Y))
			p.Line(pt(s.X2, s.Y2))
		case shapePath:
			for i := 0; i+1 < len(s.Pts); i += 2 {
				if i == 0 {
					p.Move(pt(s.Pts[0], s.Pts[1]))
				} else {
					p.Line(pt(s.Pts[i], s.Pts[i+1]))
				}
			}
		case shapeText:
			f := regular
			if s.Bold {
				f = bold
			}
			x := s.X
			switch s.Anchor {
			case "middle":
				x -= float64(f.Width(s.Text)) / 2
			case "end":
				x -= float64(f.Width(s.Text))
			}
			fill := s.Fill
			if fill == "" {
				fill = "#222222"
			}
			c.SetColor(rgb(fill, s.Opacity))
			c.FillString(f, pt(x, s.Y), s.Text)
			continue
		}
		if s.Stroke != "" {
			c.SetColor(rgb(s.Stroke, s.Opacity))
			c.SetLineWidth(vg.Length(max(s.StrokeW, 1)))
			if s.Dash {
				c.SetLineDash([]vg.Length{4, 3}, 0)
			} else {
				c.SetLineDash(nil, 0)
			}
			c.Stroke(p)
		}
	}
	_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
	return err
}
