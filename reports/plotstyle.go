package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
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
	return p
}

// renderPNG and renderSVG draw p at the figure size.
func renderPNG(p *plot.Plot) ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(figWidth, figHeight), vgimg.UseDPI(figDPI))
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func renderSVG(p *plot.Plot) ([]byte, error) {
	// Embedded fonts make the SVG look the same where Liberation is not
	// installed; they cost about 100 kB per figure.
	c := vgsvg.NewWith(vgsvg.UseWH(figWidth, figHeight), vgsvg.EmbedFonts(true))
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// figure is one rendered figure.
type figure struct {
	Name    string // base name without extension, e.g. "learning_curve"
	Title   string // for the alt text
	Caption string // Markdown caption
	PNG     []byte
	SVG     []byte
}

// renderFigure renders p to PNG and SVG.
func renderFigure(name, title, caption string, p *plot.Plot) (*figure, error) {
	png, err := renderPNG(p)
	if err != nil {
		return nil, fmt.Errorf("render %s.png: %w", name, err)
	}
	svg, err := renderSVG(p)
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
		if err := writeAtomic(path, func(w io.Writer) error { _, err := w.Write(out.data); return err }); err != nil {
			return nil, fmt.Errorf("save figure %q: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
