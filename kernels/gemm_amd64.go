//go:build amd64 && !noasm

package kernels

import "golang.org/x/sys/cpu"

// gemmHaveAsm reports whether this CPU runs the AVX2/FMA micro-kernel of
// gemm_amd64.s. The complementary file gemm_noasm.go sets it false.
var gemmHaveAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// gemmKernelAsm is the 6×16 AVX2/FMA micro-kernel (see gemmKernel for the
// contract): 12 ymm accumulators hold the C tile, two ymm registers a row
// of the B micro-panel, and each A element is broadcast once.
var gemmKernelAsm gemmKernel = sgemmKernel6x16

// sgemmKernel6x16 is implemented in gemm_amd64.s.
//
//go:noescape
func sgemmKernel6x16(kc int, a *float32, rsa, psa int, b, c *float32, ldc int, alpha float32)
