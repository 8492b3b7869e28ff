//go:build linux && (amd64 || arm64)

package kernels

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// CUDA is the GPU [Backend]: GEMMs through cuBLAS (cublasSgemm and
// cublasSgemmStridedBatched, row-major by the usual swap: a row-major C is a
// column-major Cᵀ = op(B)ᵀ·op(A)ᵀ), convolution as im2col + cuBLAS, and the
// other operations as CUDA C kernels (cuda_kernels.go) compiled by NVRTC
// when the backend starts. It uses device 0's primary context.
//
// Each method copies its host operands to device buffers (kept and grown
// between calls), runs, and copies the outputs back, so only large GEMMs
// gain; a device-resident tensor API is the next step. A CUDA failure in
// the middle of an operation panics with a "kernels: cuda: " message (the
// Backend methods have no error results); recover it at the activity
// boundary.
type CUDA struct {
	mu     sync.Mutex
	l      *cudaLibs
	dev    int32
	ctx    uintptr
	mod    uintptr
	fn     [cuNumKernels]uintptr
	blas   uintptr
	name   string
	closed bool

	bufs   [8]cudaBuf
	params [24]uint64
	pptr   [24]unsafe.Pointer
}

var _ Backend = (*CUDA)(nil)

// cudaBuf is one device allocation of size bytes.
type cudaBuf struct {
	ptr  uint64
	size uint64
}

// NewCUDA starts the CUDA backend on device 0: it retains the primary
// context, compiles the kernels with NVRTC for the device's architecture and
// creates a cuBLAS handle. Without a usable GPU it returns an error saying
// why (the reason of [CUDAAvailable]); call Close when done.
func NewCUDA() (*CUDA, error) {
	l := loadCUDA()
	if l.err != nil {
		return nil, fmt.Errorf("cuda: %w", l.err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := &CUDA{l: l}
	d := &l.drv
	if r := d.cuDeviceGet(&c.dev, 0); r != 0 {
		return nil, fmt.Errorf("cuda: cuDeviceGet: %s", l.cuErrName(r))
	}
	var name [256]byte
	d.cuDeviceGetName(&name[0], int32(len(name)), c.dev)
	var major, minor, drvVer int32
	d.cuDeviceGetAttribute(&major, 75, c.dev) // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	d.cuDeviceGetAttribute(&minor, 76, c.dev) // ..._MINOR
	d.cuDriverGetVersion(&drvVer)
	c.name = fmt.Sprintf("cuda:%s (sm_%d%d, driver %d.%d)", cString(&name[0]), major, minor, drvVer/1000, drvVer%1000/10)
	if r := d.cuDevicePrimaryCtxRetain(&c.ctx, c.dev); r != 0 {
		return nil, fmt.Errorf("cuda: cuDevicePrimaryCtxRetain: %s", l.cuErrName(r))
	}
	if r := d.cuCtxSetCurrent(c.ctx); r != 0 {
		d.cuDevicePrimaryCtxRelease(c.dev)
		return nil, fmt.Errorf("cuda: cuCtxSetCurrent: %s", l.cuErrName(r))
	}
	image, err := c.compile(major, minor)
	if err != nil {
		d.cuDevicePrimaryCtxRelease(c.dev)
		return nil, err
	}
	if r := d.cuModuleLoadData(&c.mod, unsafe.Pointer(&image[0])); r != 0 {
		d.cuDevicePrimaryCtxRelease(c.dev)
		return nil, fmt.Errorf("cuda: cuModuleLoadData: %s", l.cuErrName(r))
	}
	runtime.KeepAlive(image)
	for i, n := range cudaKernelNames {
		b := cBytes(n)
		if r := d.cuModuleGetFunction(&c.fn[i], c.mod, &b[0]); r != 0 {
			c.release()
			return nil, fmt.Errorf("cuda: kernel %s: %s", n, l.cuErrName(r))
		}
	}
	if r := l.blas.cublasCreate(&c.blas); r != 0 {
		c.release()
		return nil, fmt.Errorf("cuda: cublasCreate: status %d", r)
	}
	for i := range c.pptr {
		c.pptr[i] = unsafe.Pointer(&c.params[i])
	}
	return c, nil
}

// compile builds cudaKernelSource for sm_<major><minor>: a CUBIN when NVRTC
// knows the architecture (no driver JIT, and immune to a driver older than
// NVRTC's PTX), else PTX for compute_<major><minor>.
func (c *CUDA) compile(major, minor int32) ([]byte, error) {
	r := &c.l.rtc
	src, name := cBytes(cudaKernelSource), cBytes("accerl_kernels.cu")
	var out []byte
	var log string
	for _, arch := range []string{fmt.Sprintf("sm_%d%d", major, minor), fmt.Sprintf("compute_%d%d", major, minor)} {
		var prog uintptr
		if s := r.nvrtcCreateProgram(&prog, &src[0], &name[0], 0, nil, nil); s != 0 {
			return nil, fmt.Errorf("cuda: nvrtcCreateProgram: status %d", s)
		}
		opts := [][]byte{cBytes("--gpu-architecture=" + arch), cBytes("-default-device")}
		optp := make([]*byte, len(opts))
		for i := range opts {
			optp[i] = &opts[i][0]
		}
		s := r.nvrtcCompileProgram(prog, int32(len(optp)), &optp[0])
		runtime.KeepAlive(opts)
		var n uint64
		r.nvrtcGetProgramLogSize(prog, &n)
		if n > 1 {
			buf := make([]byte, n)
			r.nvrtcGetProgramLog(prog, &buf[0])
			log = string(buf[:n-1])
		}
		if s == 0 {
			if arch[:3] == "sm_" {
				if r.nvrtcGetCUBINSize(prog, &n) == 0 && n > 0 {
					out = make([]byte, n)
					r.nvrtcGetCUBIN(prog, &out[0])
				}
			} else if r.nvrtcGetPTXSize(prog, &n) == 0 && n > 0 {
				out = make([]byte, n)
				r.nvrtcGetPTX(prog, &out[0])
			}
		}
		r.nvrtcDestroyProgram(&prog)
		if out != nil {
			return out, nil
		}
	}
	return nil, fmt.Errorf("cuda: NVRTC could not compile the kernels for sm_%d%d: %s", major, minor, log)
}

// Name returns "cuda:<device> (sm_XY, driver A.B)".
func (c *CUDA) Name() string { return c.name }

// Close frees the device buffers, the module and the cuBLAS handle, and
// releases the primary context. The backend is unusable afterwards.
func (c *CUDA) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c.l.drv.cuCtxSetCurrent(c.ctx)
	for i := range c.bufs {
		if c.bufs[i].ptr != 0 {
			c.l.drv.cuMemFree(c.bufs[i].ptr)
			c.bufs[i] = cudaBuf{}
		}
	}
	if c.blas != 0 {
		c.l.blas.cublasDestroy(c.blas)
	}
	c.release()
	c.closed = true
	return nil
}

func (c *CUDA) release() {
	if c.mod != 0 {
		c.l.drv.cuModuleUnload(c.mod)
		c.mod = 0
	}
	c.l.drv.cuDevicePrimaryCtxRelease(c.dev)
}

// enter serialises calls and makes the context current on this OS thread;
// leave undoes both.
func (c *CUDA) enter(op string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		panic("kernels: cuda: " + op + " on a closed backend")
	}
	runtime.LockOSThread()
	c.must(op+": cuCtxSetCurrent", c.l.drv.cuCtxSetCurrent(c.ctx))
}

