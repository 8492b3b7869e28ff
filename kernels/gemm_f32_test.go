package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// eps32 is the float32 unit roundoff 2⁻²⁴.
const eps32 = 1.0 / (1 << 24)

// backendRand returns n values uniform in [-1, 1) from rng.
func backendRand(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(2*rng.Float64() - 1)
	}
	return x
}

// guardLen is the number of sentinel values past the logical end of every
// output slice in these tests.
const guardLen = 17

// guardSentinel is a value no kernel produces from the test data.
var guardSentinel = float32(math.Float32frombits(0x7fc0beef)) // a NaN with a payload

// withGuard returns a copy of x with guardLen sentinels appended, and the
// view of its first len(x) values.
func withGuard(x []float32) (full, view []float32) {
	full = make([]float32, len(x)+guardLen)
	copy(full, x)
	for i := len(x); i < len(full); i++ {
		full[i] = guardSentinel
	}
	return full, full[:len(x)]
}

// checkGuard fails the test if any sentinel past n was overwritten.
func checkGuard(t *testing.T, what string, full []float32, n int) {
	t.Helper()
	for i := n; i < len(full); i++ {
		if math.Float32bits(full[i]) != math.Float32bits(guardSentinel) {
			t.Fatalf("%s: element %d past the end (len %d) was written: %v", what, i-n, n, full[i])
		}
	}
}

// gemmBound returns the elementwise error bound for C = alpha*op(A)op(B) +
// beta*C computed in float32 against an exact reference: the classic bound
// |fl(Σ a_l b_l) − Σ a_l b_l| ≤ γ_k Σ|a_l||b_l| with γ_k ≈ k·eps32 for
// recursive summation (Higham 2002, "Accuracy and Stability of Numerical
// Algorithms", eq. 3.5), blocked summation only lowering the constant, plus
// the roundings of the alpha and beta products and of the reference's own
// float32 result; a factor 2 absorbs the fused multiply-adds' different
// rounding points.
func gemmBound(k int, alpha, beta float32, absProd, absC float64) float64 {
	return 2*float64(k+3)*eps32*math.Abs(float64(alpha))*absProd + 3*eps32*math.Abs(float64(beta))*absC + 1e-30
}

// gemmAbs returns Σ_l |op(A)[i][l]||op(B)[l][j]| for every i, j.
func gemmAbs(transA, transB bool, m, n, k int, a, b []float32) []float64 {
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for l := 0; l < k; l++ {
				av := a[i*k+l]
				if transA {
					av = a[l*m+i]
				}
				bv := b[l*n+j]
				if transB {
					bv = b[j*k+l]
				}
				s += math.Abs(float64(av)) * math.Abs(float64(bv))
			}
			out[i*n+j] = s
		}
	}
	return out
}

func gemmCase(t *testing.T, be Backend, rng *rand.Rand, transA, transB bool, m, n, k int, alpha, beta float32) {
	t.Helper()
	a, b := backendRand(rng, m*k), backendRand(rng, k*n)
	c0 := backendRand(rng, m*n)
	if beta == 0 {
		for i := range c0 {
			c0[i] = float32(math.NaN()) // beta == 0 must overwrite, not scale
		}
	}
	want := append([]float32(nil), c0...)
	NewReference().Gemm(transA, transB, m, n, k, alpha, a, b, beta, want)
	full, c := withGuard(c0)
	be.Gemm(transA, transB, m, n, k, alpha, a, b, beta, c)
	name := fmt.Sprintf("%s Gemm(tA=%v tB=%v m=%d n=%d k=%d α=%v β=%v)", be.Name(), transA, transB, m, n, k, alpha, beta)
	checkGuard(t, name, full, m*n)
	abs := gemmAbs(transA, transB, m, n, k, a, b)
	for i := range c {
		absC := 0.0
		if beta != 0 {
			absC = math.Abs(float64(c0[i]))
		}
		tol := gemmBound(k, alpha, beta, abs[i], absC)
		if d := math.Abs(float64(c[i]) - float64(want[i])); !(d <= tol) {
			t.Fatalf("%s: C[%d][%d] = %v, want %v (|diff| %.3g > tol %.3g)", name, i/n, i%n, c[i], want[i], d, tol)
		}
	}
}

// gemmShapes covers the edge cases of the 6×16 tiling and of the 256-deep
// packing: 1, below and above a tile, and past one kc slice.
var gemmShapes = [][3]int{
	{1, 1, 1}, {1, 7, 3}, {7, 1, 5}, {7, 7, 7}, {6, 16, 1}, {12, 32, 8}, {13, 17, 9},
	{63, 63, 63}, {1, 257, 63}, {257, 7, 1}, {65, 129, 257}, {37, 300, 130}, {121, 33, 520},
}

func testGemmParity(t *testing.T, be Backend) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range gemmShapes {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				gemmCase(t, be, rng, tA, tB, s[0], s[1], s[2], 1, 0)
			}
		}
	}
	// alpha and beta on a few shapes and all transposes.
	for _, s := range [][3]int{{7, 19, 5}, {63, 40, 257}} {
		for _, ab := range [][2]float32{{0.5, 1}, {-2, 0.25}, {0, 3}, {1.5, -1}} {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					gemmCase(t, be, rng, tA, tB, s[0], s[1], s[2], ab[0], ab[1])
				}
			}
		}
	}
}

func TestGemmParityCPU(t *testing.T) {
	testGemmParity(t, NewCPU(1))
	// Every size through the pool, split into row and column blocks.
	b := NewCPU(3).(*cpuBackend)
	b.minParallel = 0
	testGemmParity(t, b)
}

