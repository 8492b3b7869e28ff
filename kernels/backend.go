package kernels

import (
	"fmt"
	"math"
)

// Backend is the float32 compute interface of the new models (micro-VLA,
// pixel world model). Three implementations share it:
//
//   - [NewReference]: straightforward loops with float64 accumulation (GEMM
//     through gonum's float64 blas64.Gemm). Slow; the yardstick for parity
//     tests and gradient checks.
//   - [NewCPU]: packed, cache-blocked float32 GEMM with an AVX2/FMA
//     micro-kernel (pure Go on other CPUs and with -tags noasm), parallel over
//     cores, and float32 loops for the rest.
//   - [NewCUDA]: libcuda, cuBLAS and NVRTC loaded at run time (no cgo). Its
//     methods take host slices, copy them to the device, compute and copy the
//     results back.
//
// All matrices are row-major and dense (natural strides). Every method
// panics with a "kernels: " message when a slice is shorter than its shape
// requires; slices may be longer, and elements past the logical end are
// never read or written. Outputs may not alias inputs unless a method says
// so. A Backend is safe for use by one goroutine at a time.
//
// Each method's doc comment gives its reference semantics as a loop or a
// formula; implementations differ only by float32 rounding (summation order,
// fused multiply-adds, float32 accumulation).
type Backend interface {
	// Name identifies the implementation ("reference", "cpu-avx2", "cpu-go",
	// "cuda:<device>").
	Name() string

	// Gemm computes C = alpha*op(A)*op(B) + beta*C with op(A) m×k, op(B) k×n
	// and C m×n:
	//
	//	for i < m, j < n: C[i][j] = alpha * Σ_l op(A)[i][l]*op(B)[l][j] + beta*C[i][j]
	//
	// A is stored m×k (k×m when transA), B is stored k×n (n×k when transB),
	// each with its natural stride. With beta == 0, C is overwritten (NaNs in
	// C do not propagate). These are the semantics of the float64 matmul in
	// matmul.go.
	Gemm(transA, transB bool, m, n, k int, alpha float32, a, b []float32, beta float32, c []float32)

	// GemmStrided runs batch independent Gemms (attention's per-head
	// products):
	//
	//	for p < batch: C_p = alpha*op(A_p)*op(B_p) + beta*C_p
	//	A_p = a[p*strideA:], B_p = b[p*strideB:], C_p = c[p*strideC:]
	//
	// Strides are in elements; the C_p must not overlap.
	GemmStrided(transA, transB bool, m, n, k int, alpha float32, a []float32, strideA int,
		b []float32, strideB int, beta float32, c []float32, strideC int, batch int)

	// Conv2D computes a 2-D convolution (cross-correlation, as in PyTorch's
	// nn.Conv2d) of x (N×C×H×W) with w (K×C×R×S) plus bias (K, or nil),
	// into y (N×K×OH×OW), see [ConvGeom]:
	//
	//	y[n][k][oh][ow] = bias[k] + Σ_{c,r,s} w[k][c][r][s] * x[n][c][oh*SH+r-PH][ow*SW+s-PW]
	//
	// with x read as 0 outside the image (zero padding).
	Conv2D(g ConvGeom, x, w, bias, y []float32)

	// Conv2DBackward is the backward pass of Conv2D for the upstream
	// gradient dy (N×K×OH×OW). It accumulates the weight and bias gradients
	// and overwrites the input gradient:
	//
	//	dw[k][c][r][s] += Σ_{n,oh,ow} dy[n][k][oh][ow] * x[n][c][oh*SH+r-PH][ow*SW+s-PW]
	//	db[k]          += Σ_{n,oh,ow} dy[n][k][oh][ow]
	//	dx[n][c][h][w]  = Σ over (k,r,s,oh,ow) with oh*SH+r-PH = h, ow*SW+s-PW = w of dy[n][k][oh][ow]*w[k][c][r][s]
	//
	// Any of dx, dw, db may be nil to skip it.
	Conv2DBackward(g ConvGeom, x, w, dy, dx, dw, db []float32)

	// Softmax computes a numerically stable softmax of each row of x
	// (rows×cols) into y; y may alias x:
	//
	//	y[i][j] = exp(x[i][j] - max_l x[i][l]) / Σ_l exp(x[i][l] - max_l x[i][l])
	Softmax(rows, cols int, x, y []float32)

	// SoftmaxBackward overwrites dx with the gradient through Softmax given
	// its output y and the upstream gradient dy; dx may alias dy:
	//
	//	dx[i][j] = y[i][j] * (dy[i][j] - Σ_l dy[i][l]*y[i][l])
	SoftmaxBackward(rows, cols int, y, dy, dx []float32)

	// LayerNorm normalises each row of x (rows×cols) over its cols values
	// (Ba et al. 2016, "Layer Normalization", eq. 4) with gain gamma and bias
	// beta (each cols long), and saves the per-row statistics for the
	// backward pass in mean and rstd (each rows long):
	//
	//	μ_i = (1/cols) Σ_j x[i][j]
	//	σ²_i = (1/cols) Σ_j (x[i][j] - μ_i)²          (biased, as PyTorch)
	//	rstd_i = 1/sqrt(σ²_i + eps)
	//	y[i][j] = (x[i][j] - μ_i) * rstd_i * gamma[j] + beta[j]
	LayerNorm(rows, cols int, eps float32, x, gamma, beta, y, mean, rstd []float32)

	// LayerNormBackward overwrites dx and accumulates dgamma and dbeta, with
	// x̂[i][j] = (x[i][j] - μ_i) * rstd_i and g[i][j] = dy[i][j]*gamma[j]:
	//
	//	dx[i][j]   = rstd_i * (g[i][j] - mean_l g[i][l] - x̂[i][j] * mean_l g[i][l]*x̂[i][l])
	//	dgamma[j] += Σ_i dy[i][j] * x̂[i][j]
	//	dbeta[j]  += Σ_i dy[i][j]
	//
	// dgamma and dbeta may be nil to skip them.
	LayerNormBackward(rows, cols int, x, gamma, mean, rstd, dy, dx, dgamma, dbeta []float32)

	// Add sets dst[i] = x[i] + y[i] for i < len(dst); dst may alias x or y.
	Add(x, y, dst []float32)
	// Mul sets dst[i] = x[i] * y[i] for i < len(dst); dst may alias x or y.
	Mul(x, y, dst []float32)
	// Scale sets x[i] = alpha * x[i].
	Scale(alpha float32, x []float32)
	// Axpy sets y[i] = alpha*x[i] + y[i] for i < len(y).
	Axpy(alpha float32, x, y []float32)
	// AddBias adds the row vector bias (cols) to every row of x (rows×cols):
	// x[i][j] += bias[j].
	AddBias(rows, cols int, bias, x []float32)
	// SumRows accumulates the column sums of x (rows×cols) into dst (cols),
	// the bias gradient of AddBias: dst[j] += Σ_i x[i][j].
	SumRows(rows, cols int, x, dst []float32)
	// Sum returns Σ_i x[i] (accumulated in float64 by the CPU backends).
	Sum(x []float32) float32

	// ReLU sets y[i] = max(x[i], 0) for i < len(y); y may alias x.
	ReLU(x, y []float32)
	// ReLUBackward sets dx[i] = dy[i] if x[i] > 0 else 0; dx may alias dy.
	ReLUBackward(x, dy, dx []float32)
	// GELU sets y[i] = ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))) with x = x[i],
	// the tanh approximation of Hendrycks & Gimpel 2016, "Gaussian Error
	// Linear Units", §2 (PyTorch's approximate="tanh", GPT-2's gelu); y may
	// alias x.
	GELU(x, y []float32)
	// GELUBackward sets dx[i] = dy[i] * GELU'(x[i]), with
	// u = √(2/π)(x + 0.044715x³), t = tanh u:
	//
	//	GELU'(x) = ½(1 + t) + ½ x (1 - t²) √(2/π)(1 + 3·0.044715 x²)
	//
	// dx may alias dy.
	GELUBackward(x, dy, dx []float32)

	// AdamStep applies one Adam update (Kingma & Ba 2015, Algorithm 1, with
	// PyTorch's placement of eps, as the float64 [Adam]) to params from
	// grads, updating the moment estimates m and v in place; all four slices
	// have the same length and o.Step ≥ 1 counts steps from 1:
	//
	//	m_i ← β1 m_i + (1−β1) g_i
	//	v_i ← β2 v_i + (1−β2) g_i²
	//	p_i ← p_i − LR/(1−β1^Step) · m_i / (sqrt(v_i)/sqrt(1−β2^Step) + Eps)
	AdamStep(o AdamOptions, params, grads, m, v []float32)
}

