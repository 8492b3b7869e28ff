package kernels

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// referenceBackend evaluates every [Backend] method by its defining loop,
// accumulating in float64 and rounding to float32 once per output. GEMMs
// convert to float64 and call gonum's blas64.Gemm, the same code path as the
// float64 models.
type referenceBackend struct{}

var _ Backend = referenceBackend{}

// NewReference returns the reference [Backend]: float64 loops, slow, for
// parity tests and gradient checks.
func NewReference() Backend { return referenceBackend{} }

func (referenceBackend) Name() string { return "reference" }

func toF64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

func (r referenceBackend) Gemm(transA, transB bool, m, n, k int, alpha float32, a, b []float32, beta float32, c []float32) {
	checkGemmArgs("Reference.Gemm", m, n, k, len(a), len(b), len(c))
	refGemm(transA, transB, m, n, k, alpha, a, b, beta, c)
}

func refGemm(transA, transB bool, m, n, k int, alpha float32, a, b []float32, beta float32, c []float32) {
	if m == 0 || n == 0 {
		return
	}
	c64 := make([]float64, m*n)
	if beta != 0 {
		for i := range c64 {
			c64[i] = float64(c[i])
		}
	}
	if k > 0 {
		ga := blas64.General{Rows: m, Cols: k, Stride: max(k, 1), Data: toF64(a[:m*k])}
		ta := blas.NoTrans
		if transA {
			ga = blas64.General{Rows: k, Cols: m, Stride: m, Data: ga.Data}
			ta = blas.Trans
		}
		gb := blas64.General{Rows: k, Cols: n, Stride: n, Data: toF64(b[:k*n])}
		tb := blas.NoTrans
		if transB {
			gb = blas64.General{Rows: n, Cols: k, Stride: k, Data: gb.Data}
			tb = blas.Trans
		}
		blas64.Gemm(ta, tb, float64(alpha), ga, gb, float64(beta), blas64.General{Rows: m, Cols: n, Stride: n, Data: c64})
	} else {
		for i := range c64 {
			c64[i] *= float64(beta)
		}
	}
	for i, v := range c64 {
		c[i] = float32(v)
	}
}

func (r referenceBackend) GemmStrided(transA, transB bool, m, n, k int, alpha float32, a []float32, strideA int,
	b []float32, strideB int, beta float32, c []float32, strideC int, batch int) {
	checkStrided("Reference.GemmStrided", m, n, k, len(a), strideA, len(b), strideB, len(c), strideC, batch)
	if m == 0 || n == 0 {
		return
	}
	for p := 0; p < batch; p++ {
		refGemm(transA, transB, m, n, k, alpha, a[p*strideA:], b[p*strideB:], beta, c[p*strideC:])
	}
}

func (referenceBackend) Conv2D(g ConvGeom, x, w, bias, y []float32) {
	g.check("Reference.Conv2D")
	backendCheckLen("Reference.Conv2D", len(x), g.XLen(), len(w), g.WLen(), len(y), g.YLen())
	if bias != nil {
		backendCheckLen("Reference.Conv2D", len(bias), g.K)
	}
	oh, ow := g.OH(), g.OW()
	for n := 0; n < g.N; n++ {
		for k := 0; k < g.K; k++ {
			for i := 0; i < oh; i++ {
				for j := 0; j < ow; j++ {
					s := 0.0
					if bias != nil {
						s = float64(bias[k])
					}
					for c := 0; c < g.C; c++ {
						for r := 0; r < g.R; r++ {
							h := i*g.SH + r - g.PH
							if h < 0 || h >= g.H {
								continue
							}
							for q := 0; q < g.S; q++ {
								v := j*g.SW + q - g.PW
								if v < 0 || v >= g.W {
									continue
								}
								s += float64(w[((k*g.C+c)*g.R+r)*g.S+q]) * float64(x[((n*g.C+c)*g.H+h)*g.W+v])
							}
						}
					}
					y[((n*g.K+k)*oh+i)*ow+j] = float32(s)
				}
			}
		}
	}
}

