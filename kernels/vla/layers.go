package vla

import (
	"math"
	"runtime"
	"sync"

	"github.com/accerl/accerl/kernels"
)

// lnEps is the layer-norm epsilon (PyTorch's nn.LayerNorm default).
const lnEps = 1e-5

// linear computes y = x·Wᵀ + b for n rows: x n×in, W out×in, b out (nil
// for none), y n×out. be is the float32 backend (nil: pure Go, see matmul).
func linear[F Float](be kernels.Backend, x []F, n, in, out int, w, b, y []F) {
	matmul(be, false, true, n, out, in, 1, x, w, 0, y)
	if b != nil {
		parallelRange(n, rowGrain(out), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				row := y[i*out : (i+1)*out]
				for j := range row {
					row[j] += b[j]
				}
			}
		})
	}
}

// linearBack is linear's backward pass: gW += dyᵀ·x, gb += Σ_rows dy, and
// dx = dy·W (overwritten; skipped when dx is nil). gW and gb may be nil
// (frozen weights).
func linearBack[F Float](be kernels.Backend, x, dy []F, n, in, out int, w, gw, gb, dx []F) {
	if gw != nil {
		matmul(be, true, false, out, in, n, 1, dy, x, 1, gw)
	}
	if gb != nil {
		colSum(dy, n, out, gb)
	}
	if dx != nil {
		matmul(be, false, false, n, in, out, 1, dy, w, 0, dx)
	}
}

// colSum adds the column sums of the n×d matrix x to s, split over
// goroutines by columns (each sums its columns over all rows, so no
// partial sums need merging and the order of addition is fixed).
func colSum[F Float](x []F, n, d int, s []F) {
	cols := 1
	if n*d >= parGrain {
		cols = d
	}
	parallelRange(cols, 1, func(lo, hi int) {
		if cols == 1 {
			lo, hi = 0, d
		}
		acc := s[lo:hi]
		for i := 0; i < n; i++ {
			for j, v := range x[i*d+lo : i*d+hi] {
				acc[j] += v
			}
		}
	})
}

// layerNorm normalises each of the n rows of x (width d) and applies the
// gain and bias (Ba et al. 2016, "Layer Normalization"):
//
//	μ = mean(x), rs = 1/sqrt(var(x) + 1e-5), y = (x − μ)·rs·g + b
//
// with the biased variance; it keeps μ and rs per row for the backward
// pass. Statistics accumulate in float64.
func layerNorm[F Float](x []F, n, d int, g, b, y, mu, rs []F) {
	parallelRange(n, rowGrain(d), func(lo, hi int) {
		for i := lo; i < hi; i++ {
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
	})
}

// layerNormBack adds ∂L/∂x to dx (accumulating, for the residual stream)
// and ∂L/∂g, ∂L/∂b to gg, gb, given dy = ∂L/∂y. With x̂ = (x − μ)·rs and
// d̂ = dy ⊙ g:
//
//	dx = rs·(d̂ − mean(d̂) − x̂·mean(d̂ ⊙ x̂)),  gg += Σ dy ⊙ x̂,  gb += Σ dy
//
// dx is computed split by rows, gg and gb in a second pass split by
// columns.
func layerNormBack[F Float](x, dy []F, n, d int, g, mu, rs, dx, gg, gb []F) {
	parallelRange(n, rowGrain(d), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row, dyr := x[i*d:(i+1)*d], dy[i*d:(i+1)*d]
			m, r := mu[i], rs[i]
			var s1, s2 float64
			for j, v := range row {
				xh := (v - m) * r
				dh := dyr[j] * g[j]
				s1 += float64(dh)
				s2 += float64(dh * xh)
			}
			m1, m2 := F(s1/float64(d)), F(s2/float64(d))
			out := dx[i*d : (i+1)*d]
			for j, v := range row {
				xh := (v - m) * r
				out[j] += r * (dyr[j]*g[j] - m1 - xh*m2)
			}
		}
	})
	cols := 1
	if n*d >= parGrain {
		cols = d
	}
	parallelRange(cols, 1, func(lo, hi int) {
		if cols == 1 {
			lo, hi = 0, d
		}
		ggs, gbs := gg[lo:hi], gb[lo:hi]
		for i := 0; i < n; i++ {
			m, r := mu[i], rs[i]
			row, dyr := x[i*d+lo:i*d+hi], dy[i*d+lo:i*d+hi]
			for j, v := range row {
				ggs[j] += dyr[j] * ((v - m) * r)
				gbs[j] += dyr[j]
			}
		}
	})
}