func (c *CUDA) leave() {
	runtime.UnlockOSThread()
	c.mu.Unlock()
}

// must panics on a failed driver call (see the type's doc comment).
func (c *CUDA) must(what string, r int32) {
	if r != 0 {
		panic(fmt.Sprintf("kernels: cuda: %s: %s", what, c.l.cuErrName(r)))
	}
}

// buf returns device buffer i with room for n float32 values.
func (c *CUDA) buf(i, n int) uint64 {
	want := uint64(max(n, 2)) * 4
	b := &c.bufs[i]
	if b.size < want {
		if b.ptr != 0 {
			c.l.drv.cuMemFree(b.ptr)
			*b = cudaBuf{}
		}
		c.must("cuMemAlloc", c.l.drv.cuMemAlloc(&b.ptr, want))
		b.size = want
	}
	return b.ptr
}

// up copies x into device buffer i and returns its address.
func (c *CUDA) up(i int, x []float32) uint64 {
	p := c.buf(i, len(x))
	if len(x) > 0 {
		c.must("cuMemcpyHtoD", c.l.drv.cuMemcpyHtoD(p, unsafe.Pointer(&x[0]), uint64(len(x))*4))
	}
	return p
}

// down copies len(x) values from device address p into x.
func (c *CUDA) down(x []float32, p uint64) {
	if len(x) > 0 {
		c.must("cuMemcpyDtoH", c.l.drv.cuMemcpyDtoH(unsafe.Pointer(&x[0]), p, uint64(len(x))*4))
	}
}

// Kernel argument encodings: each parameter occupies one 8-byte slot, read
// by the kernel at its own width (little-endian).
func cuF(v float32) uint64 { return uint64(math.Float32bits(v)) }
func cuI(v int) uint64     { return uint64(uint32(int32(v))) }
func cuL(v int) uint64     { return uint64(int64(v)) }

