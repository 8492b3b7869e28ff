package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"github.com/accerl/accerl/runstore"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure geometry: 7 × 4.5 inches, rasterised at 150 dots per inch
// (1050 × 675 pixels), legible on screen and in a two-column paper.
const (
	figWidth  = 7 * vg.Inch
	figHeight = 4.5 * vg.Inch
	figDPI    = 150
)

// figuresDir is the subdirectory of an experiment that holds the figures.
const figuresDir = "figures"

// armPalette is the Okabe–Ito colour-blind-safe palette (Okabe & Ito 2008),
// ordered for contrast between neighbours; yellow, weak on white, is last.
var armPalette = []color.NRGBA{
	{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
	{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
	{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
	{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
	{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
	{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
	{R: 0x00, G: 0x00, B: 0x00, A: 0xFF}, // black
	{R: 0xF0, G: 0xE4, B: 0x42, A: 0xFF}, // yellow
}

// armStyle is the colour and dash pattern of the i-th arm of an
// experiment. Arms keep their index, and so their look, in every figure.
// Past the palette's length colours repeat with a dashed line.
type armStyle struct {
	Color  color.NRGBA
	Dashes []vg.Length
}

func styleOf(i int) armStyle {
	s := armStyle{Color: armPalette[i%len(armPalette)]}
	if (i/len(armPalette))%2 == 1 {
		s.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
	return s
}

// fill returns the arm colour at the given opacity, for bands.
func (s armStyle) fill(alpha uint8) color.NRGBA {
	c := s.Color
	c.A = alpha
	return c
}

// lineStyle returns a line style in the arm colour.
func (s armStyle) lineStyle(width vg.Length) draw.LineStyle {
	return draw.LineStyle{Color: s.Color, Width: width, Dashes: s.Dashes}
}

// humanTicks labels axis ticks with SI suffixes (250k, 1.5M) instead of
// the default exponent notation, which is hard to read for step counts.
type humanTicks struct{}

// Ticks implements plot.Ticker.
func (humanTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = humanNumber(ticks[i].Value)
		}
	}
	return ticks
}

// humanNumber formats v with at most three significant digits and an SI
// suffix: 0, 950, 1.5k, 250k, 12.5M, 3G.
func humanNumber(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trimG(v/1e9) + "G"
	case a >= 1e6:
		return trimG(v/1e6) + "M"
	case a >= 1e3:
		return trimG(v/1e3) + "k"
	case a < 1e-12:
		return "0"
	}
	return trimG(v)
}

func trimG(v float64) string {
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// newPlot returns a plot with the house look: title, axis labels, a grid
// and the legend in the top-left corner.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	p.X.Tick.Label.Font.Size = vg.Points(10)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	p.X.Tick.Marker = humanTicks{}
	p.Y.Tick.Marker = humanTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), -vg.Points(4)
	for _, st := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		st.Font.Variant = "Sans" // sans-serif reads better at small sizes
	}
	return p
}

// placeLegend puts the legend in the corner of the data area that the
// points cover least, preferring bottom-right (empty for rising learning
// curves), then top-left. When every corner covers some data it raises the
// top of the y axis to make an empty band for the legend. The legend box is
// estimated from its labels. The axis ranges must otherwise be final.
func placeLegend(p *plot.Plot, points []plotter.XY, labels []string) {
	longest := 0
	for _, l := range labels {
		longest = max(longest, len([]rune(l)))
	}
	// About 5.5 points per character at 10 pt plus a 30-point thumbnail,
	// over a data area of about 450 × 330 points at 7 × 4.5 inches.
	wFrac := math.Min(0.7, (5.5*float64(longest)+40)/450)
	hFrac := math.Min(0.7, (14*float64(len(labels))+10)/330)
	xr, yr := p.X.Max-p.X.Min, p.Y.Max-p.Y.Min
	type corner struct{ top, left bool }
	best, bestN := corner{false, false}, -1
	for _, c := range []corner{{false, false}, {true, true}, {true, false}, {false, true}} {
		n := 0
		for _, pt := range points {
			fx, fy := (pt.X-p.X.Min)/xr, (pt.Y-p.Y.Min)/yr
			inX := (c.left && fx <= wFrac) || (!c.left && fx >= 1-wFrac)
			inY := (c.top && fy >= 1-hFrac) || (!c.top && fy <= hFrac)
			if inX && inY {
				n++
			}
		}
		if bestN < 0 || n < bestN {
			best, bestN = c, n
		}
	}
	if bestN > 0 {
		// Every corner covers data (many arms, or curves everywhere): add headroom above
		// the data for the legend instead of drawing it over the curves.
		p.Y.Max += yr * hFrac / (1 - hFrac)
		best = corner{top: true, left: true}
	}
	p.Legend.Top, p.Legend.Left = best.top, best.left
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), vg.Points(4)
	if !best.left {
		p.Legend.XOffs = -vg.Points(6)
	}
	if best.top {
		p.Legend.YOffs = -vg.Points(4)
	}
}

// withMargin keeps the title and the last tick label off the image edge.
func withMargin(c draw.Canvas) draw.Canvas {
	return draw.Crop(c, vg.Points(4), -vg.Points(12), vg.Points(4), -vg.Points(8))
}

// renderPNG and renderSVG run drawFn on a canvas of the figure width and
// the given height.
func renderPNG(height vg.Length, drawFn func(draw.Canvas)) ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(figWidth, height), vgimg.UseDPI(figDPI))
	drawFn(withMargin(draw.New(c)))
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func renderSVG(height vg.Length, drawFn func(draw.Canvas)) ([]byte, error) {
	c := vgsvg.NewWith(vgsvg.UseWH(figWidth, height))
	drawFn(withMargin(draw.New(c)))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	// Fonts are not embedded (that costs ~550 kB per figure). Liberation
	// Sans has the metrics of Arial, so naming Arial and Helvetica as
	// fallbacks keeps text widths, and so the layout, where Liberation is
	// not installed.
	return bytes.ReplaceAll(b.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")), nil
}

// figure is one rendered figure.
type figure struct {
	Name    string // base name without extension, e.g. "learning_curve"
	Title   string // for the alt text
	Caption string // Markdown caption
	PNG     []byte
	SVG     []byte
}

// renderFigure renders p at the standard figure size.
func renderFigure(name, title, caption string, p *plot.Plot) (*figure, error) {
	return renderDrawing(name, title, caption, figHeight, p.Draw)
}

// renderPanels stacks panels top to bottom in one figure of the given
// height, with their data areas aligned so that a shared x axis lines up.
func renderPanels(name, title, caption string, panels []*plot.Plot, height vg.Length) (*figure, error) {
	if len(panels) == 1 {
		return renderDrawing(name, title, caption, height, panels[0].Draw)
	}
	drawFn := func(c draw.Canvas) {
		rows := make([][]*plot.Plot, len(panels))
		for i, p := range panels {
			rows[i] = []*plot.Plot{p}
		}
		tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Points(14)}
		canvases := plot.Align(rows, tiles, c)
		for i, p := range panels {
			p.Draw(canvases[i][0])
		}
	}
	return renderDrawing(name, title, caption, height, drawFn)
}