func (referenceBackend) Conv2DBackward(g ConvGeom, x, w, dy, dx, dw, db []float32) {
	g.check("Reference.Conv2DBackward")
	backendCheckLen("Reference.Conv2DBackward", len(x), g.XLen(), len(w), g.WLen(), len(dy), g.YLen())
	oh, ow := g.OH(), g.OW()
	if db != nil {
		backendCheckLen("Reference.Conv2DBackward", len(db), g.K)
		for k := 0; k < g.K; k++ {
			s := 0.0
			for n := 0; n < g.N; n++ {
				for _, v := range dy[(n*g.K+k)*oh*ow : (n*g.K+k+1)*oh*ow] {
					s += float64(v)
				}
			}
			db[k] += float32(s)
		}
	}
	// Accumulate dx and dw in float64, then round once.
	var dx64, dw64 []float64
	if dx != nil {
		backendCheckLen("Reference.Conv2DBackward", len(dx), g.XLen())
		dx64 = make([]float64, g.XLen())
	}
	if dw != nil {
		backendCheckLen("Reference.Conv2DBackward", len(dw), g.WLen())
		dw64 = make([]float64, g.WLen())
	}
	for n := 0; n < g.N; n++ {
		for k := 0; k < g.K; k++ {
			for i := 0; i < oh; i++ {
				for j := 0; j < ow; j++ {
					d := float64(dy[((n*g.K+k)*oh+i)*ow+j])
					for c := 0; c < g.C; c++ {
						for r := 0; r < g.R; r++ {
							h := i*g.SH + r - g.PH
							if h < 0 || h >= g.H {
								continue
							}
							for q := 0; q < g.S; q++ {
								v := j*g.SW + q - g.PW
								if v < 0 || v >= g.W {
									continue
								}
								wi := ((k*g.C+c)*g.R+r)*g.S + q
								xi := ((n*g.C+c)*g.H+h)*g.W + v
								if dw64 != nil {
									dw64[wi] += d * float64(x[xi])
								}
								if dx64 != nil {
									dx64[xi] += d * float64(w[wi])
								}
							}
						}
					}
				}
			}
		}
	}
	for i, v := range dx64 {
		dx[i] = float32(v)
	}
	for i, v := range dw64 {
		dw[i] += float32(v)
	}
}

func (referenceBackend) Softmax(rows, cols int, x, y []float32) {
	backendCheckLen("Reference.Softmax", len(x), rows*cols, len(y), rows*cols)
	for i := 0; i < rows; i++ {
		xr, yr := x[i*cols:(i+1)*cols], y[i*cols:(i+1)*cols]
		mx := math.Inf(-1)
		for _, v := range xr {
			mx = math.Max(mx, float64(v))
		}
		s := 0.0
		for _, v := range xr {
			s += math.Exp(float64(v) - mx)
		}
		for j, v := range xr {
			yr[j] = float32(math.Exp(float64(v)-mx) / s)
		}
	}
}

func (referenceBackend) SoftmaxBackward(rows, cols int, y, dy, dx []float32) {
	backendCheckLen("Reference.SoftmaxBackward", len(y), rows*cols, len(dy), rows*cols, len(dx), rows*cols)
	for i := 0; i < rows; i++ {
		yr, dyr, dxr := y[i*cols:(i+1)*cols], dy[i*cols:(i+1)*cols], dx[i*cols:(i+1)*cols]
		s := 0.0
		for j := range yr {
			s += float64(dyr[j]) * float64(yr[j])
		}
		for j := range yr {
			dxr[j] = float32(float64(yr[j]) * (float64(dyr[j]) - s))
		}
	}
}

func (referenceBackend) LayerNorm(rows, cols int, eps float32, x, gamma, beta, y, mean, rstd []float32) {
	backendCheckLen("Reference.LayerNorm", len(x), rows*cols, len(gamma), cols, len(beta), cols,
		len(y), rows*cols, len(mean), rows, len(rstd), rows)
	for i := 0; i < rows; i++ {
		xr, yr := x[i*cols:(i+1)*cols], y[i*cols:(i+1)*cols]
		mu := 0.0
		for _, v := range xr {
			mu += float64(v)
		}
		mu /= float64(cols)
		vr := 0.0
		for _, v := range xr {
			d := float64(v) - mu
			vr += d * d
		}
		vr /= float64(cols)
		rs := 1 / math.Sqrt(vr+float64(eps))
		for j, v := range xr {
			yr[j] = float32((float64(v)-mu)*rs*float64(gamma[j]) + float64(beta[j]))
		}
		mean[i], rstd[i] = float32(mu), float32(rs)
	}
}

func (referenceBackend) LayerNormBackward(rows, cols int, x, gamma, mean, rstd, dy, dx, dgamma, dbeta []float32) {
	backendCheckLen("Reference.LayerNormBackward", len(x), rows*cols, len(gamma), cols, len(mean), rows,
		len(rstd), rows, len(dy), rows*cols, len(dx), rows*cols)
	var dg, dbt []float64
	if dgamma != nil {
		backendCheckLen("Reference.LayerNormBackward", len(dgamma), cols)
		dg = make([]float64, cols)
	}
	if dbeta != nil {
		backendCheckLen("Reference.LayerNormBackward", len(dbeta), cols)
		dbt = make([]float64, cols)
	}
	for i := 0; i < rows; i++ {
		xr, dyr, dxr := x[i*cols:(i+1)*cols], dy[i*cols:(i+1)*cols], dx[i*cols:(i+1)*cols]
		mu, rs := float64(mean[i]), float64(rstd[i])
		sg, sgx := 0.0, 0.0
		for j := range xr {
			xh := (float64(xr[j]) - mu) * rs
			g := float64(dyr[j]) * float64(gamma[j])
			sg += g
			sgx += g * xh
			if dg != nil {
				dg[j] += float64(dyr[j]) * xh
			}
			if dbt != nil {
				dbt[j] += float64(dyr[j])
			}
		}
		sg /= float64(cols)
		sgx /= float64(cols)
		for j := range xr {
			xh := (float64(xr[j]) - mu) * rs
			g := float64(dyr[j]) * float64(gamma[j])
			dxr[j] = float32(rs * (g - sg - xh*sgx))
		}
	}
	for j, v := range dg {
		dgamma[j] += float32(v)
	}
	for j, v := range dbt {
		dbeta[j] += float32(v)
	}
}