// AdamOptions holds the hyper-parameters and step number of one
// [Backend.AdamStep] call.
type AdamOptions struct {
	LR, Beta1, Beta2, Eps float32
	// Step is the 1-based number of this step (the bias corrections use it).
	Step int
}

// adamCoefficients returns the step size LR/(1−β1^t) and sqrt(1−β2^t),
// computed in float64 so that every backend uses the same bias corrections.
func (o AdamOptions) adamCoefficients() (stepSize, sqrtBC2 float64) {
	if o.Step < 1 {
		panic(fmt.Sprintf("kernels: AdamStep: Step must be ≥ 1, got %d", o.Step))
	}
	bc1 := 1 - math.Pow(float64(o.Beta1), float64(o.Step))
	bc2 := 1 - math.Pow(float64(o.Beta2), float64(o.Step))
	return float64(o.LR) / bc1, math.Sqrt(bc2)
}

// ConvGeom is the geometry of a 2-D convolution in NCHW layout: N images of
// C channels, H×W pixels; K filters of C×R×S weights; strides SH, SW and zero
// padding PH, PW on each side. Output is N×K×OH()×OW().
type ConvGeom struct {
	N, C, H, W     int
	K, R, S        int
	SH, SW, PH, PW int
}

// OH returns the output height (H + 2PH − R)/SH + 1.
func (g ConvGeom) OH() int { return (g.H+2*g.PH-g.R)/g.SH + 1 }