// launch runs kernel f on grid blocks of block threads.
func (c *CUDA) launch(f int, grid, block int, args ...uint64) {
	if grid == 0 {
		return
	}
	copy(c.params[:], args)
	c.must("launch "+cudaKernelNames[f], c.l.drv.cuLaunchKernel(c.fn[f], uint32(grid), 1, 1, uint32(block), 1, 1, 0, 0,
		unsafe.Pointer(&c.pptr[0]), nil))
}

func cuGrid(n int) int { return (n + cudaBlock - 1) / cudaBlock }

// sgemm runs the row-major C = alpha op(A) op(B) + beta C on device
// addresses as the column-major Cᵀ = op(B)ᵀ op(A)ᵀ.
func (c *CUDA) sgemm(transA, transB bool, m, n, k int, alpha float32, a, b uint64, beta float32, cc uint64) {
	ta, lda := int32(0), k
	if transA {
		ta, lda = 1, m
	}
	tb, ldb := int32(0), n
	if transB {
		tb, ldb = 1, k
	}
	if s := c.l.blas.cublasSgemm(c.blas, tb, ta, int32(n), int32(m), int32(k), &alpha, b, int32(max(ldb, 1)),
		a, int32(max(lda, 1)), &beta, cc, int32(n)); s != 0 {
		panic(fmt.Sprintf("kernels: cuda: cublasSgemm: status %d", s))
	}
}

func (c *CUDA) Gemm(transA, transB bool, m, n, k int, alpha float32, a, b []float32, beta float32, cm []float32) {
	checkGemmArgs("CUDA.Gemm", m, n, k, len(a), len(b), len(cm))
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		refGemm(false, false, m, n, 0, 0, nil, nil, beta, cm) // C = beta·C
		return
	}
	c.enter("Gemm")
	defer c.leave()
	pa, pb := c.up(0, a[:m*k]), c.up(1, b[:k*n])
	var pc uint64
	if beta != 0 {
		pc = c.up(2, cm[:m*n])
	} else {
		pc = c.buf(2, m*n)
	}
	c.sgemm(transA, transB, m, n, k, alpha, pa, pb, beta, pc)
	c.down(cm[:m*n], pc)
}

func (c *CUDA) GemmStrided(transA, transB bool, m, n, k int, alpha float32, a []float32, strideA int,
	b []float32, strideB int, beta float32, cm []float32, strideC int, batch int) {
	checkStrided("CUDA.GemmStrided", m, n, k, len(a), strideA, len(b), strideB, len(cm), strideC, batch)
	if m == 0 || n == 0 || batch == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		for p := 0; p < batch; p++ {
			refGemm(false, false, m, n, 0, 0, nil, nil, beta, cm[p*strideC:])
		}
		return
	}
	c.enter("GemmStrided")
	defer c.leave()
	la, lb, lc := (batch-1)*strideA+m*k, (batch-1)*strideB+k*n, (batch-1)*strideC+m*n
	// C goes up even with beta == 0 so that gaps between the C_p survive
	// the copy back.
	pa, pb, pc := c.up(0, a[:la]), c.up(1, b[:lb]), c.up(2, cm[:lc])
	ta, lda := int32(0), k
	if transA {
		ta, lda = 1, m
	}
	tb, ldb := int32(0), n
	if transB {
		tb, ldb = 1, k
	}
	if s := c.l.blas.cublasSgemmStridedBatched(c.blas, tb, ta, int32(n), int32(m), int32(k), &alpha,
		pb, int32(ldb), int64(strideB), pa, int32(lda), int64(strideA), &beta, pc, int32(n), int64(strideC), int32(batch)); s != 0 {
		panic(fmt.Sprintf("kernels: cuda: cublasSgemmStridedBatched: status %d", s))
	}
	c.down(cm[:lc], pc)
}

// convArgs are the geometry arguments of k_im2col and k_col2im.
func convArgs(g ConvGeom) []uint64 {
	return []uint64{cuI(g.C), cuI(g.H), cuI(g.W), cuI(g.R), cuI(g.S), cuI(g.SH), cuI(g.SW), cuI(g.PH), cuI(g.PW), cuI(g.OH()), cuI(g.OW())}
}

