// Package kbench measures the matrix products of package kernels: for each
// GEMM shape of the coming models (micro-VLA attention and MLPs, the patch
// stem, a convolution's im2col product, square sizes) it reports GFLOP/s of
// the float64 reference path the models use today (gonum blas64.Gemm), the
// float32 CPU backend on one core and on all cores, OpenBLAS's sgemm when
// built with -tags openblas, and cuBLAS when a GPU is present. The CLI's
// `accerl bench kernels` calls [Run] and prints [Report.Print] or the JSON of
// the [Report].
//
// A measurement runs the product repeatedly in rounds of at least
// MinTime/5 and keeps the fastest round (the least disturbed by other
// processes), after one untimed warm-up call.
package kbench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/accerl/accerl/kernels"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Shape is one GEMM: C (M×N) = op(A) (M×K) · op(B) (K×N).
type Shape struct {
	Name   string `json:"name"`
	M      int    `json:"m"`
	N      int    `json:"n"`
	K      int    `json:"k"`
	TransA bool   `json:"trans_a,omitempty"`
	TransB bool   `json:"trans_b,omitempty"`
}

// Flops returns 2·M·N·K.
func (s Shape) Flops() float64 { return 2 * float64(s.M) * float64(s.N) * float64(s.K) }

// DefaultShapes returns the shapes of the micro-VLA (~150 tokens, width
// 128, MLP ratio 4, attention over 150×150 per head), its patch stem, a 3×3
// convolution with 3 input channels on a 64×64 image lowered by im2col, and
// square 256, 512 and 1024.
func DefaultShapes() []Shape {
	return []Shape{
		{Name: "vla-mlp-up", M: 150, N: 384, K: 128},
		{Name: "vla-proj", M: 150, N: 128, K: 128},
		{Name: "vla-mlp-down", M: 150, N: 128, K: 512},
		{Name: "patch-stem", M: 64, N: 128, K: 192},
		{Name: "attn-scores", M: 150, N: 150, K: 32, TransB: true},
		{Name: "conv-im2col", M: 4096, N: 32, K: 27},
		{Name: "square-256", M: 256, N: 256, K: 256},
		{Name: "square-512", M: 512, N: 512, K: 512},
		{Name: "square-1024", M: 1024, N: 1024, K: 1024},
	}
}

// Options configures [Run].
type Options struct {
	// Shapes to measure; nil means DefaultShapes.
	Shapes []Shape
	// MinTime is the least time spent measuring each (shape, backend)
	// pair; longer is steadier. Zero means 250ms, which keeps the default
	// run under a minute on two cores.
	MinTime time.Duration
	// Threads is the "all cores" thread count; zero means GOMAXPROCS.
	Threads int
	// SkipCUDA skips the CUDA measurements even when a GPU is present.
	SkipCUDA bool
}

// Result is one shape's measurements in GFLOP/s (10⁹ floating-point
// operations, 2·M·N·K per product, per second). Absent measurements are 0
// and omitted from JSON.
type Result struct {
	Shape
	// ReferenceF64 is gonum's pure-Go float64 blas64.Gemm on one core, the
	// path every float64 model takes today.
	ReferenceF64 float64 `json:"reference_f64_gflops"`
	// CPU1 and CPUAll are the float32 CPU backend on one and on Threads
	// goroutines.
	CPU1   float64 `json:"f32_cpu_1core_gflops"`
	CPUAll float64 `json:"f32_cpu_all_cores_gflops"`
	// OpenBLAS1 and OpenBLASAll are cblas_sgemm with 1 and Threads threads
	// (-tags openblas only).
	OpenBLAS1   float64 `json:"openblas_1core_gflops,omitempty"`
	OpenBLASAll float64 `json:"openblas_all_cores_gflops,omitempty"`
	// CUDA is cublasSgemm on device-resident operands; CUDAWithCopies adds
	// the host↔device copies that [kernels.Backend.Gemm] on the CUDA backend
	// makes.
	CUDA           float64 `json:"cuda_cublas_gflops,omitempty"`
	CUDAWithCopies float64 `json:"cuda_with_copies_gflops,omitempty"`
	// RatioVsOpenBLAS is CPU1/OpenBLAS1 (0 without OpenBLAS).
	RatioVsOpenBLAS float64 `json:"ratio_vs_openblas,omitempty"`
	// SpeedupVsReference is CPU1/ReferenceF64.
	SpeedupVsReference float64 `json:"speedup_vs_reference"`
}