func (referenceBackend) Add(x, y, dst []float32) {
	backendCheckLen("Reference.Add", len(x), len(dst), len(y), len(dst))
	for i := range dst {
		dst[i] = float32(float64(x[i]) + float64(y[i]))
	}
}

func (referenceBackend) Mul(x, y, dst []float32) {
	backendCheckLen("Reference.Mul", len(x), len(dst), len(y), len(dst))
	for i := range dst {
		dst[i] = float32(float64(x[i]) * float64(y[i]))
	}
}

func (referenceBackend) Scale(alpha float32, x []float32) {
	for i := range x {
		x[i] = float32(float64(alpha) * float64(x[i]))
	}
}

func (referenceBackend) Axpy(alpha float32, x, y []float32) {
	backendCheckLen("Reference.Axpy", len(x), len(y))
	for i := range y {
		y[i] = float32(float64(alpha)*float64(x[i]) + float64(y[i]))
	}
}

func (referenceBackend) AddBias(rows, cols int, bias, x []float32) {
	backendCheckLen("Reference.AddBias", len(bias), cols, len(x), rows*cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			x[i*cols+j] = float32(float64(x[i*cols+j]) + float64(bias[j]))
		}
	}
}

func (referenceBackend) SumRows(rows, cols int, x, dst []float32) {
	backendCheckLen("Reference.SumRows", len(x), rows*cols, len(dst), cols)
	for j := 0; j < cols; j++ {
		s := float64(dst[j])
		for i := 0; i < rows; i++ {
			s += float64(x[i*cols+j])
		}
		dst[j] = float32(s)
	}
}

func (referenceBackend) Sum(x []float32) float32 {
	s := 0.0
	for _, v := range x {
		s += float64(v)
	}
	return float32(s)
}

func (referenceBackend) ReLU(x, y []float32) {
	backendCheckLen("Reference.ReLU", len(x), len(y))
	for i := range y {
		y[i] = max(x[i], 0)
	}
}

func (referenceBackend) ReLUBackward(x, dy, dx []float32) {
	backendCheckLen("Reference.ReLUBackward", len(x), len(dx), len(dy), len(dx))
	for i := range dx {
		if x[i] > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
}

// geluC is √(2/π) and geluA the cubic coefficient of the tanh GELU.
const (
	geluC = 0.7978845608028654
	geluA = 0.044715
)

func (referenceBackend) GELU(x, y []float32) {
	backendCheckLen("Reference.GELU", len(x), len(y))
	for i := range y {
		v := float64(x[i])
		y[i] = float32(0.5 * v * (1 + math.Tanh(geluC*(v+geluA*v*v*v))))
	}
}

func (referenceBackend) GELUBackward(x, dy, dx []float32) {
	backendCheckLen("Reference.GELUBackward", len(x), len(dx), len(dy), len(dx))
	for i := range dx {
		v := float64(x[i])
		t := math.Tanh(geluC * (v + geluA*v*v*v))
		d := 0.5*(1+t) + 0.5*v*(1-t*t)*geluC*(1+3*geluA*v*v)
		dx[i] = float32(float64(dy[i]) * d)
	}
}

func (referenceBackend) AdamStep(o AdamOptions, params, grads, m, v []float32) {
	n := len(params)
	if len(grads) != n || len(m) != n || len(v) != n {
		backendCheckLen("Reference.AdamStep", n, len(grads), n, len(m), n, len(v), len(grads), n, len(m), n, len(v), n)
	}
	stepSize, sqrtBC2 := o.adamCoefficients()
	b1, b2, eps := float64(o.Beta1), float64(o.Beta2), float64(o.Eps)
	for i := range params {
		g := float64(grads[i])
		mi := b1*float64(m[i]) + (1-b1)*g
		vi := b2*float64(v[i]) + (1-b2)*g*g
		m[i], v[i] = float32(mi), float32(vi)
		params[i] = float32(float64(params[i]) - stepSize*mi/(math.Sqrt(vi)/sqrtBC2+eps))
	}
}