func (c *CUDA) Conv2D(g ConvGeom, x, w, bias, y []float32) {
	g.check("CUDA.Conv2D")
	backendCheckLen("CUDA.Conv2D", len(x), g.XLen(), len(w), g.WLen(), len(y), g.YLen())
	if bias != nil {
		backendCheckLen("CUDA.Conv2D", len(bias), g.K)
	}
	if g.N == 0 {
		return
	}
	c.enter("Conv2D")
	defer c.leave()
	crs, p, img := g.C*g.R*g.S, g.OH()*g.OW(), g.C*g.H*g.W
	px, pw, py, pcol := c.up(0, x[:g.XLen()]), c.up(1, w[:g.WLen()]), c.buf(3, g.YLen()), c.buf(4, crs*p)
	var pbias uint64
	if bias != nil {
		pbias = c.up(2, bias[:g.K])
	}
	geo := convArgs(g)
	for n := 0; n < g.N; n++ {
		c.launch(cuIm2col, cuGrid(crs*p), cudaBlock, append([]uint64{px + uint64(n*img*4), pcol}, geo...)...)
		yn := py + uint64(n*g.K*p*4)
		c.sgemm(false, false, g.K, p, crs, 1, pw, pcol, 0, yn)
		if bias != nil {
			c.launch(cuConvBiasAdd, cuGrid(g.K*p), cudaBlock, pbias, yn, cuI(g.K), cuL(p))
		}
	}
	c.down(y[:g.YLen()], py)
}

func (c *CUDA) Conv2DBackward(g ConvGeom, x, w, dy, dx, dw, db []float32) {
	g.check("CUDA.Conv2DBackward")
	backendCheckLen("CUDA.Conv2DBackward", len(x), g.XLen(), len(w), g.WLen(), len(dy), g.YLen())
	if dx != nil {
		backendCheckLen("CUDA.Conv2DBackward", len(dx), g.XLen())
	}
	if dw != nil {
		backendCheckLen("CUDA.Conv2DBackward", len(dw), g.WLen())
	}
	if db != nil {
		backendCheckLen("CUDA.Conv2DBackward", len(db), g.K)
	}
	if g.N == 0 {
		return
	}
	c.enter("Conv2DBackward")
	defer c.leave()
	crs, p, img := g.C*g.R*g.S, g.OH()*g.OW(), g.C*g.H*g.W
	px, pw, pdy := c.up(0, x[:g.XLen()]), c.up(1, w[:g.WLen()]), c.up(2, dy[:g.YLen()])
	geo := convArgs(g)
	if db != nil {
		pdb := c.up(5, db[:g.K])
		c.launch(cuConvBiasGrad, g.K, cudaBlock, pdy, pdb, cuI(g.N), cuI(g.K), cuL(p))
		c.down(db[:g.K], pdb)
	}
	var pdw, pdx, pcol, pdcol uint64
	if dw != nil {
		pdw, pcol = c.up(3, dw[:g.WLen()]), c.buf(4, crs*p)
	}
	if dx != nil {
		pdx, pdcol = c.buf(6, g.XLen()), c.buf(7, crs*p)
	}
	for n := 0; n < g.N; n++ {
		dyn := pdy + uint64(n*g.K*p*4)
		if dw != nil {
			c.launch(cuIm2col, cuGrid(crs*p), cudaBlock, append([]uint64{px + uint64(n*img*4), pcol}, geo...)...)
			c.sgemm(false, true, g.K, crs, p, 1, dyn, pcol, 1, pdw)
		}
		if dx != nil {
			c.sgemm(true, false, crs, p, g.K, 1, pw, dyn, 0, pdcol)
			c.launch(cuCol2im, cuGrid(img), cudaBlock, append([]uint64{pdcol, pdx + uint64(n*img*4)}, geo...)...)
		}
	}
	if dw != nil {
		c.down(dw[:g.WLen()], pdw)
	}
	if dx != nil {
		c.down(dx[:g.XLen()], pdx)
	}
}

// TimeGemm returns the fastest time of one cublasSgemm on device-resident
// m×k and k×n operands, over rounds spending about minTime in all: the
// GPU's own rate, without the host copies Gemm makes. For benchmarks.
func (c *CUDA) TimeGemm(transA, transB bool, m, n, k int, minTime time.Duration) (seconds float64, err error) {
	if m <= 0 || n <= 0 || k <= 0 {
		return 0, errors.New("cuda: TimeGemm: dimensions must be positive")
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	c.enter("TimeGemm")
	defer c.leave()
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(i%7) - 3
	}
	for i := range b {
		b[i] = float32(i%5) - 2
	}
	pa, pb, pc := c.up(0, a), c.up(1, b), c.buf(2, m*n)
	run := func(reps int) float64 {
		t0 := time.Now()
		for range reps {
			c.sgemm(transA, transB, m, n, k, 1, pa, pb, 0, pc)
		}
		c.must("cuCtxSynchronize", c.l.drv.cuCtxSynchronize())
		return time.Since(t0).Seconds() / float64(reps)
	}
	run(3) // warm-up: cuBLAS picks and loads its kernel
	reps, best := 1, math.Inf(1)
	start := time.Now()
	for time.Since(start) < minTime || math.IsInf(best, 1) {
		sec := run(reps)
		best = min(best, sec)
		if sec*float64(reps) < (minTime / 10).Seconds() {
			reps *= 2
		}
	}
	return best, nil
}