// Report is the outcome of [Run].
type Report struct {
	GOARCH     string   `json:"goarch"`
	NumCPU     int      `json:"num_cpu"`
	Threads    int      `json:"threads"`
	CPUBackend string   `json:"cpu_backend"` // "cpu-avx2" or "cpu-go"
	OpenBLAS   string   `json:"openblas"`    // its configuration, or why it is absent
	CUDA       string   `json:"cuda"`        // the device, or why it is absent
	MinTimeMS  float64  `json:"min_time_ms"`
	Results    []Result `json:"results"`
}

// Run measures every shape of o and returns the report. It stops early with
// ctx's error when ctx is cancelled.
func Run(ctx context.Context, o Options) (Report, error) {
	if o.Shapes == nil {
		o.Shapes = DefaultShapes()
	}
	if o.MinTime <= 0 {
		o.MinTime = 250 * time.Millisecond
	}
	if o.Threads <= 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	cpu1, cpuAll := kernels.NewCPU(1), kernels.NewCPU(o.Threads)
	rep := Report{GOARCH: runtime.GOARCH, NumCPU: runtime.NumCPU(), Threads: o.Threads,
		CPUBackend: cpu1.Name(), MinTimeMS: float64(o.MinTime) / 1e6}
	haveBLAS, blasWhy := OpenBLASAvailable()
	rep.OpenBLAS = blasWhy
	var cuda *kernels.CUDA
	if o.SkipCUDA {
		rep.CUDA = "skipped"
	} else if ok, why := kernels.CUDAAvailable(); !ok {
		rep.CUDA = why
	} else if c, err := kernels.NewCUDA(); err != nil {
		rep.CUDA = err.Error()
	} else {
		cuda = c
		defer cuda.Close()
		rep.CUDA = cuda.Name()
	}
	for _, s := range o.Shapes {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		r, err := measure(ctx, s, o, cpu1, cpuAll, haveBLAS, cuda)
		if err != nil {
			return rep, fmt.Errorf("bench %s: %w", s.Name, err)
		}
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}

func measure(ctx context.Context, s Shape, o Options, cpu1, cpuAll kernels.Backend, haveBLAS bool, cuda *kernels.CUDA) (Result, error) {
	rng := rand.New(rand.NewPCG(uint64(s.M), uint64(s.N*s.K)))
	a, b, c := randF32(rng, s.M*s.K), randF32(rng, s.K*s.N), make([]float32, s.M*s.N)
	r := Result{Shape: s}
	gflops := func(f func()) float64 { return s.Flops() / bestSeconds(ctx, o.MinTime, f) / 1e9 }

	a64, b64, c64 := toF64(a), toF64(b), make([]float64, s.M*s.N)
	r.ReferenceF64 = gflops(func() { gemm64(s, a64, b64, c64) })
	r.CPU1 = gflops(func() { cpu1.Gemm(s.TransA, s.TransB, s.M, s.N, s.K, 1, a, b, 0, c) })
	r.CPUAll = gflops(func() { cpuAll.Gemm(s.TransA, s.TransB, s.M, s.N, s.K, 1, a, b, 0, c) })
	if haveBLAS {
		OpenBLASSetThreads(1)
		r.OpenBLAS1 = gflops(func() { OpenBLASSgemm(s.TransA, s.TransB, s.M, s.N, s.K, 1, a, b, 0, c) })
		OpenBLASSetThreads(o.Threads)
		r.OpenBLASAll = gflops(func() { OpenBLASSgemm(s.TransA, s.TransB, s.M, s.N, s.K, 1, a, b, 0, c) })
		r.RatioVsOpenBLAS = r.CPU1 / r.OpenBLAS1
	}
	if cuda != nil {
		sec, err := cuda.TimeGemm(s.TransA, s.TransB, s.M, s.N, s.K, o.MinTime)
		if err != nil {
			return r, err
		}
		r.CUDA = s.Flops() / sec / 1e9
		r.CUDAWithCopies = gflops(func() { cuda.Gemm(s.TransA, s.TransB, s.M, s.N, s.K, 1, a, b, 0, c) })
	}
	r.SpeedupVsReference = r.CPU1 / r.ReferenceF64
	return r, nil
}

// bestSeconds returns the fastest time per call of f over rounds of at least
// minTime/5 each, spending about minTime in all (at least one round and one
// call after a warm-up call).
func bestSeconds(ctx context.Context, minTime time.Duration, f func()) float64 {
	f()
	round := minTime / 5
	best := 0.0
	start := time.Now()
	for time.Since(start) < minTime || best == 0 {
		n := 0
		t0 := time.Now()
		for n == 0 || time.Since(t0) < round {
			f()
			n++
		}
		if sec := time.Since(t0).Seconds() / float64(n); best == 0 || sec < best {
			best = sec
		}
		if ctx.Err() != nil {
			break
		}
	}
	return best
}

// gemm64 is the float64 path of the existing models (kernels' matmul).
func gemm64(s Shape, a, b, c []float64) {
	ga, ta := blas64.General{Rows: s.M, Cols: s.K, Stride: s.K, Data: a}, blas.NoTrans
	if s.TransA {
		ga, ta = blas64.General{Rows: s.K, Cols: s.M, Stride: s.M, Data: a}, blas.Trans
	}
	gb, tb := blas64.General{Rows: s.K, Cols: s.N, Stride: s.N, Data: b}, blas.NoTrans
	if s.TransB {
		gb, tb = blas64.General{Rows: s.N, Cols: s.K, Stride: s.K, Data: b}, blas.Trans
	}
	blas64.Gemm(ta, tb, 1, ga, gb, 0, blas64.General{Rows: s.M, Cols: s.N, Stride: s.N, Data: c})
}

func randF32(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(2*rng.Float64() - 1)
	}
	return x
}