// OW returns the output width (W + 2PW − S)/SW + 1.
func (g ConvGeom) OW() int { return (g.W+2*g.PW-g.S)/g.SW + 1 }

// XLen returns N·C·H·W, the number of inputs.
func (g ConvGeom) XLen() int { return g.N * g.C * g.H * g.W }

// WLen returns K·C·R·S, the number of weights.
func (g ConvGeom) WLen() int { return g.K * g.C * g.R * g.S }

// YLen returns N·K·OH·OW, the number of outputs.
func (g ConvGeom) YLen() int { return g.N * g.K * g.OH() * g.OW() }

// check panics unless the geometry is valid.
func (g ConvGeom) check(op string) {
	if g.N < 0 || g.C < 1 || g.H < 1 || g.W < 1 || g.K < 1 || g.R < 1 || g.S < 1 ||
		g.SH < 1 || g.SW < 1 || g.PH < 0 || g.PW < 0 || g.OH() < 1 || g.OW() < 1 {
		panic(fmt.Sprintf("kernels: %s: invalid geometry %+v", op, g))
	}
}

// backendCheckLen panics when any slice is shorter than its required length;
// pairs alternates slice lengths and requirements.
func backendCheckLen(op string, pairs ...int) {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i] < pairs[i+1] {
			panic(fmt.Sprintf("kernels: %s: operand %d has %d elements, want at least %d", op, i/2, pairs[i], pairs[i+1]))
		}
	}
}

// checkGemmArgs panics on a negative dimension or a short slice.
func checkGemmArgs(op string, m, n, k, la, lb, lc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("kernels: %s: negative dimension m=%d n=%d k=%d", op, m, n, k))
	}
	if m == 0 || n == 0 {
		return
	}
	if la < m*k || lb < k*n || lc < m*n {
		panic(fmt.Sprintf("kernels: %s: slice shorter than its matrix (a %d/%d, b %d/%d, c %d/%d)",
			op, la, m*k, lb, k*n, lc, m*n))
	}
}

// checkStrided panics when a strided batch does not fit its slices.
func checkStrided(op string, m, n, k, la, sa, lb, sb, lc, sc, batch int) {
	if batch < 0 || sa < 0 || sb < 0 || sc < 0 {
		panic(fmt.Sprintf("kernels: %s: negative batch or stride", op))
	}
	if batch == 0 || m == 0 || n == 0 {
		return
	}
	if sc < m*n && batch > 1 {
		panic(fmt.Sprintf("kernels: %s: strideC %d < m*n %d makes the outputs overlap", op, sc, m*n))
	}
	checkGemmArgs(op, m, n, k, la-(batch-1)*sa, lb-(batch-1)*sb, lc-(batch-1)*sc)
}