// renderDrawing renders drawFn to PNG and SVG.
func renderDrawing(name, title, caption string, height vg.Length, drawFn func(draw.Canvas)) (*figure, error) {
	png, err := renderPNG(height, drawFn)
	if err != nil {
		return nil, fmt.Errorf("render %s.png: %w", name, err)
	}
	svg, err := renderSVG(height, drawFn)
	if err != nil {
		return nil, fmt.Errorf("render %s.svg: %w", name, err)
	}
	return &figure{Name: name, Title: title, Caption: caption, PNG: png, SVG: svg}, nil
}

// save writes the figure's PNG and SVG under dir/figures and returns both
// paths.
func (f *figure) save(expDir string) ([]string, error) {
	var paths []string
	for _, out := range []struct {
		ext  string
		data []byte
	}{{".png", f.PNG}, {".svg", f.SVG}} {
		path := filepath.Join(expDir, figuresDir, f.Name+out.ext)
		if err := runstore.WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write(out.data); return err }); err != nil {
			return nil, fmt.Errorf("save figure %q: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// pointsLine is a run's measured points in its arm's style: a solid line with a dot on each.
func pointsLine(st armStyle, pts plotter.XYs) (*plotter.Line, *plotter.Scatter, error) {
	l, sc, err := plotter.NewLinePoints(pts)
	if err != nil {
		return nil, nil, err
	}
	l.LineStyle = st.lineStyle(vg.Points(1.2))
	sc.GlyphStyle = draw.GlyphStyle{Color: st.fill(0xD0), Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
	return l, sc, nil
}

// dashedLine is a companion of a run's points in its arm's colour, thinner and dashed (a
// baseline, or the same measure taken another way).
func dashedLine(st armStyle, pts plotter.XYs) (*plotter.Line, error) {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	l.LineStyle = st.lineStyle(vg.Points(1))
	l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	return l, nil
}
