package kernels

import (
	"math"
	"runtime"
	"sync"
)

// cpuBackend is the float32 CPU [Backend]: the packed GEMM of gemm_f32.go
// with the best micro-kernel this CPU runs (AVX2/FMA assembly, else pure
// Go), a worker pool for GEMMs of more than about a million flops, and
// float32 loops for everything else, with reductions accumulated in float64.
type cpuBackend struct {
	threads int
	kernel  gemmKernel
	name    string
	pool    *gemmPool // nil when threads == 1
	// minParallel is the GEMM size (flops) from which the pool is used;
	// gemmSerialFlops, lowered by tests to exercise the parallel split.
	minParallel float64

	// State of the call in progress; a Backend serves one goroutine at a
	// time, so one copy suffices and no call allocates.
	args gemmArgs
	wg   sync.WaitGroup
	ws   *gemmWorkspace // packing buffers of the calling goroutine
	col  []float32      // im2col buffer of Conv2D, grown on demand
	dcol []float32      // col2im buffer of Conv2DBackward
}

var _ Backend = (*cpuBackend)(nil)

// NewCPU returns the float32 CPU [Backend] running its GEMMs on threads
// goroutines (threads ≤ 0: GOMAXPROCS). With threads == 1 everything runs
// on the calling goroutine. Its micro-kernel is AVX2/FMA assembly on amd64
// CPUs that have both (Name "cpu-avx2"), else pure Go ("cpu-go"; always with
// -tags noasm). The worker goroutines exit once the backend is unreachable.
func NewCPU(threads int) Backend {
	if threads <= 0 {
		threads = defaultThreads()
	}
	b := &cpuBackend{threads: threads, kernel: gemmKernelGo, name: "cpu-go", ws: newGemmWorkspace(), minParallel: gemmSerialFlops}
	if gemmHaveAsm {
		b.kernel, b.name = gemmKernelAsm, "cpu-avx2"
	}
	if threads > 1 {
		b.pool = newGemmPool(threads)
		runtime.AddCleanup(b, func(tasks chan gemmTask) { close(tasks) }, b.pool.tasks)
	}
	return b
}

func (b *cpuBackend) Name() string { return b.name }

func (b *cpuBackend) Gemm(transA, transB bool, m, n, k int, alpha float32, a, bm []float32, beta float32, c []float32) {
	checkGemmArgs("CPU.Gemm", m, n, k, len(a), len(bm), len(c))
	if m == 0 || n == 0 {
		return
	}
	b.args = gemmArgs{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, b: bm, c: c, kernel: b.kernel}
	b.run(1)
}

func (b *cpuBackend) GemmStrided(transA, transB bool, m, n, k int, alpha float32, a []float32, strideA int,
	bm []float32, strideB int, beta float32, c []float32, strideC int, batch int) {
	checkStrided("CPU.GemmStrided", m, n, k, len(a), strideA, len(bm), strideB, len(c), strideC, batch)
	if m == 0 || n == 0 || batch == 0 {
		return
	}
	b.args = gemmArgs{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, b: bm, c: c, sa: strideA, sb: strideB, sc: strideC, kernel: b.kernel}
	b.run(batch)
}

// run executes b.args for batch problems, on the calling goroutine when the
// work is small or threads == 1, else split over the pool: whole problems
// when the batch alone fills the workers, otherwise a gemmGrid of blocks per
// problem.
func (b *cpuBackend) run(batch int) {
	g := &b.args
	flops := 2 * float64(g.m) * float64(g.n) * float64(g.k) * float64(batch)
	if b.pool == nil || flops < b.minParallel {
		for p := 0; p < batch; p++ {
			gemmTask{args: g, p: p, i1: g.m, j1: g.n}.run(b.ws)
		}
		return
	}
	pm, pn := 1, 1
	if batch < b.threads {
		pm, pn = gemmGrid(g.m, g.n, g.k, (b.threads+batch-1)/batch)
	}
	b.wg.Add(batch * pm * pn)
	for p := 0; p < batch; p++ {
		for i := 0; i < pm; i++ {
			i0, i1 := gemmSplit(g.m, gemmMR, pm, i), gemmSplit(g.m, gemmMR, pm, i+1)
			for j := 0; j < pn; j++ {
				j0, j1 := gemmSplit(g.n, gemmNR, pn, j), gemmSplit(g.n, gemmNR, pn, j+1)
				if i0 == i1 || j0 == j1 {
					b.wg.Done()
					continue
				}
				b.pool.tasks <- gemmTask{args: g, p: p, i0: i0, i1: i1, j0: j0, j1: j1, wg: &b.wg}
			}
		}
	}
	b.wg.Wait()
	b.args = gemmArgs{} // drop references to the caller's slices
}

