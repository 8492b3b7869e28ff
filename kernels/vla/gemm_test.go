package vla

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naiveGemm is the reference loop of gemm's doc comment, in float64.
func naiveGemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for l := 0; l < k; l++ {
				var av, bv float64
				if transA {
					av = a[l*lda+i]
				} else {
					av = a[i*lda+l]
				}
				if transB {
					bv = b[j*ldb+l]
				} else {
					bv = b[l*ldb+j]
				}
				s += av * bv
			}
			c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
		}
	}
}

func TestGemmMatchesLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	// Odd sizes exercise the tile remainders; k = 300 crosses the 256 block;
	// the large case crosses the parallel threshold; strides exceed widths.
	shapes := [][3]int{{1, 1, 1}, {3, 5, 7}, {2, 4, 256}, {5, 9, 300}, {130, 70, 129}, {3, 400, 900}}
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				ar, ac := m, k
				if tA {
					ar, ac = k, m
				}
				br, bc := k, n
				if tB {
					br, bc = n, k
				}
				lda, ldb, ldc := ac+1, bc+2, n+3
				a := randVec[float64](rng, ar*lda, 1)
				b := randVec[float64](rng, br*ldb, 1)
				c := randVec[float64](rng, m*ldc, 1)
				want := append([]float64(nil), c...)
				naiveGemm(tA, tB, m, n, k, 0.7, a, lda, b, ldb, 0.3, want, ldc)
				gemm(tA, tB, m, n, k, 0.7, a, lda, b, ldb, 0.3, c, ldc)
				for i := range c {
					// Sums of k ≤ 900 products of order 1 in float64,
					// reordered: |error| ≲ k·ε·√k ≈ 1e-11.
					if math.Abs(c[i]-want[i]) > 1e-10 {
						t.Fatalf("m=%d n=%d k=%d tA=%v tB=%v: c[%d] = %v, want %v", m, n, k, tA, tB, i, c[i], want[i])
					}
				}
			}
		}
	}
}

func TestGemmBetaZeroOverwrites(t *testing.T) {
	c := []float32{float32(math.NaN()), float32(math.NaN())}
	gemm(false, false, 1, 2, 1, 1, []float32{2}, 1, []float32{3, 4}, 2, 0, c, 2)
	if c[0] != 6 || c[1] != 8 {
		t.Fatalf("c = %v, want [6 8]", c)
	}
}

var sinkF32 float32

func benchGemm(b *testing.B, m, n, k int) {
	rng := rand.New(rand.NewPCG(2, 2))
	a := randVec[float32](rng, m*k, 1)
	w := randVec[float32](rng, n*k, 1)
	c := make([]float32, m*n)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		gemm(false, true, m, n, k, 1, a, k, w, k, 0, c, n)
	}
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	sinkF32 = c[0]
}

func BenchmarkGemmLinear(b *testing.B) { benchGemm(b, 2048, 512, 128) }
func BenchmarkGemmLMHead(b *testing.B) { benchGemm(b, 64, 32000, 128) }