func toF64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// Print writes the report as an aligned table, one row per shape.
func (r Report) Print(w io.Writer) error {
	fmt.Fprintf(w, "cpu backend %s, %d threads (%d CPUs, %s); openblas: %s; cuda: %s\n",
		r.CPUBackend, r.Threads, r.NumCPU, r.GOARCH, r.OpenBLAS, r.CUDA)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "shape\tM×N×K\tref f64\tf32 1core\tf32 all\topenblas 1\topenblas all\tcuda\tcuda+copy\tvs openblas\tvs ref\t")
	opt := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", v)
	}
	for _, x := range r.Results {
		ratio := "-"
		if x.RatioVsOpenBLAS != 0 {
			ratio = fmt.Sprintf("%.2f", x.RatioVsOpenBLAS)
		}
		fmt.Fprintf(tw, "%s\t%d×%d×%d\t%.1f\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%.1f×\t\n",
			x.Name, x.M, x.N, x.K, x.ReferenceF64, x.CPU1, x.CPUAll, opt(x.OpenBLAS1), opt(x.OpenBLASAll),
			opt(x.CUDA), opt(x.CUDAWithCopies), ratio, x.SpeedupVsReference)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "(GFLOP/s; vs openblas = f32 1core / openblas 1; vs ref = f32 1core / ref f64)")
	return err
}
