//go:build !(linux && (amd64 || arm64))

package kernels

import (
	"errors"
	"time"
)

// CUDA is the GPU backend; on this platform it is never available (the
// run-time loader in cuda_loader.go is Linux-only).
type CUDA struct{ referenceBackend }

var _ Backend = (*CUDA)(nil)

var errNoCUDA = errors.New("cuda: the CUDA backend is built for linux/amd64 and linux/arm64 only")

// CUDAAvailable reports false on this platform.
func CUDAAvailable() (ok bool, reason string) { return false, errNoCUDA.Error() }

// NewCUDA returns an error on this platform.
func NewCUDA() (*CUDA, error) { return nil, errNoCUDA }

// Close does nothing.
func (c *CUDA) Close() error { return nil }

// TimeGemm returns an error on this platform.
func (c *CUDA) TimeGemm(transA, transB bool, m, n, k int, minTime time.Duration) (float64, error) {
	return 0, errNoCUDA
}

// cudaLoaderBuilt is false: no run-time loader on this platform.
const cudaLoaderBuilt = false

func cudaLibDirs() []string { return nil }
