//go:build linux && cgo

package telemetry

import (
	"math"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlGPUs reads every device NVML lists. It holds one Init of its own
// library handle until close.
type nvmlGPUs struct {
	lib     nvml.Interface
	devices []nvml.Device
}

// openGPU opens NVML through a library handle of its own (no package-level
// state), or returns nil when there is no usable GPU.
func openGPU() gpuReader {
	g := openNVML(nvml.New())
	if g == nil {
		return nil // a nil *nvmlGPUs in the interface would not compare equal to nil
	}
	return g
}

// openNVML initialises lib and collects its devices. It returns nil, with
// lib shut down again, when the library is missing (ERROR_LIBRARY_NOT_FOUND
// on a machine without the driver), fails to initialise or lists no device.
func openNVML(lib nvml.Interface) *nvmlGPUs {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil
	}
	n, ret := lib.DeviceGetCount()
	g := &nvmlGPUs{lib: lib}
	if ret == nvml.SUCCESS {
		for i := range n {
			if d, ret := lib.DeviceGetHandleByIndex(i); ret == nvml.SUCCESS {
				g.devices = append(g.devices, d)
			}
		}
	}
	if len(g.devices) == 0 {
		lib.Shutdown()
		return nil
	}
	return g
}

// sample averages utilisation and sums used memory over the devices that
// answer; with none answering both are NaN.
func (g *nvmlGPUs) sample() (util, mem float64) {
	var utilSum, memSum float64
	var nUtil, nMem int
	for _, d := range g.devices {
		if u, ret := d.GetUtilizationRates(); ret == nvml.SUCCESS {
			utilSum += float64(u.Gpu) / 100 // NVML reports percent
			nUtil++
		}
		if used, ok := usedMemory(d); ok {
			memSum += used
			nMem++
		}
	}
	util, mem = math.NaN(), math.NaN()
	if nUtil > 0 {
		util = utilSum / float64(nUtil)
	}
	if nMem > 0 {
		mem = memSum
	}
	return util, mem
}

// usedMemory is the memory in use on d in bytes, as nvidia-smi shows it.
// The v2 query leaves out the memory the driver reserves for itself
// (about 600 MiB on an idle H200); drivers without it (before r510)
// answer only the v1 query, which counts that reservation as used.
func usedMemory(d nvml.Device) (float64, bool) {
	if m, ret := d.GetMemoryInfo_v2(); ret == nvml.SUCCESS {
		return float64(m.Used), true
	}
	if m, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
		return float64(m.Used), true
	}
	return 0, false
}

func (g *nvmlGPUs) close() { g.lib.Shutdown() }

// names returns the model name of every device, "unknown NVIDIA GPU" for
// one that does not say.
func (g *nvmlGPUs) names() []string {
	out := make([]string, len(g.devices))
	for i, d := range g.devices {
		name, ret := d.GetName()
		if ret != nvml.SUCCESS || name == "" {
			name = "unknown NVIDIA GPU"
		}
		out[i] = name
	}
	return out
}

func gpuName() string {
	return gpuNameFrom(nvml.New())
}

// gpuNameFrom describes the devices of lib and shuts it down again.
func gpuNameFrom(lib nvml.Interface) string {
	g := openNVML(lib)
	if g == nil {
		return NoGPU
	}
	defer g.close()
	return summarizeModels(g.names())
}
