package edm

import (
	"fmt"
	"math"

	"github.com/accerl/accerl/kernels"
)

// normEps is the group-norm epsilon (PyTorch's nn.GroupNorm default).
const normEps = 1e-5

// adaNorm is DIAMOND's adaptive group norm (Alonso et al. 2024, code
// AdaGroupNorm; the FiLM conditioning of Perez et al. 2018): group
// normalisation without its own affine parameters (Wu & He 2018, "Group
// Normalization", eq. 1-3), then a per-image, per-channel scale and shift
// predicted from the conditioning vector e (noise level + action):
//
//	[γ | β] = W·e + b                       (W: 2c × condDim)
//	x̂ = (x − μ_{i,g}) / sqrt(σ²_{i,g} + 1e-5) over the c/groups channels of group g of image i and all pixels
//	y = x̂ ⊙ (1 + γ) + β
//
// With W = 0 and b = 0 it is a plain group norm.
type adaNorm[F Float] struct {
	c, groups int
	film      dense[F] // condDim → 2c: [γ | β]

	// forward state for backward
	xhat, rstd, gb, cond []F
	n, hw                int
}

// forward normalises x (c × n·hw, CNHW) and applies the scale and shift
// from cond (n × condDim).
func (l *adaNorm[F]) forward(be kernels.Backend, x []F, n, hw int, cond []F) []F {
	if len(x) != l.c*n*hw {
		panic(fmt.Sprintf("edm: group norm: input has %d values, want %d·%d·%d", len(x), l.c, n, hw))
	}
	l.n, l.hw, l.cond = n, hw, cond
	l.gb = l.film.forward(be, cond, n)
	l.xhat, l.rstd = make([]F, len(x)), make([]F, n*l.groups)
	y := make([]F, len(x))
	cpg := l.c / l.groups
	forEach(n*l.groups, cpg*hw, func(ig int) {
		i, g := ig/l.groups, ig%l.groups
		s, s2 := 0.0, 0.0
		for c := g * cpg; c < (g+1)*cpg; c++ {
			for _, v := range x[(c*n+i)*hw:][:hw] {
				s += float64(v)
			}
		}
		cnt := float64(cpg * hw)
		mu := s / cnt
		for c := g * cpg; c < (g+1)*cpg; c++ {
			for _, v := range x[(c*n+i)*hw:][:hw] {
				d := float64(v) - mu
				s2 += d * d
			}
		}
		r := 1 / math.Sqrt(s2/cnt+normEps)
		l.rstd[ig] = F(r)
		gamma, beta := l.gb[i*2*l.c:][:l.c], l.gb[i*2*l.c+l.c:][:l.c]
		for c := g * cpg; c < (g+1)*cpg; c++ {
			off := (c*n + i) * hw
			xh, out := l.xhat[off:][:hw], y[off:][:hw]
			scale, shift := 1+gamma[c], beta[c]
			for j, v := range x[off:][:hw] {
				xh[j] = F((float64(v) - mu) * r)
				out[j] = xh[j]*scale + shift
			}
		}
	})
	return y
}

