package kernels

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// matmul computes C = alpha*op(A)*op(B) + beta*C for row-major matrices with
// op(A) m×k, op(B) k×n and C m×n:
//
//	for i < m, j < n: C[i][j] = alpha * Σ_l op(A)[i][l]*op(B)[l][j] + beta*C[i][j]
//
// A is stored m×k (k×m when transA), B is stored k×n (n×k when transB), each
// densely with its natural stride. With beta == 0, C is overwritten.
//
// This is the only matrix product in the package. It uses gonum's blas64,
// which is pure Go by default. A later build tag (matmul_openblas.go /
// matmul_cuda.go with the complementary tag on this file) replaces this
// function with the same signature and semantics; nothing else in the package
// needs to change.
func matmul(transA, transB bool, m, n, k int, alpha float64, a, b []float64, beta float64, c []float64) {
	if m == 0 || n == 0 {
		return
	}
	if len(a) < m*k || len(b) < k*n || len(c) < m*n {
		panic("kernels: matmul: slice shorter than its matrix")
	}
	ga := blas64.General{Rows: m, Cols: k, Stride: k, Data: a}
	ta := blas.NoTrans
	if transA {
		ga = blas64.General{Rows: k, Cols: m, Stride: m, Data: a}
		ta = blas.Trans
	}
	gb := blas64.General{Rows: k, Cols: n, Stride: n, Data: b}
	tb := blas.NoTrans
	if transB {
		gb = blas64.General{Rows: n, Cols: k, Stride: k, Data: b}
		tb = blas.Trans
	}
	if k == 0 {
		// An empty inner dimension contributes nothing; BLAS would still
		// scale C by beta, which we do by hand to avoid a zero-size matrix.
		for i := range c[:m*n] {
			if beta == 0 {
				c[i] = 0
			} else {
				c[i] *= beta
			}
		}
		return
	}
	blas64.Gemm(ta, tb, alpha, ga, gb, beta, blas64.General{Rows: m, Cols: n, Stride: n, Data: c})
}
