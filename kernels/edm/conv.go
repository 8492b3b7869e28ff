package edm

import (
	"fmt"

	"github.com/accerl/accerl/kernels"
)

// tensor is one parameter tensor: w views the flat parameter slice, g the
// flat gradient slice at the same offset.
type tensor[F Float] struct{ w, g []F }

// Activations are channel-major, "CNHW": a tensor of c channels over a
// batch of n images of h×w pixels is one slice of c·n·h·w values whose
// plane (channel ch, image i) is the h·w values at [(ch·n + i)·h·w:], rows
// top to bottom. With that layout a convolution over the whole batch is one
// GEMM (weights × im2col columns of all images), concatenating along
// channels (the U-Net's skip connections) is appending, and a per-image
// quantity is a strided walk over planes.

// conv is a 2-D convolution (cross-correlation, as PyTorch's nn.Conv2d)
// with a size×size kernel, stride 1 or 2 and zero padding size/2:
//
//	y[k][i][oy][ox] = b[k] + Σ_{c,r,s} W[k][c][r][s] · x[c][i][oy·stride+r−size/2][ox·stride+s−size/2]
//
// computed as Y (cout × n·OH·OW) = W (cout × cin·size²) · col, where col is
// the im2col lowering of x (Chellapilla et al. 2006, "High Performance
// Convolutional Neural Networks for Document Processing"). forward keeps
// x for the backward pass, which recomputes col rather than keeping it (one
// col matrix of a 32×32 batch is tens of MB, the lowering costs far less
// than the GEMM).
type conv[F Float] struct {
	cin, cout, size, stride int
	w, b                    tensor[F] // cout × cin × size × size, cout
	// noInputGrad skips ∂L/∂x in backward (the first layer's input is data).
	noInputGrad bool

	x        []F // forward input, kept for backward
	n, h, wd int
}

// outSize returns the output side for an input side s.
func (l *conv[F]) outSize(s int) int { return (s+2*(l.size/2)-l.size)/l.stride + 1 }

// forward returns y for x (cin × n·h·w) and keeps x for backward.
func (l *conv[F]) forward(be kernels.Backend, x []F, n, h, w int) []F {
	if len(x) != l.cin*n*h*w {
		panic(fmt.Sprintf("edm: conv: input has %d values, want %d·%d·%d·%d", len(x), l.cin, n, h, w))
	}
	l.x, l.n, l.h, l.wd = x, n, h, w
	p := n * l.outSize(h) * l.outSize(w)
	col := l.columns(x)
	y := make([]F, l.cout*p)
	matmul(be, false, false, l.cout, p, l.cin*l.size*l.size, l.w.w, col, 0, y)
	forEach(l.cout, p, func(k int) {
		bk := l.b.w[k]
		row := y[k*p : (k+1)*p]
		for j := range row {
			row[j] += bk
		}
	})
	return y
}

// backward accumulates ∂L/∂W += dY·colᵀ and ∂L/∂b += Σ dY, and returns
// ∂L/∂x = col2im(Wᵀ·dY) for the upstream gradient dy (cout × n·OH·OW)
// (nil with noInputGrad).
func (l *conv[F]) backward(be kernels.Backend, dy []F) []F {
	p := l.n * l.outSize(l.h) * l.outSize(l.wd)
	if len(dy) != l.cout*p {
		panic(fmt.Sprintf("edm: conv: upstream gradient has %d values, want %d", len(dy), l.cout*p))
	}
	crs := l.cin * l.size * l.size
	forEach(l.cout, p, func(k int) {
		s := 0.0
		for _, v := range dy[k*p : (k+1)*p] {
			s += float64(v)
		}
		l.b.g[k] += F(s)
	})
	col := l.columns(l.x)
	matmul(be, false, true, l.cout, crs, p, dy, col, 1, l.w.g)
	if l.noInputGrad {
		return nil
	}
	dcol := make([]F, crs*p)
	matmul(be, true, false, crs, p, l.cout, l.w.w, dy, 0, dcol)
	if l.size == 1 && l.stride == 1 {
		return dcol
	}
	dx := make([]F, len(l.x))
	col2im(l.geom(), dcol, dx)
	return dx
}

// columns returns the im2col matrix of x (x itself for a 1×1 stride-1 conv).
func (l *conv[F]) columns(x []F) []F {
	if l.size == 1 && l.stride == 1 {
		return x
	}
	g := l.geom()
	col := make([]F, l.cin*l.size*l.size*g.n*g.oh*g.ow)
	im2col(g, x, col)
	return col
}

