//go:build !(linux && cgo)

package telemetry

// Without cgo, or on systems other than Linux, NVML cannot be loaded: there
// is never a GPU to sample.

func openGPU() gpuReader { return nil }

func gpuName() string { return NoGPU }
