//go:build linux && cgo

package telemetry

import (
	"math"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// fakeNVML is a mock library with the given devices; it counts Init and
// Shutdown calls so tests can check that every Init is paired.
type fakeNVML struct {
	*mock.Interface
	inits, shutdowns int
}

func newFakeNVML(initRet nvml.Return, devices ...*mock.Device) *fakeNVML {
	f := &fakeNVML{}
	f.Interface = &mock.Interface{
		InitFunc:           func() nvml.Return { f.inits++; return initRet },
		ShutdownFunc:       func() nvml.Return { f.shutdowns++; return nvml.SUCCESS },
		DeviceGetCountFunc: func() (int, nvml.Return) { return len(devices), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			return devices[i], nvml.SUCCESS
		},
	}
	return f
}

// fakeDevice answers with the given utilisation and used memory; a lost
// device answers nothing. Its v1 memory query adds a 600 MiB driver
// reservation that the v2 query leaves out.
func fakeDevice(name string, utilPercent uint32, usedBytes uint64, ok bool) *mock.Device {
	ret := nvml.SUCCESS
	if !ok {
		ret = nvml.ERROR_GPU_IS_LOST
	}
	return &mock.Device{
		GetNameFunc:             func() (string, nvml.Return) { return name, nvml.SUCCESS },
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: utilPercent}, ret },
		GetMemoryInfoFunc:       func() (nvml.Memory, nvml.Return) { return nvml.Memory{Used: usedBytes + 600<<20}, ret },
		GetMemoryInfo_v2Func: func() (nvml.Memory_v2, nvml.Return) {
			return nvml.Memory_v2{Used: usedBytes, Reserved: 600 << 20}, ret
		},
	}
}

// oldDriverDevice has no v2 memory query: the v1 answer, reservation
// included, is all there is.
func oldDriverDevice(usedBytes uint64) *mock.Device {
	d := fakeDevice("Tesla V100", 50, usedBytes, true)
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, nvml.ERROR_FUNCTION_NOT_FOUND }
	return d
}

func TestNVMLSampleAcrossDevices(t *testing.T) {
	// Two devices at 30% and 80%: mean 0.55. Memory 1 GiB + 3 GiB = 4 GiB.
	// A third, lost device is left out of both.
	lib := newFakeNVML(nvml.SUCCESS,
		fakeDevice("NVIDIA H200", 30, 1<<30, true),
		fakeDevice("NVIDIA H200", 80, 3<<30, true),
		fakeDevice("NVIDIA H200", 99, 7<<30, false))
	g := openNVML(lib)
	if g == nil {
		t.Fatal("openNVML returned nil with three devices")
	}
	s := newSampler("/nonexistent/stat", g)
	got := s.Sample()
	// 0.3 + 0.8 and the halving each round once.
	if math.Abs(got.GPUUtil-0.55) > 1e-15 || got.GPUMem != 4<<30 {
		t.Errorf("sample = %+v, want util 0.55 and 4 GiB", got)
	}
	if name := summarizeModels(g.names()); name != "3 x NVIDIA H200" {
		t.Errorf("names = %q", name)
	}
	// Without the v2 query the v1 value counts: 1 GiB + 600 MiB reserved.
	if _, mem := openNVML(newFakeNVML(nvml.SUCCESS, oldDriverDevice(1<<30))).sample(); mem != 1<<30+600<<20 {
		t.Errorf("old driver: used memory %v, want 1 GiB + 600 MiB", mem)
	}
	s.Close()
	if lib.inits != 1 || lib.shutdowns != 1 {
		t.Errorf("Init %d times, Shutdown %d times; want 1 and 1", lib.inits, lib.shutdowns)
	}

	// Every device lost: NaN, not zero.
	lost := openNVML(newFakeNVML(nvml.SUCCESS, fakeDevice("X", 1, 1, false)))
	if u, m := lost.sample(); !math.IsNaN(u) || !math.IsNaN(m) {
		t.Errorf("all devices lost: %v, %v; want NaN, NaN", u, m)
	}
}

func TestNVMLAbsent(t *testing.T) {
	// The library is not installed: Init fails and nothing else is called.
	missing := newFakeNVML(nvml.ERROR_LIBRARY_NOT_FOUND)
	if g := openNVML(missing); g != nil {
		t.Error("openNVML without a library returned a reader")
	}
	if got := gpuNameFrom(newFakeNVML(nvml.ERROR_LIBRARY_NOT_FOUND)); got != NoGPU {
		t.Errorf("GPU name without NVML = %q, want %q", got, NoGPU)
	}
	// Initialised but no device: shut down again and report no GPU.
	empty := newFakeNVML(nvml.SUCCESS)
	if got := gpuNameFrom(empty); got != NoGPU || empty.inits != 1 || empty.shutdowns != 1 {
		t.Errorf("no devices: name %q, inits %d, shutdowns %d", got, empty.inits, empty.shutdowns)
	}
	two := newFakeNVML(nvml.SUCCESS, fakeDevice("NVIDIA A100", 0, 0, true), fakeDevice("NVIDIA H200", 0, 0, true))
	if got := gpuNameFrom(two); got != "NVIDIA A100, NVIDIA H200" || two.shutdowns != 1 {
		t.Errorf("two models: %q (shutdowns %d)", got, two.shutdowns)
	}
}
