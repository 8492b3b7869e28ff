package reports

import (
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Percentiles of a quantileBox: whiskers span the 5th to the 95th, the box
// the 25th to the 75th, the line is the median.
const (
	whiskerLowQ  = 0.05
	whiskerHighQ = 0.95
)

// quantileBox is a horizontal box plot of one sample at height Y. Unlike
// plotter.BoxPlot (Tukey whiskers and one glyph per outlier, thousands for
// a long run) it draws fixed percentiles and no outliers, so its size does
// not grow with the sample.
type quantileBox struct {
	Y                    float64 // position on the y axis
	P5, Q1, Med, Q3, P95 float64
	N                    int // sample size
	Style                armStyle
	Height               vg.Length // box height
}

// newQuantileBox summarises values (finite ones only); ok is false when
// there are none.
func newQuantileBox(y float64, values []float64, st armStyle) (b *quantileBox, ok bool) {
	v := finite(values)
	if len(v) == 0 {
		return nil, false
	}
	slices.Sort(v)
	return &quantileBox{Y: y, N: len(v), Style: st, Height: vg.Points(16),
		P5: quantile(v, whiskerLowQ), Q1: quantile(v, 0.25), Med: quantile(v, 0.5),
		Q3: quantile(v, 0.75), P95: quantile(v, whiskerHighQ)}, true
}

// Plot implements plot.Plotter.
func (b *quantileBox) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	y := trY(b.Y)
	h := b.Height / 2
	x5, x25, x50, x75, x95 := trX(b.P5), trX(b.Q1), trX(b.Med), trX(b.Q3), trX(b.P95)
	whisker := draw.LineStyle{Color: b.Style.Color, Width: vg.Points(1.2)}
	c.StrokeLine2(whisker, x5, y, x25, y)
	c.StrokeLine2(whisker, x75, y, x95, y)
	c.StrokeLine2(whisker, x5, y-h/2, x5, y+h/2)
	c.StrokeLine2(whisker, x95, y-h/2, x95, y+h/2)
	box := []vg.Point{{X: x25, Y: y - h}, {X: x75, Y: y - h}, {X: x75, Y: y + h}, {X: x25, Y: y + h}}
	c.FillPolygon(b.Style.fill(0x70), box)
	outline := draw.LineStyle{Color: b.Style.Color, Width: vg.Points(1.2)}
	c.StrokeLines(outline, append(box, box[0]))
	c.StrokeLine2(draw.LineStyle{Color: seedColor, Width: vg.Points(2.2)}, x50, y-h, x50, y+h)
	if b.P5 == b.P95 {
		// A constant (sync mode has no staleness): the box has no width,
		// so mark the value in the arm's colour.
		c.DrawGlyph(draw.GlyphStyle{Color: b.Style.Color, Radius: vg.Points(4.5), Shape: draw.CircleGlyph{}}, vg.Point{X: x50, Y: y})
	}
}

// DataRange implements plot.DataRanger.
func (b *quantileBox) DataRange() (xmin, xmax, ymin, ymax float64) {
	return b.P5, b.P95, b.Y - 0.5, b.Y + 0.5
}