// TestGemmParityGoKernel runs the portable micro-kernel even where the
// assembly one is selected.
func TestGemmParityGoKernel(t *testing.T) {
	b := NewCPU(2).(*cpuBackend)
	b.kernel, b.name = gemmKernelGo, "cpu-go"
	testGemmParity(t, b)
}

func TestGemmZeroSizes(t *testing.T) {
	for _, be := range []Backend{NewReference(), NewCPU(1)} {
		c := []float32{1, 2, 3, 4}
		be.Gemm(false, false, 2, 2, 0, 1, nil, nil, 0.5, c)
		if c[0] != 0.5 || c[3] != 2 {
			t.Fatalf("%s: k == 0 must scale C by beta, got %v", be.Name(), c)
		}
		be.Gemm(false, false, 0, 3, 4, 1, nil, nil, 0, nil)
	}
}

func TestGemmLargeParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("large GEMM parity in -short mode")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	be := NewCPU(4)
	gemmCase(t, be, rng, false, false, 300, 1100, 270, 1, 0)
	gemmCase(t, be, rng, true, true, 300, 1100, 270, 1, 0.5)
}

func TestGemmStridedParity(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	par := NewCPU(3).(*cpuBackend)
	par.minParallel = 0
	for _, be := range []Backend{NewCPU(1), par} {
		for _, tt := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			m, n, k, batch := 37, 41, 33, 5
			sa, sb, sc := m*k+3, k*n, m*n+1
			a, b := backendRand(rng, sa*batch), backendRand(rng, sb*batch)
			c0 := backendRand(rng, sc*batch)
			want := append([]float32(nil), c0...)
			NewReference().GemmStrided(tt[0], tt[1], m, n, k, 0.5, a, sa, b, sb, 1, want, sc, batch)
			full, c := withGuard(c0)
			be.GemmStrided(tt[0], tt[1], m, n, k, 0.5, a, sa, b, sb, 1, c, sc, batch)
			checkGuard(t, "GemmStrided", full, len(c))
			for p := 0; p < batch; p++ {
				abs := gemmAbs(tt[0], tt[1], m, n, k, a[p*sa:], b[p*sb:])
				for i := 0; i < m*n; i++ {
					tol := gemmBound(k, 0.5, 1, abs[i], math.Abs(float64(c0[p*sc+i])))
					if d := math.Abs(float64(c[p*sc+i] - want[p*sc+i])); !(d <= tol) {
						t.Fatalf("%s GemmStrided %v batch %d elem %d: got %v want %v", be.Name(), tt, p, i, c[p*sc+i], want[p*sc+i])
					}
				}
				// The gap between outputs (one element per stride) stays untouched.
				if p+1 < batch && c[p*sc+m*n] != c0[p*sc+m*n] {
					t.Fatalf("%s GemmStrided wrote into the gap after batch %d", be.Name(), p)
				}
			}
		}
	}
}

func TestGemmNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	a, b, c := backendRand(rng, 150*128), backendRand(rng, 128*384), make([]float32, 150*384)
	// On the calling goroutine nothing may allocate. Split over the pool, the caller and the
	// workers block on a channel and a WaitGroup, and the runtime may allocate the goroutine
	// wait record (a sudog) when its per-P cache is empty, as it is on a loaded machine after
	// a GC: at most one per blocking operation, so a call may make a few; none come from the
	// GEMM itself (its buffers are per worker and reused).
	for _, tc := range []struct {
		threads int
		most    float64
	}{{1, 0}, {2, 4}} {
		be := NewCPU(tc.threads)
		be.Gemm(false, true, 150, 384, 128, 1, a, b, 0, c)
		if n := testing.AllocsPerRun(20, func() { be.Gemm(false, true, 150, 384, 128, 1, a, b, 0, c) }); n > tc.most {
			t.Errorf("%s on %d threads: Gemm allocated %v times per call, want at most %v", be.Name(), tc.threads, n, tc.most)
		}
	}
}

func TestGemmGrid(t *testing.T) {
	for _, tc := range []struct{ m, n, k, threads int }{{150, 384, 128, 2}, {150, 384, 128, 16}, {4096, 32, 27, 8}, {6, 16, 100, 4}} {
		pm, pn := gemmGrid(tc.m, tc.n, tc.k, tc.threads)
		if pm < 1 || pn < 1 || pm*pn > tc.threads {
			t.Errorf("gemmGrid(%v) = %d×%d", tc, pm, pn)
		}
	}
}

var gemmSink float32

func benchmarkGemm(b *testing.B, be Backend, m, n, k int) {
	rng := rand.New(rand.NewPCG(1, 1))
	a, bb, c := backendRand(rng, m*k), backendRand(rng, k*n), make([]float32, m*n)
	b.ReportAllocs()
	b.SetBytes(0)
	b.ResetTimer()
	for range b.N {
		be.Gemm(false, false, m, n, k, 1, a, bb, 0, c)
	}
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	gemmSink = c[0]
}

func BenchmarkGemmCPU1_150x384x128(b *testing.B) { benchmarkGemm(b, NewCPU(1), 150, 384, 128) }
func BenchmarkGemmCPU1_512(b *testing.B)         { benchmarkGemm(b, NewCPU(1), 512, 512, 512) }
func BenchmarkGemmCPU1_4096x32x27(b *testing.B)  { benchmarkGemm(b, NewCPU(1), 4096, 32, 27) }
func BenchmarkGemmCPUAll_512(b *testing.B)       { benchmarkGemm(b, NewCPU(0), 512, 512, 512) }
func BenchmarkGemmReference_150x384x128(b *testing.B) {
	benchmarkGemm(b, NewReference(), 150, 384, 128)
}
