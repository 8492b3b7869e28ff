package vla

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/accerl/accerl/kernels"
)

// Float is the element type of a [Net]: float32 for the model that acts and
// trains, float64 for the mirror that the gradient checks run on. Both go
// through the same code.
type Float interface{ ~float32 | ~float64 }

// matmul computes C = alpha·op(A)·op(B) + beta·C for dense row-major
// matrices (natural strides: A is m×k, k×m when transA; B is k×n, n×k when
// transB; C is m×n), the semantics of [kernels.Backend.Gemm]. It is the
// dispatch point of every matrix product of the model: a float32 model with
// a backend runs it there (the AVX2 GEMM of [kernels.NewCPU] by default),
// except for products of at most smallRows rows of op(A) times a stored-
// transposed B (a decode step's x·Wᵀ at batch 1-2), which the pure-Go gemm
// below does faster because it needs no packing of W. The float64 model
// (the gradient checks' mirror) and a float32 model without a backend use
// the pure-Go gemm throughout.
func matmul[F Float](be kernels.Backend, transA, transB bool, m, n, k int, alpha F, a, b []F, beta F, c []F) {
	_, rowsAlike := be.(uniformRows)
	if be != nil && (m > smallRows || transA || !transB || rowsAlike) {
		if a32, ok := any(a).([]float32); ok {
			be.Gemm(transA, transB, m, n, k, float32(alpha), a32, any(b).([]float32), float32(beta), any(c).([]float32))
			return
		}
	}
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, n)
}

// uniformRows is a backend that takes every product, however few its rows: the pure-Go path
// of one or two rows accumulates without fused multiply-adds, so its results differ in the
// last bits from the backend's, and a row's result would depend on how many rows share its
// call. [Net.ActRows] runs on it.
type uniformRows struct{ kernels.Backend }

// smallRows is the number of rows up to which matmul keeps x·Wᵀ on the
// pure-Go path: the backend packs all of W for every call, which at one or
// two rows costs more than the products (measured: 384×128 weights, 1 row,
// 17 µs pure Go against 90 µs; from 4 rows on the backend wins).
const smallRows = 2

// batchMatmul runs batch independent dense products, problem p on
// a[p·strideA:], b[p·strideB:] and c[p·strideC:] (the semantics of
// [kernels.Backend.GemmStrided]): on the backend for a float32 model,
// otherwise the pure-Go gemm with one problem per goroutine.
func batchMatmul[F Float](be kernels.Backend, transA, transB bool, m, n, k int, alpha F, a []F, strideA int,
	b []F, strideB int, beta F, c []F, strideC int, batch int) {
	if be != nil {
		if a32, ok := any(a).([]float32); ok {
			be.GemmStrided(transA, transB, m, n, k, float32(alpha), a32, strideA, any(b).([]float32), strideB,
				float32(beta), any(c).([]float32), strideC, batch)
			return
		}
	}
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	parallelFor(batch, func(p int) {
		gemmSerial(transA, transB, m, n, k, alpha, a[p*strideA:], lda, b[p*strideB:], ldb, beta, c[p*strideC:], n)
	})
}

// gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, with
// op(A) m×k, op(B) k×n and C m×n:
//
//	for i < m, j < n: C[i][j] = alpha · Σ_l op(A)[i][l]·op(B)[l][j] + beta·C[i][j]
//
// A is stored m×k (k×m when transA) with row stride lda, B is stored k×n
// (n×k when transB) with row stride ldb, C has row stride ldc, so a view of
// columns inside a wider matrix (one attention head inside the q|k|v rows)
// needs no copy. With beta == 0, C is overwritten (NaNs in C do not
// survive).
//
// This is the reference product behind matmul (the float64 model's and
// small float32 ones). The pure-Go loop packs op(A) and op(B)ᵀ into
// contiguous row-major panels where they are not already, so that every
// case runs one micro-kernel: a 2×4 tile of
// dot products over a block of 256 of the inner dimension (two rows of A and
// four of Bᵀ, 6 KiB, in L1), accumulated in registers. Problems of at least
// 2²⁰ multiply-adds are split over GOMAXPROCS goroutines by rows of C (or
// by columns when C has fewer rows than columns).
func gemm[F Float](transA, transB bool, m, n, k int, alpha F, a []F, lda int, b []F, ldb int, beta F, c []F, ldc int) {
	gemmPar(true, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmSerial is gemm on the calling goroutine only, for callers that are
// already parallel (one attention head per goroutine).
func gemmSerial[F Float](transA, transB bool, m, n, k int, alpha F, a []F, lda int, b []F, ldb int, beta F, c []F, ldc int) {
	gemmPar(false, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// parThreshold is the size (m·n·k multiply-adds) from which gemm splits the
// work: below it, starting goroutines costs more than it saves.
const parThreshold = 1 << 20

func gemmPar[F Float](par, transA, transB bool, m, n, k int, alpha F, a []F, lda int, b []F, ldb int, beta F, c []F, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkMat("A", a, ar, ac, lda)
	checkMat("B", b, br, bc, ldb)
	checkMat("C", c, m, n, ldc)
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
	if k == 0 || alpha == 0 {
		return
	}
	// Pack op(A) as m×k and op(B)ᵀ as n×k, both row-major.
	if transA {
		a, lda = transpose(a, lda, k, m), k
	}
	if !transB {
		b, ldb = transpose(b, ldb, k, n), k
	}
	workers := runtime.GOMAXPROCS(0)
	if !par || workers < 2 || m*n*k < parThreshold {
		kernelNT(m, n, k, alpha, a, lda, b, ldb, c, ldc)
		return
	}
	var wg sync.WaitGroup
	if m >= n {
		workers = min(workers, (m+1)/2)
		step := (m/workers + 1) &^ 1 // even, so the 2-row tiles stay whole
		for i0 := 0; i0 < m; i0 += step {
			i1 := min(m, i0+step)
			wg.Add(1)
			go func() {
				defer wg.Done()
				kernelNT(i1-i0, n, k, alpha, a[i0*lda:], lda, b, ldb, c[i0*ldc:], ldc)
			}()
		}
	} else {
		workers = min(workers, (n+3)/4)
		step := (n/workers + 3) &^ 3
		for j0 := 0; j0 < n; j0 += step {
			j1 := min(n, j0+step)
			wg.Add(1)
			go func() {
				defer wg.Done()
				kernelNT(m, j1-j0, k, alpha, a, lda, b[j0*ldb:], ldb, c[j0:], ldc)
			}()
		}
	}
	wg.Wait()
}

func checkMat[F Float](name string, x []F, rows, cols, ld int) {
	if ld < cols || (rows > 0 && len(x) < (rows-1)*ld+cols) {
		panic(fmt.Sprintf("vla: gemm: %s is %d×%d with stride %d but has %d elements", name, rows, cols, ld, len(x)))
	}
}

// transpose returns the cols×rows row-major transpose of the rows×cols
// matrix x with row stride ld.
func transpose[F Float](x []F, ld, rows, cols int) []F {
	t := make([]F, rows*cols)
	const blk = 32
	for i0 := 0; i0 < rows; i0 += blk {
		for j0 := 0; j0 < cols; j0 += blk {
			for i := i0; i < min(rows, i0+blk); i++ {
				row := x[i*ld : i*ld+cols]
				for j := j0; j < min(cols, j0+blk); j++ {
					t[j*rows+i] = row[j]
				}
			}
		}
	}
	return t
}

// kc is the block of the inner dimension one micro-kernel pass covers.
const kc = 256

// nc is the number of rows of Bᵀ one pass over the rows of A reuses (with
// kc, a 128 KiB float32 panel that stays in L2).
const nc = 128

// kernelNT adds alpha·A·Bᵀ to C, A m×k, B n×k, both row-major: blocks of kc
// of the inner dimension and nc rows of B, then 2×4 tiles.
func kernelNT[F Float](m, n, k int, alpha F, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	for l0 := 0; l0 < k; l0 += kc {
		l1 := min(k, l0+kc)
		for j0 := 0; j0 < n; j0 += nc {
			j1 := min(n, j0+nc)
			tileNT(m, j1-j0, l0, l1, alpha, a, lda, b[j0*ldb:], ldb, c[j0:], ldc)
		}
	}
}

// tileNT adds alpha·A[:, l0:l1]·B[:, l0:l1]ᵀ to C (n rows of B).
func tileNT[F Float](m, n, l0, l1 int, alpha F, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	{
		i := 0
		for ; i+2 <= m; i += 2 {
			a0 := a[i*lda+l0 : i*lda+l1]
			a1 := a[(i+1)*lda+l0 : (i+1)*lda+l1]
			a1 = a1[:len(a0)]
			c0 := c[i*ldc : i*ldc+n]
			c1 := c[(i+1)*ldc : (i+1)*ldc+n]
			j := 0
			for ; j+4 <= n; j += 4 {
				b0 := b[j*ldb+l0 : j*ldb+l1]
				b1 := b[(j+1)*ldb+l0 : (j+1)*ldb+l1]
				b2 := b[(j+2)*ldb+l0 : (j+2)*ldb+l1]
				b3 := b[(j+3)*ldb+l0 : (j+3)*ldb+l1]
				b0, b1, b2, b3 = b0[:len(a0)], b1[:len(a0)], b2[:len(a0)], b3[:len(a0)]
				var s00, s01, s02, s03, s10, s11, s12, s13 F
				for l, x0 := range a0 {
					x1 := a1[l]
					y0, y1, y2, y3 := b0[l], b1[l], b2[l], b3[l]
					s00 += x0 * y0
					s01 += x0 * y1
					s02 += x0 * y2
					s03 += x0 * y3
					s10 += x1 * y0
					s11 += x1 * y1
					s12 += x1 * y2
					s13 += x1 * y3
				}
				c0[j] += alpha * s00
				c0[j+1] += alpha * s01
				c0[j+2] += alpha * s02
				c0[j+3] += alpha * s03
				c1[j] += alpha * s10
				c1[j+1] += alpha * s11
				c1[j+2] += alpha * s12
				c1[j+3] += alpha * s13
			}
			for ; j < n; j++ {
				bj := b[j*ldb+l0 : j*ldb+l1]
				bj = bj[:len(a0)]
				var s0, s1 F
				for l, x0 := range a0 {
					s0 += x0 * bj[l]
					s1 += a1[l] * bj[l]
				}
				c0[j] += alpha * s0
				c1[j] += alpha * s1
			}
		}
		if i < m {
			a0 := a[i*lda+l0 : i*lda+l1]
			c0 := c[i*ldc : i*ldc+n]
			j := 0
			for ; j+4 <= n; j += 4 {
				b0 := b[j*ldb+l0 : j*ldb+l1]
				b1 := b[(j+1)*ldb+l0 : (j+1)*ldb+l1]
				b2 := b[(j+2)*ldb+l0 : (j+2)*ldb+l1]
				b3 := b[(j+3)*ldb+l0 : (j+3)*ldb+l1]
				b0, b1, b2, b3 = b0[:len(a0)], b1[:len(a0)], b2[:len(a0)], b3[:len(a0)]
				var s0, s1, s2, s3 F
				for l, x := range a0 {
					s0 += x * b0[l]
					s1 += x * b1[l]
					s2 += x * b2[l]
					s3 += x * b3[l]
				}
				c0[j] += alpha * s0
				c0[j+1] += alpha * s1
				c0[j+2] += alpha * s2
				c0[j+3] += alpha * s3
			}
			for ; j < n; j++ {
				bj := b[j*ldb+l0 : j*ldb+l1]
				bj = bj[:len(a0)]
				var s F
				for l, x := range a0 {
					s += x * bj[l]
				}
				c0[j] += alpha * s
			}
		}
	}
}