// cpuGrow returns buf resized to n elements, reallocating only when it is too
// short.
func cpuGrow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// im2col writes the columns of image x (C×H×W) for geometry g into col
// ((C·R·S) × (OH·OW)): col[(c*R+r)*S+s][oh*OW+ow] = x[c][oh*SH+r-PH][ow*SW+s-PW],
// 0 outside the image.
func im2col(g ConvGeom, x, col []float32) {
	oh, ow := g.OH(), g.OW()
	p := oh * ow
	for c := 0; c < g.C; c++ {
		xc := x[c*g.H*g.W : (c+1)*g.H*g.W]
		for r := 0; r < g.R; r++ {
			for s := 0; s < g.S; s++ {
				row := col[((c*g.R+r)*g.S+s)*p : ((c*g.R+r)*g.S+s+1)*p]
				for i := 0; i < oh; i++ {
					h := i*g.SH + r - g.PH
					dst := row[i*ow : (i+1)*ow]
					if h < 0 || h >= g.H {
						clear(dst)
						continue
					}
					src := xc[h*g.W : (h+1)*g.W]
					for j := range dst {
						if v := j*g.SW + s - g.PW; v >= 0 && v < g.W {
							dst[j] = src[v]
						} else {
							dst[j] = 0
						}
					}
				}
			}
		}
	}
}

// col2im adds the columns col (as im2col lays them out) back into image dx
// (C×H×W), which it first clears.
func col2im(g ConvGeom, col, dx []float32) {
	clear(dx[:g.C*g.H*g.W])
	oh, ow := g.OH(), g.OW()
	p := oh * ow
	for c := 0; c < g.C; c++ {
		xc := dx[c*g.H*g.W : (c+1)*g.H*g.W]
		for r := 0; r < g.R; r++ {
			for s := 0; s < g.S; s++ {
				row := col[((c*g.R+r)*g.S+s)*p : ((c*g.R+r)*g.S+s+1)*p]
				for i := 0; i < oh; i++ {
					h := i*g.SH + r - g.PH
					if h < 0 || h >= g.H {
						continue
					}
					dst := xc[h*g.W : (h+1)*g.W]
					for j, v := range row[i*ow : (i+1)*ow] {
						if w := j*g.SW + s - g.PW; w >= 0 && w < g.W {
							dst[w] += v
						}
					}
				}
			}
		}
	}
}

// Conv2D lowers each image to a (C·R·S)×(OH·OW) column matrix (im2col;
// Chellapilla et al. 2006, "High Performance Convolutional Neural Networks
// for Document Processing") and multiplies it by the K×(C·R·S) weights.
func (b *cpuBackend) Conv2D(g ConvGeom, x, w, bias, y []float32) {
	g.check("CPU.Conv2D")
	backendCheckLen("CPU.Conv2D", len(x), g.XLen(), len(w), g.WLen(), len(y), g.YLen())
	if bias != nil {
		backendCheckLen("CPU.Conv2D", len(bias), g.K)
	}
	crs, p := g.C*g.R*g.S, g.OH()*g.OW()
	b.col = cpuGrow(b.col, crs*p)
	for n := 0; n < g.N; n++ {
		im2col(g, x[n*g.C*g.H*g.W:], b.col)
		yn := y[n*g.K*p : (n+1)*g.K*p]
		b.Gemm(false, false, g.K, p, crs, 1, w, b.col, 0, yn)
		if bias != nil {
			for k := 0; k < g.K; k++ {
				row := yn[k*p : (k+1)*p]
				for j := range row {
					row[j] += bias[k]
				}
			}
		}
	}
}

