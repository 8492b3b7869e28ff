//go:build openblas

package kbench

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// OpenBLASAvailable reports whether this binary was built with -tags openblas
// and links OpenBLAS (see openblas_disabled.go for the stub), and which
// build: OpenBLAS's configuration string.
//
// The cgo wrapper lives here rather than in package kernels because the Go
// toolchain refuses Go assembly (kernels/gemm_amd64.s) in a package that
// uses cgo.
func OpenBLASAvailable() (bool, string) {
	return true, C.GoString(C.openblas_get_config())
}

// OpenBLASSetThreads sets the number of threads OpenBLAS uses (1 for
// single-core comparisons).
func OpenBLASSetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// OpenBLASSgemm computes C = alpha*op(A)*op(B) + beta*C with cblas_sgemm, the
// semantics of [kernels.Backend.Gemm]. It exists for benchmarks only; no
// model uses it.
func OpenBLASSgemm(transA, transB bool, m, n, k int, alpha float32, a, b []float32, beta float32, c []float32) {
	if len(a) < m*k || len(b) < k*n || len(c) < m*n {
		panic(fmt.Sprintf("kbench: OpenBLASSgemm: slice shorter than its matrix (m=%d n=%d k=%d)", m, n, k))
	}
	if m == 0 || n == 0 {
		return
	}
	ta, lda := uint32(C.CblasNoTrans), max(k, 1)
	if transA {
		ta, lda = uint32(C.CblasTrans), max(m, 1)
	}
	tb, ldb := uint32(C.CblasNoTrans), max(n, 1)
	if transB {
		tb, ldb = uint32(C.CblasTrans), max(k, 1)
	}
	var pa, pb *float32
	if k > 0 {
		pa, pb = &a[0], &b[0]
	}
	C.cblas_sgemm(C.CblasRowMajor, ta, tb, C.blasint(m), C.blasint(n), C.blasint(k), C.float(alpha),
		(*C.float)(unsafe.Pointer(pa)), C.blasint(lda), (*C.float)(unsafe.Pointer(pb)), C.blasint(ldb),
		C.float(beta), (*C.float)(unsafe.Pointer(&c[0])), C.blasint(n))
}
