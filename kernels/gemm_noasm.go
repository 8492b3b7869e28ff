//go:build !amd64 || noasm

package kernels

// gemmHaveAsm is false without the amd64 assembly (see gemm_amd64.go).
const gemmHaveAsm = false

// gemmKernelAsm falls back to the portable kernel.
var gemmKernelAsm gemmKernel = gemmKernelGo
