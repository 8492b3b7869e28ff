//go:build !openblas

package kbench

// OpenBLASAvailable reports false: this binary was built without
// -tags openblas (see openblas_enabled.go).
func OpenBLASAvailable() (bool, string) { return false, "not built with -tags openblas" }

// OpenBLASSetThreads does nothing without -tags openblas.
func OpenBLASSetThreads(int) {}

// OpenBLASSgemm panics without -tags openblas; check [OpenBLASAvailable]
// first.
func OpenBLASSgemm(transA, transB bool, m, n, k int, alpha float32, a, b []float32, beta float32, c []float32) {
	panic("kbench: OpenBLASSgemm: not built with -tags openblas")
}