// backward returns ∂L/∂x for the upstream gradient dy, accumulates the
// gradients of W and b and adds ∂L/∂e to dcond (n × condDim). With
// d̂ = dy ⊙ (1 + γ), per group:
//
//	∂L/∂γ = Σ_pixels dy ⊙ x̂,   ∂L/∂β = Σ_pixels dy
//	∂L/∂x = rstd · (d̂ − mean(d̂) − x̂ · mean(d̂ ⊙ x̂))
func (l *adaNorm[F]) backward(be kernels.Backend, dy, dcond []F) []F {
	n, hw, cpg := l.n, l.hw, l.c/l.groups
	dgb := make([]F, n*2*l.c)
	dx := make([]F, len(dy))
	forEach(n*l.groups, cpg*hw, func(ig int) {
		i, g := ig/l.groups, ig%l.groups
		gamma := l.gb[i*2*l.c:][:l.c]
		dgamma, dbeta := dgb[i*2*l.c:][:l.c], dgb[i*2*l.c+l.c:][:l.c]
		m1, m2 := 0.0, 0.0
		for c := g * cpg; c < (g+1)*cpg; c++ {
			off := (c*n + i) * hw
			xh := l.xhat[off:][:hw]
			scale := float64(1 + gamma[c])
			sg, sb := 0.0, 0.0
			for j, d := range dy[off:][:hw] {
				sg += float64(d) * float64(xh[j])
				sb += float64(d)
			}
			dgamma[c], dbeta[c] = F(sg), F(sb)
			m1 += sb * scale
			m2 += sg * scale
		}
		cnt := float64(cpg * hw)
		m1, m2 = m1/cnt, m2/cnt
		r := float64(l.rstd[ig])
		for c := g * cpg; c < (g+1)*cpg; c++ {
			off := (c*n + i) * hw
			xh, out := l.xhat[off:][:hw], dx[off:][:hw]
			scale := float64(1 + gamma[c])
			for j, d := range dy[off:][:hw] {
				out[j] = F(r * (float64(d)*scale - m1 - float64(xh[j])*m2))
			}
		}
	})
	l.film.backward(be, l.cond, dgb, n, dcond)
	return dx
}

// dense is a linear layer y = x·Wᵀ + b (W out × in, PyTorch's nn.Linear).
type dense[F Float] struct {
	in, out int
	w, b    tensor[F]
}

// forward returns y (n × out) for x (n × in).
func (l *dense[F]) forward(be kernels.Backend, x []F, n int) []F {
	if len(x) != n*l.in {
		panic(fmt.Sprintf("edm: dense: input has %d values, want %d·%d", len(x), n, l.in))
	}
	y := make([]F, n*l.out)
	matmul(be, false, true, n, l.out, l.in, x, l.w.w, 0, y)
	for i := 0; i < n; i++ {
		row := y[i*l.out : (i+1)*l.out]
		for j := range row {
			row[j] += l.b.w[j]
		}
	}
	return y
}

// backward accumulates ∂W += dyᵀ·x and ∂b += Σ_rows dy for the forward
// input x and upstream gradient dy (n × out), and adds dy·W to dx (n × in;
// skipped when dx is nil).
func (l *dense[F]) backward(be kernels.Backend, x, dy []F, n int, dx []F) {
	matmul(be, true, false, l.out, l.in, n, dy, x, 1, l.w.g)
	for i := 0; i < n; i++ {
		for j, v := range dy[i*l.out : (i+1)*l.out] {
			l.b.g[j] += v
		}
	}
	if dx != nil {
		matmul(be, false, false, n, l.in, l.out, dy, l.w.w, 1, dx)
	}
}

// silu is the sigmoid-weighted linear unit (Elfwing et al. 2018; PyTorch's
// nn.SiLU): y = x·σ(x), σ(x) = 1/(1 + e^−x).
func silu[F Float](x []F) []F {
	y := make([]F, len(x))
	forChunks(len(x), func(lo, hi int) {
		for i, v := range x[lo:hi] {
			y[lo+i] = F(float64(v) / (1 + math.Exp(-float64(v))))
		}
	})
	return y
}

// siluBack returns dy ⊙ silu'(x), silu'(x) = σ(x)·(1 + x·(1 − σ(x))).
func siluBack[F Float](x, dy []F) []F {
	dx := make([]F, len(x))
	forChunks(len(x), func(lo, hi int) {
		for i, v := range x[lo:hi] {
			u := float64(v)
			s := 1 / (1 + math.Exp(-u))
			dx[lo+i] = dy[lo+i] * F(s*(1+u*(1-s)))
		}
	})
	return dx
}

// forChunks calls f on consecutive ranges [lo, hi) covering [0, n), in
// parallel (forEach) for long inputs.
func forChunks(n int, f func(lo, hi int)) {
	const chunk = 1 << 12
	forEach((n+chunk-1)/chunk, chunk, func(c int) { f(c*chunk, min(n, (c+1)*chunk)) })
}