// gelu is the exact GELU (Hendrycks & Gimpel 2016), PyTorch's nn.GELU():
// y = x·Φ(x) = ½x(1 + erf(x/√2)); the float32 model evaluates Φ with
// phi32 (relative error ≲ 1.2e-7), the float64 one with math.Erf.
func gelu[F Float](x, y []F) {
	parallelRange(len(x), parGrain, func(lo, hi int) {
		if isF32[F]() {
			for i, v := range x[lo:hi] {
				y[lo+i] = F(gelu32(float32(v)))
			}
			return
		}
		for i, v := range x[lo:hi] {
			u := float64(v)
			y[lo+i] = F(0.5 * u * (1 + math.Erf(u/math.Sqrt2)))
		}
	})
}

// geluBack sets dx = dy·(Φ(x) + x·φ(x)), φ the standard normal density,
// given the forward output y = gelu(x); dx may be dy. The float32 model
// recovers Φ(x) as y/x (exact to float32 rounding, ≲ 1.2e-7 relative:
// y = x·Φ(x) was rounded once), which leaves one exponential per element
// instead of the error function as well; the float64 model evaluates
// math.Erf.
func geluBack[F Float](x, y, dy, dx []F) {
	const invSqrt2Pi = 0.3989422804014327
	parallelRange(len(x), parGrain, func(lo, hi int) {
		if isF32[F]() {
			xs, ys, dys, dxs := as32(x[lo:hi]), as32(y[lo:hi]), as32(dy[lo:hi]), as32(dx[lo:hi])
			ys, dys, dxs = ys[:len(xs)], dys[:len(xs)], dxs[:len(xs)]
			for i, v := range xs {
				dxs[i] = dys[i] * geluGradFromOutput32(v, ys[i])
			}
			return
		}
		for i, v := range x[lo:hi] {
			u := float64(v)
			d := 0.5*(1+math.Erf(u/math.Sqrt2)) + u*invSqrt2Pi*math.Exp(-0.5*u*u)
			dx[lo+i] = dy[lo+i] * F(d)
		}
	})
}

// logSoftmax writes the log-softmax of each of the n rows (width k) of z to
// out (which may be z); the log-sum-exp is taken in float64 around the row
// maximum, so large logits do not overflow.
func logSoftmax[F Float](z []F, n, k int, out []F) {
	parallelRange(n, rowGrain(k), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := z[i*k : (i+1)*k]
			mx := row[0]
			for _, v := range row {
				mx = max(mx, v)
			}
			s := 0.0
			if isF32[F]() {
				s = sumExpNeg32(as32(row), float32(mx))
			} else {
				for _, v := range row {
					s += float64(expNeg(v - mx))
				}
			}
			lse := mx + F(math.Log(s))
			o := out[i*k : (i+1)*k]
			for j, v := range row {
				o[j] = v - lse
			}
		}
	})
}

// entropy returns −Σ_j p_j log p_j of one row of log-probabilities.
func entropy[F Float](logp []F) F {
	if isF32[F]() {
		return F(entropy32(as32(logp)))
	}
	h := 0.0
	for _, l := range logp {
		h -= float64(expNeg(l) * l)
	}
	return F(h)
}

// categoricalBack writes ∂L/∂z for one row of logits z with log-softmax
// logp, entropy h and chosen column a, given wlp = ∂L/∂log p_a and went =
// ∂L/∂H:
//
//	∂L/∂z_j = wlp·(δ_ja − p_j) − went·p_j·(log p_j + H)
func categoricalBack[F Float](logp []F, h F, a int, wlp, went F, dz []F) {
	if isF32[F]() {
		lp, d := as32(logp), as32(dz[:len(logp)])
		w1, w2, hh := float32(wlp), float32(went), float32(h)
		for j, l := range lp {
			p := expNeg32(l)
			d[j] = -w1*p - w2*p*(l+hh)
		}
	} else {
		for j, l := range logp {
			p := expNeg(l)
			dz[j] = -wlp*p - went*p*(l+h)
		}
	}
	dz[a] += wlp
}

// parGrain is the number of element operations from which a loop is split
// over goroutines: below it, starting them (≈1 µs each) costs more than
// the work.
const parGrain = 1 << 15

// rowGrain is the number of rows of width w that make up parGrain elements
// (at least 1).
func rowGrain(w int) int { return max(1, parGrain/max(w, 1)) }

// parallelRange calls f on consecutive pieces [lo, hi) that cover [0, n),
// one per goroutine on up to GOMAXPROCS goroutines, each piece at least
// grain long; with n < 2·grain it calls f(0, n) on the calling goroutine.
func parallelRange(n, grain int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n/max(grain, 1))
	if workers <= 1 {
		if n > 0 {
			f(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		if w == workers-1 {
			f(lo, hi) // the calling goroutine takes the last piece
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
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
