package vla

import (
	"math"
	"runtime"
	"sync"
)

// lnEps is the layer-norm epsilon (PyTorch's nn.LayerNorm default).
const lnEps = 1e-5

// linear computes y = x·Wᵀ + b for n rows: x n×in, W out×in, b out (nil
// for none), y n×out.
func linear[F Float](x []F, n, in, out int, w, b, y []F) {
	gemm(false, true, n, out, in, 1, x, in, w, in, 0, y, out)
	if b != nil {
		for i := 0; i < n; i++ {
			row := y[i*out : (i+1)*out]
			for j := range row {
				row[j] += b[j]
			}
		}
	}
}

// linearBack is linear's backward pass: gW += dyᵀ·x, gb += Σ_rows dy, and
// dx = dy·W (overwritten; skipped when dx is nil). gW and gb may be nil
// (frozen weights).
func linearBack[F Float](x, dy []F, n, in, out int, w, gw, gb, dx []F) {
	if gw != nil {
		gemm(true, false, out, in, n, 1, dy, out, x, in, 1, gw, in)
	}
	if gb != nil {
		colSum(dy, n, out, gb)
	}
	if dx != nil {
		gemm(false, false, n, in, out, 1, dy, out, w, in, 0, dx, in)
	}
}

// colSum adds the column sums of the n×d matrix x to s.
func colSum[F Float](x []F, n, d int, s []F) {
	for i := 0; i < n; i++ {
		for j, v := range x[i*d : (i+1)*d] {
			s[j] += v
		}
	}
}

// layerNorm normalises each of the n rows of x (width d) and applies the
// gain and bias (Ba et al. 2016, "Layer Normalization"):
//
//	μ = mean(x), rs = 1/sqrt(var(x) + 1e-5), y = (x − μ)·rs·g + b
//
// with the biased variance; it keeps μ and rs per row for the backward
// pass. Statistics accumulate in float64.
func layerNorm[F Float](x []F, n, d int, g, b, y, mu, rs []F) {
	for i := 0; i < n; i++ {
		row := x[i*d : (i+1)*d]
		s := 0.0
		for _, v := range row {
			s += float64(v)
		}
		m := s / float64(d)
		s2 := 0.0
		for _, v := range row {
			e := float64(v) - m
			s2 += e * e
		}
		r := 1 / math.Sqrt(s2/float64(d)+lnEps)
		mu[i], rs[i] = F(m), F(r)
		out := y[i*d : (i+1)*d]
		for j, v := range row {
			out[j] = F((float64(v)-m)*r)*g[j] + b[j]
		}
	}
}

// layerNormBack adds ∂L/∂x to dx (accumulating, for the residual stream)
// and ∂L/∂g, ∂L/∂b to gg, gb, given dy = ∂L/∂y. With x̂ = (x − μ)·rs and
// d̂ = dy ⊙ g:
//
//	dx = rs·(d̂ − mean(d̂) − x̂·mean(d̂ ⊙ x̂)),  gg += Σ dy ⊙ x̂,  gb += Σ dy
func layerNormBack[F Float](x, dy []F, n, d int, g, mu, rs, dx, gg, gb []F) {
	xh := make([]F, d)
	dh := make([]F, d)
	for i := 0; i < n; i++ {
		row, dyr := x[i*d:(i+1)*d], dy[i*d:(i+1)*d]
		m, r := mu[i], rs[i]
		var s1, s2 float64
		for j, v := range row {
			xh[j] = (v - m) * r
			dh[j] = dyr[j] * g[j]
			s1 += float64(dh[j])
			s2 += float64(dh[j] * xh[j])
			gg[j] += dyr[j] * xh[j]
			gb[j] += dyr[j]
		}
		m1, m2 := F(s1/float64(d)), F(s2/float64(d))
		out := dx[i*d : (i+1)*d]
		for j := range out {
			out[j] += r * (dh[j] - m1 - xh[j]*m2)
		}
	}
}

// gelu is the exact GELU (Hendrycks & Gimpel 2016), PyTorch's nn.GELU():
// y = x·Φ(x) = ½x(1 + erf(x/√2)).
func gelu[F Float](x, y []F) {
	for i, v := range x {
		u := float64(v)
		y[i] = F(0.5 * u * (1 + math.Erf(u/math.Sqrt2)))
	}
}

// geluBack sets dx = dy·(Φ(x) + x·φ(x)), φ the standard normal density.
func geluBack[F Float](x, dy, dx []F) {
	const invSqrt2Pi = 0.3989422804014327
	for i, v := range x {
		u := float64(v)
		d := 0.5*(1+math.Erf(u/math.Sqrt2)) + u*invSqrt2Pi*math.Exp(-0.5*u*u)
		dx[i] = dy[i] * F(d)
	}
}

// logSoftmax writes the log-softmax of each of the n rows (width k) of z to
// out (which may be z) and returns nothing; the log-sum-exp is taken in
// float64 around the row maximum, so large logits do not overflow.
func logSoftmax[F Float](z []F, n, k int, out []F) {
	for i := 0; i < n; i++ {
		row := z[i*k : (i+1)*k]
		mx := row[0]
		for _, v := range row {
			mx = max(mx, v)
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(float64(v - mx))
		}
		lse := mx + F(math.Log(s))
		o := out[i*k : (i+1)*k]
		for j, v := range row {
			o[j] = v - lse
		}
	}
}

// entropy returns −Σ_j p_j log p_j of one row of log-probabilities.
func entropy[F Float](logp []F) F {
	h := 0.0
	for _, l := range logp {
		lf := float64(l)
		h -= math.Exp(lf) * lf
	}
	return F(h)
}

// categoricalBack writes ∂L/∂z for one row of logits z with log-softmax
// logp, entropy h and chosen column a, given wlp = ∂L/∂log p_a and went =
// ∂L/∂H:
//
//	∂L/∂z_j = wlp·(δ_ja − p_j) − went·p_j·(log p_j + H)
func categoricalBack[F Float](logp []F, h F, a int, wlp, went F, dz []F) {
	for j, l := range logp {
		p := F(math.Exp(float64(l)))
		dz[j] = -wlp*p - went*p*(l+h)
	}
	dz[a] += wlp
}

// parallelFor runs f(i) for i < n on up to GOMAXPROCS goroutines.
func parallelFor(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}