// convGeom is the shape of one conv call: cin planes per image, n images
// of h×w, a size×size kernel with stride and padding pad, output oh×ow.
type convGeom struct{ cin, n, h, w, size, stride, pad, oh, ow int }

func (l *conv[F]) geom() convGeom {
	return convGeom{l.cin, l.n, l.h, l.wd, l.size, l.stride, l.size / 2, l.outSize(l.h), l.outSize(l.wd)}
}

// validCols returns the output columns [lo, hi) whose input column
// ox·stride + s − pad lies inside the image for kernel column s.
func (g convGeom) validCols(s int) (lo, hi int) {
	lo = max(0, (g.pad-s+g.stride-1)/g.stride)
	if last := g.w - 1 + g.pad - s; last >= 0 {
		hi = min(g.ow, last/g.stride+1)
	}
	return lo, max(lo, hi)
}

// eachRow calls f for every input channel c, kernel offset (r, s), image
// i and output row oy whose input row oy·stride + r − pad lies inside the
// image, with the offset of that output row in the im2col matrix, the
// offset of the input row in the CNHW tensor and the output columns
// [lo, hi) whose input column lies inside it. Different input channels
// are visited by different goroutines, and each call touches only its
// channel's rows, so im2col and col2im need no locks.
func (g convGeom) eachRow(f func(colRow, xRow, s, lo, hi int)) {
	hw, q := g.h*g.w, g.oh*g.ow
	p := g.n * q
	forEach(g.cin, g.size*g.size*p, func(c int) {
		for r := 0; r < g.size; r++ {
			for s := 0; s < g.size; s++ {
				lo, hi := g.validCols(s)
				for i := 0; i < g.n; i++ {
					for oy := 0; oy < g.oh; oy++ {
						if iy := oy*g.stride + r - g.pad; iy >= 0 && iy < g.h {
							f(((c*g.size+r)*g.size+s)*p+i*q+oy*g.ow, (c*g.n+i)*hw+iy*g.w, s, lo, hi)
						}
					}
				}
			}
		}
	})
}

// im2col writes the columns of x (CNHW) into col ((cin·size²) × (n·oh·ow),
// zeroed by the caller):
//
//	col[(c·size + r)·size + s][(i·oh + oy)·ow + ox] = x[c][i][oy·stride+r−pad][ox·stride+s−pad]
//
// leaving 0 where the input index falls outside the image.
func im2col[F Float](g convGeom, x, col []F) {
	g.eachRow(func(colRow, xRow, s, lo, hi int) {
		dst, src := col[colRow:colRow+g.ow], x[xRow:xRow+g.w]
		if g.stride == 1 {
			copy(dst[lo:hi], src[lo+s-g.pad:])
			return
		}
		for ox := lo; ox < hi; ox++ {
			dst[ox] = src[ox*g.stride+s-g.pad]
		}
	})
}

// col2im adds the columns col (laid out as im2col writes them) into dx
// (CNHW, zeroed by the caller): the adjoint of im2col.
func col2im[F Float](g convGeom, col, dx []F) {
	g.eachRow(func(colRow, xRow, s, lo, hi int) {
		src, dst := col[colRow:colRow+g.ow], dx[xRow:xRow+g.w]
		for ox := lo; ox < hi; ox++ {
			dst[ox*g.stride+s-g.pad] += src[ox]
		}
	})
}

// upsample2 is nearest-neighbour 2× upsampling of planes planes of h×w:
// y[p][y][x] = x[p][y/2][x/2].
func upsample2[F Float](x []F, planes, h, w int) []F {
	y := make([]F, 4*len(x))
	forEach(planes, 4*h*w, func(p int) {
		src, dst := x[p*h*w:][:h*w], y[p*4*h*w:][:4*h*w]
		for yy := 0; yy < 2*h; yy++ {
			in, out := src[(yy/2)*w:][:w], dst[yy*2*w:][:2*w]
			for xx := range out {
				out[xx] = in[xx/2]
			}
		}
	})
	return y
}

// upsample2Back is upsample2's backward pass: each input pixel's gradient
// is the sum of the gradients of the 2×2 output pixels it was copied to.
// h×w is the input (low-resolution) side.
func upsample2Back[F Float](dy []F, planes, h, w int) []F {
	dx := make([]F, len(dy)/4)
	forEach(planes, 4*h*w, func(p int) {
		src, dst := dy[p*4*h*w:][:4*h*w], dx[p*h*w:][:h*w]
		for yy := 0; yy < 2*h; yy++ {
			in, out := src[yy*2*w:][:2*w], dst[(yy/2)*w:][:w]
			for xx, v := range in {
				out[xx/2] += v
			}
		}
	})
	return dx
}