func (b *cpuBackend) Conv2DBackward(g ConvGeom, x, w, dy, dx, dw, db []float32) {
	g.check("CPU.Conv2DBackward")
	backendCheckLen("CPU.Conv2DBackward", len(x), g.XLen(), len(w), g.WLen(), len(dy), g.YLen())
	if dx != nil {
		backendCheckLen("CPU.Conv2DBackward", len(dx), g.XLen())
	}
	if dw != nil {
		backendCheckLen("CPU.Conv2DBackward", len(dw), g.WLen())
	}
	if db != nil {
		backendCheckLen("CPU.Conv2DBackward", len(db), g.K)
	}
	crs, p := g.C*g.R*g.S, g.OH()*g.OW()
	img := g.C * g.H * g.W
	if dw != nil {
		b.col = cpuGrow(b.col, crs*p)
	}
	if dx != nil {
		b.dcol = cpuGrow(b.dcol, crs*p)
	}
	for n := 0; n < g.N; n++ {
		dyn := dy[n*g.K*p : (n+1)*g.K*p]
		if db != nil {
			for k := 0; k < g.K; k++ {
				s := 0.0
				for _, v := range dyn[k*p : (k+1)*p] {
					s += float64(v)
				}
				db[k] += float32(s)
			}
		}
		if dw != nil {
			im2col(g, x[n*img:], b.col)
			b.Gemm(false, true, g.K, crs, p, 1, dyn, b.col, 1, dw)
		}
		if dx != nil {
			b.Gemm(true, false, crs, p, g.K, 1, w, dyn, 0, b.dcol)
			col2im(g, b.dcol, dx[n*img:])
		}
	}
}

func (b *cpuBackend) Softmax(rows, cols int, x, y []float32) {
	backendCheckLen("CPU.Softmax", len(x), rows*cols, len(y), rows*cols)
	for i := 0; i < rows; i++ {
		xr, yr := x[i*cols:(i+1)*cols], y[i*cols:(i+1)*cols]
		mx := float32(math.Inf(-1))
		for _, v := range xr {
			mx = max(mx, v)
		}
		s := 0.0
		for j, v := range xr {
			e := float32(math.Exp(float64(v - mx)))
			yr[j] = e
			s += float64(e)
		}
		inv := float32(1 / s)
		for j := range yr {
			yr[j] *= inv
		}
	}
}

func (b *cpuBackend) SoftmaxBackward(rows, cols int, y, dy, dx []float32) {
	backendCheckLen("CPU.SoftmaxBackward", len(y), rows*cols, len(dy), rows*cols, len(dx), rows*cols)
	for i := 0; i < rows; i++ {
		yr, dyr, dxr := y[i*cols:(i+1)*cols], dy[i*cols:(i+1)*cols], dx[i*cols:(i+1)*cols]
		s := 0.0
		for j := range yr {
			s += float64(dyr[j] * yr[j])
		}
		sf := float32(s)
		for j := range yr {
			dxr[j] = yr[j] * (dyr[j] - sf)
		}
	}
}

func (b *cpuBackend) LayerNorm(rows, cols int, eps float32, x, gamma, beta, y, mean, rstd []float32) {
	backendCheckLen("CPU.LayerNorm", len(x), rows*cols, len(gamma), cols, len(beta), cols,
		len(y), rows*cols, len(mean), rows, len(rstd), rows)
	for i := 0; i < rows; i++ {
		xr, yr := x[i*cols:(i+1)*cols], y[i*cols:(i+1)*cols]
		s := 0.0
		for _, v := range xr {
			s += float64(v)
		}
		mu := float32(s / float64(cols))
		s = 0
		for _, v := range xr {
			d := v - mu
			s += float64(d * d)
		}
		rs := float32(1 / math.Sqrt(s/float64(cols)+float64(eps)))
		for j, v := range xr {
			yr[j] = (v-mu)*rs*gamma[j] + beta[j]
		}
		mean[i], rstd[i] = mu, rs
	}
}

func (b *cpuBackend) LayerNormBackward(rows, cols int, x, gamma, mean, rstd, dy, dx, dgamma, dbeta []float32) {
	backendCheckLen("CPU.LayerNormBackward", len(x), rows*cols, len(gamma), cols, len(mean), rows,
		len(rstd), rows, len(dy), rows*cols, len(dx), rows*cols)
	if dgamma != nil {
		backendCheckLen("CPU.LayerNormBackward", len(dgamma), cols)
	}
	if dbeta != nil {
		backendCheckLen("CPU.LayerNormBackward", len(dbeta), cols)
	}
	inv := 1 / float64(cols)
	for i := 0; i < rows; i++ {
		xr, dyr, dxr := x[i*cols:(i+1)*cols], dy[i*cols:(i+1)*cols], dx[i*cols:(i+1)*cols]
		mu, rs := mean[i], rstd[i]
		sg, sgx := 0.0, 0.0
		for j, v := range xr {
			xh := (v - mu) * rs
			g := dyr[j] * gamma[j]
			sg += float64(g)
			sgx += float64(g * xh)
			if dgamma != nil {
				dgamma[j] += dyr[j] * xh
			}
			if dbeta != nil {
				dbeta[j] += dyr[j]
			}
		}
		mg, mgx := float32(sg*inv), float32(sgx*inv)
		for j, v := range xr {
			xh := (v - mu) * rs
			dxr[j] = rs * (dyr[j]*gamma[j] - mg - xh*mgx)
		}
	}
}

