// Package telemetry samples how busy the machine is while a run trains: CPU
// utilisation of all cores from /proc/stat and, when an NVIDIA GPU is
// visible, GPU utilisation and memory through NVML (github.com/NVIDIA/go-nvml).
// The trainer takes one Sample per metrics row and stores it in the
// cpu_util, gpu_util and gpu_mem columns (see package runstore).
//
// Typical use:
//
//	s := telemetry.NewSampler() // never fails; a missing GPU is a normal state
//	defer s.Close()
//	for each logging interval {
//		smp := s.Sample()
//		row.CPUUtil, row.GPUUtil, row.GPUMem = smp.CPUUtil, smp.GPUUtil, smp.GPUMem
//	}
//
// # CPU
//
// The aggregate "cpu" line of /proc/stat counts, per state, the clock ticks
// (USER_HZ, normally 100 per second) that all cores together have spent
// since boot. Between two readings
//
//	util = Δbusy / (Δbusy + Δidle)
//	busy = user + nice + system + irq + softirq + steal
//	idle = idle + iowait
//
// which is how top and psutil count it; guest and guest_nice are already
// included in user and nice and are not added again. The result is the
// fraction of the whole machine (all cores, every process, not only this
// one) that was busy since the previous Sample, in [0, 1]. NewSampler takes
// the first reading, so the first Sample covers the time since NewSampler.
// Two Samples within one tick see no elapsed time; the second repeats the
// previous value and the interval carries over to the next call. Where
// /proc/stat cannot be read (not Linux) CPUUtil is NaN.
//
// # GPU
//
// NVML needs cgo and the driver's libnvidia-ml.so.1 at run time, not at
// build time. On a machine without the library nvml.Init returns
// ERROR_LIBRARY_NOT_FOUND; the sampler then reports NaN for the GPU fields
// and GPUName returns NoGPU ("no GPU"), the value that run manifests show.
// Builds without cgo or for other systems than Linux use a stub with the
// same behaviour (gpu_stub.go). With several GPUs, GPUUtil is the mean
// utilisation of the devices and GPUMem the sum of their used memory in
// bytes, as nvidia-smi counts it (without the driver's own reservation,
// where the driver can tell them apart). NVML's utilisation is the share of its own sample period (between
// 1/6 s and 1 s, depending on the product) in which a kernel was running,
// not an average since the previous Sample.
//
// A Sampler is safe for concurrent use. Checked on an NVIDIA H200: the
// name reads "NVIDIA H200" and an idle device 0 utilisation and 0 bytes,
// as nvidia-smi shows.
package telemetry
