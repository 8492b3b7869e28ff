package kernels

import "unsafe"

// gemmKernelGo is the portable 6×16 micro-kernel: the same contract as the
// assembly one (see gemmKernel), 96 float32 accumulators in a local array.
func gemmKernelGo(kc int, a *float32, rsa, psa int, b, c *float32, ldc int, alpha float32) {
	ap := unsafe.Slice(a, (gemmMR-1)*rsa+(kc-1)*psa+1)
	bp := unsafe.Slice(b, kc*gemmNR)
	var acc [gemmMR][gemmNR]float32
	for p := 0; p < kc; p++ {
		bv := (*[gemmNR]float32)(bp[p*gemmNR : (p+1)*gemmNR])
		for r := range gemmMR {
			ar := ap[r*rsa+p*psa]
			row := &acc[r]
			for j := range gemmNR {
				row[j] += ar * bv[j]
			}
		}
	}
	for r := range gemmMR {
		crow := (*[gemmNR]float32)(unsafe.Add(unsafe.Pointer(c), r*ldc*4))
		for j := range gemmNR {
			crow[j] += alpha * acc[r][j]
		}
	}
}
