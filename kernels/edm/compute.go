package edm

import (
	"runtime"
	"sync"

	"github.com/accerl/accerl/kernels"
)

// Float is the element type of a [Net]: float32 for the model that trains
// and samples, float64 for the mirror the gradient checks run on. Both go
// through the same code.
type Float interface{ ~float32 | ~float64 }

// matmul computes C = op(A)·op(B) + beta·C for dense row-major matrices,
// op(A) m×k, op(B) k×n, C m×n (A stored k×m when transA, B stored n×k when
// transB), the semantics of [kernels.Backend.Gemm] with alpha = 1. A float32
// model runs it on its backend; the float64 mirror (and a float32 model
// without a backend) runs the plain loop below, which is only ever used at
// gradient-check sizes.
func matmul[F Float](be kernels.Backend, transA, transB bool, m, n, k int, a, b []F, beta F, c []F) {
	if be != nil {
		if a32, ok := any(a).([]float32); ok {
			be.Gemm(transA, transB, m, n, k, 1, a32, any(b).([]float32), float32(beta), any(c).([]float32))
			return
		}
	}
	for i := 0; i < m; i++ {
		row := c[i*n : (i+1)*n]
		for j := range row {
			s := 0.0
			for l := 0; l < k; l++ {
				av, bv := a[i*k+l], b[l*n+j]
				if transA {
					av = a[l*m+i]
				}
				if transB {
					bv = b[j*k+l]
				}
				s += float64(av) * float64(bv)
			}
			if beta == 0 {
				row[j] = F(s)
			} else {
				row[j] = F(s) + beta*row[j]
			}
		}
	}
}

// workGrain is the number of element operations from which a loop is
// split over goroutines (starting one costs about a microsecond).
const workGrain = 1 << 16

// forEach calls f(i) for every i < n, spread over GOMAXPROCS goroutines in
// contiguous chunks when n·cost (element operations) is at least
// workGrain. Each i is handled by exactly one call, so f may write
// disjoint outputs without locks, and the result does not depend on the
// split.
func forEach(n, cost int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers < 2 || n*cost < workGrain {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				f(i)
			}
		}()
	}
	wg.Wait()
}