func (b *cpuBackend) Add(x, y, dst []float32) {
	backendCheckLen("CPU.Add", len(x), len(dst), len(y), len(dst))
	x, y = x[:len(dst)], y[:len(dst)]
	for i := range dst {
		dst[i] = x[i] + y[i]
	}
}

func (b *cpuBackend) Mul(x, y, dst []float32) {
	backendCheckLen("CPU.Mul", len(x), len(dst), len(y), len(dst))
	x, y = x[:len(dst)], y[:len(dst)]
	for i := range dst {
		dst[i] = x[i] * y[i]
	}
}

func (b *cpuBackend) Scale(alpha float32, x []float32) {
	for i := range x {
		x[i] *= alpha
	}
}

func (b *cpuBackend) Axpy(alpha float32, x, y []float32) {
	backendCheckLen("CPU.Axpy", len(x), len(y))
	x = x[:len(y)]
	for i := range y {
		y[i] += alpha * x[i]
	}
}

func (b *cpuBackend) AddBias(rows, cols int, bias, x []float32) {
	backendCheckLen("CPU.AddBias", len(bias), cols, len(x), rows*cols)
	bias = bias[:cols]
	for i := 0; i < rows; i++ {
		row := x[i*cols : (i+1)*cols]
		for j := range row {
			row[j] += bias[j]
		}
	}
}

func (b *cpuBackend) SumRows(rows, cols int, x, dst []float32) {
	backendCheckLen("CPU.SumRows", len(x), rows*cols, len(dst), cols)
	dst = dst[:cols]
	for i := 0; i < rows; i++ {
		row := x[i*cols : (i+1)*cols]
		for j := range row {
			dst[j] += row[j]
		}
	}
}

func (b *cpuBackend) Sum(x []float32) float32 {
	s := 0.0
	for _, v := range x {
		s += float64(v)
	}
	return float32(s)
}

func (b *cpuBackend) ReLU(x, y []float32) {
	backendCheckLen("CPU.ReLU", len(x), len(y))
	x = x[:len(y)]
	for i := range y {
		y[i] = max(x[i], 0)
	}
}

func (b *cpuBackend) ReLUBackward(x, dy, dx []float32) {
	backendCheckLen("CPU.ReLUBackward", len(x), len(dx), len(dy), len(dx))
	x, dy = x[:len(dx)], dy[:len(dx)]
	for i := range dx {
		if x[i] > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
}

func (b *cpuBackend) GELU(x, y []float32) {
	backendCheckLen("CPU.GELU", len(x), len(y))
	x = x[:len(y)]
	for i := range y {
		v := x[i]
		t := float32(math.Tanh(float64(geluC * (v + geluA*v*v*v))))
		y[i] = 0.5 * v * (1 + t)
	}
}

func (b *cpuBackend) GELUBackward(x, dy, dx []float32) {
	backendCheckLen("CPU.GELUBackward", len(x), len(dx), len(dy), len(dx))
	x, dy = x[:len(dx)], dy[:len(dx)]
	for i := range dx {
		v := x[i]
		t := float32(math.Tanh(float64(geluC * (v + geluA*v*v*v))))
		dx[i] = dy[i] * (0.5*(1+t) + 0.5*v*(1-t*t)*geluC*(1+3*geluA*v*v))
	}
}

func (b *cpuBackend) AdamStep(o AdamOptions, params, grads, m, v []float32) {
	n := len(params)
	if len(grads) != n || len(m) != n || len(v) != n {
		backendCheckLen("CPU.AdamStep", n, len(grads), n, len(m), n, len(v), len(grads), n, len(m), n, len(v), n)
	}
	stepSize, sqrtBC2 := o.adamCoefficients()
	ss, inv := float32(stepSize), float32(1/sqrtBC2)
	b1, b2, eps := o.Beta1, o.Beta2, o.Eps
	grads, m, v = grads[:n], m[:n], v[:n]
	for i := range params {
		g := grads[i]
		mi := b1*m[i] + (1-b1)*g
		vi := b2*v[i] + (1-b2)*g*g
		m[i], v[i] = mi, vi
		params[i] -= ss * mi / (float32(math.Sqrt(float64(vi)))*inv + eps)
	}
}
