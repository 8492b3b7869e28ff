package telemetry

import (
	"math"
	"sync"
)

// NoGPU is what GPUName returns on a machine without a usable NVIDIA GPU.
// It equals runstore.NoGPU, the value run manifests show in that case.
const NoGPU = "no GPU"

// Sample is the machine's load over one interval. Fields that cannot be
// measured are NaN.
type Sample struct {
	// CPUUtil is the busy fraction of all cores since the previous Sample
	// (or since NewSampler), in [0, 1], from /proc/stat.
	CPUUtil float64
	// GPUUtil is the GPU utilisation in [0, 1] as NVML reports it (mean
	// over the devices); NaN when there is no GPU.
	GPUUtil float64
	// GPUMem is the GPU memory in use in bytes (sum over the devices); NaN
	// when there is no GPU.
	GPUMem float64
}

// gpuReader reads the current utilisation and memory use of the visible
// GPUs. The NVML implementation is in gpu_nvml.go.
type gpuReader interface {
	// sample returns the mean utilisation in [0, 1] and the used memory in
	// bytes, NaN for what could not be read.
	sample() (util, mem float64)
	// close releases the library.
	close()
}

// Sampler takes Samples of this machine. Create it with NewSampler and
// release it with Close. It is safe for concurrent use.
type Sampler struct {
	mu       sync.Mutex
	statPath string
	prev     cpuTimes
	havePrev bool
	last     float64   // CPUUtil of the previous Sample, repeated when no tick elapsed
	gpu      gpuReader // nil without a GPU or after Close
}

// NewSampler opens NVML if it is available and takes the first CPU
// reading. It never fails: without a GPU the GPU fields of every Sample
// are NaN, and without /proc/stat CPUUtil is.
func NewSampler() *Sampler {
	return newSampler(procStat, openGPU())
}

func newSampler(statPath string, gpu gpuReader) *Sampler {
	s := &Sampler{statPath: statPath, last: math.NaN(), gpu: gpu}
	if t, err := readCPUTimes(statPath); err == nil {
		s.prev, s.havePrev = t, true
	}
	return s
}

// Sample measures the load since the previous call (CPU) and now (GPU).
func (s *Sampler) Sample() Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Sample{CPUUtil: math.NaN(), GPUUtil: math.NaN(), GPUMem: math.NaN()}
	if cur, err := readCPUTimes(s.statPath); err == nil {
		if s.havePrev {
			u := cpuUtil(s.prev, cur)
			switch {
			case !math.IsNaN(u):
				s.last, s.prev = u, cur
			case cur.busy < s.prev.busy || cur.idle < s.prev.idle:
				s.prev = cur // counters reset: start a new interval
			}
			// No tick elapsed: keep prev so the interval carries over.
			out.CPUUtil = s.last
		} else {
			s.prev, s.havePrev = cur, true
		}
	}
	if s.gpu != nil {
		out.GPUUtil, out.GPUMem = s.gpu.sample()
	}
	return out
}

// Close releases NVML. Samples taken after Close have NaN GPU fields.
// Calling Close twice is harmless.
func (s *Sampler) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gpu != nil {
		s.gpu.close()
		s.gpu = nil
	}
}

// GPUName describes the visible NVIDIA GPUs, for example "NVIDIA H200" or
// "2 x NVIDIA H200", and returns NoGPU when there is none or NVML is not
// available.
func GPUName() string {
	return gpuName()
}
