package telemetry

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/accerl/accerl/runstore"
)

// procStatA and procStatB are two readings of a 2-core machine, 100 ticks
// per core (200 in all) apart. Aggregate line, field by field:
//
//	        user nice system idle iowait irq softirq steal guest guest_nice
//	A:      1000   10    500 8000    100  20      30     5    40          0
//	B:      1070   10    520 8090    110  21      34     5    45          0
//
// busy A = 1000+10+500+20+30+5 = 1565, idle A = 8000+100 = 8100;
// busy B = 1070+10+520+21+34+5 = 1660, idle B = 8090+110 = 8200.
// Δbusy = 95, Δidle = 100, so util = 95/195. The guest ticks (+5) are
// inside user already and must not be added.
const (
	procStatA = `cpu  1000 10 500 8000 100 20 30 5 40 0
cpu0 500 5 250 4000 50 10 15 3 20 0
cpu1 500 5 250 4000 50 10 15 2 20 0
intr 123456 0 0
ctxt 987654
btime 1700000000
`
	procStatB = `cpu  1070 10 520 8090 110 21 34 5 45 0
cpu0 530 5 260 4050 55 11 17 3 22 0
cpu1 540 5 260 4040 55 10 17 2 23 0
intr 123999 0 0
`
)

func TestParseProcStat(t *testing.T) {
	a, err := parseProcStat(strings.NewReader(procStatA))
	if err != nil {
		t.Fatal(err)
	}
	if a != (cpuTimes{busy: 1565, idle: 8100}) {
		t.Errorf("reading A = %+v, want busy 1565 idle 8100", a)
	}
	b, err := parseProcStat(strings.NewReader(procStatB))
	if err != nil {
		t.Fatal(err)
	}
	// Integer tick counts: the quotient is the only rounding step.
	if got, want := cpuUtil(a, b), 95.0/195.0; math.Abs(got-want) > 1e-15 {
		t.Errorf("util A->B = %v, want %v", got, want)
	}

	// A pre-2.6.11 kernel prints only user, nice, system, idle:
	// busy = 1+2+3 = 6, idle = 4.
	old, err := parseProcStat(strings.NewReader("cpu 1 2 3 4\n"))
	if err != nil || old != (cpuTimes{busy: 6, idle: 4}) {
		t.Errorf("4-field line = %+v, %v", old, err)
	}

	for name, text := range map[string]string{
		"no aggregate line": "cpu0 1 2 3 4\nintr 5\n",
		"too few fields":    "cpu 1 2 3\n",
		"not a number":      "cpu 1 2 x 4 5\n",
		"empty":             "",
	} {
		if _, err := parseProcStat(strings.NewReader(text)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestCPUUtilEdges(t *testing.T) {
	a := cpuTimes{busy: 10, idle: 90}
	if !math.IsNaN(cpuUtil(a, a)) {
		t.Error("no elapsed tick should give NaN")
	}
	if !math.IsNaN(cpuUtil(a, cpuTimes{busy: 5, idle: 100})) {
		t.Error("counters going backwards should give NaN")
	}
	if got := cpuUtil(a, cpuTimes{busy: 30, idle: 90}); got != 1 {
		t.Errorf("all-busy interval = %v, want 1", got)
	}
	if got := cpuUtil(a, cpuTimes{busy: 10, idle: 190}); got != 0 {
		t.Errorf("all-idle interval = %v, want 0", got)
	}
}

// TestSamplerFromFile drives a Sampler through hand-made /proc/stat files.
func TestSamplerFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stat")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(procStatA)
	s := newSampler(path, nil)
	defer s.Close()

	write(procStatB)
	got := s.Sample()
	if math.Abs(got.CPUUtil-95.0/195.0) > 1e-15 || !math.IsNaN(got.GPUUtil) || !math.IsNaN(got.GPUMem) {
		t.Errorf("first sample = %+v, want CPU 95/195 and NaN GPU fields", got)
	}
	// Same counters again: no tick elapsed, the previous value repeats.
	if again := s.Sample(); again.CPUUtil != got.CPUUtil {
		t.Errorf("sample without elapsed ticks = %v, want the previous %v", again.CPUUtil, got.CPUUtil)
	}
	// From B, 20 busy and 180 idle ticks later: 20/200 = 0.1.
	write("cpu  1090 10 520 8260 120 21 34 5 45 0\n")
	if got := s.Sample(); math.Abs(got.CPUUtil-0.1) > 1e-15 {
		t.Errorf("second interval = %v, want 0.1", got.CPUUtil)
	}

	missing := newSampler(filepath.Join(t.TempDir(), "absent"), nil)
	if got := missing.Sample(); !math.IsNaN(got.CPUUtil) {
		t.Errorf("without /proc/stat CPUUtil = %v, want NaN", got.CPUUtil)
	}
}

// TestSamplerThisMachine samples the real machine after some busy work.
func TestSamplerThisMachine(t *testing.T) {
	if _, err := os.Stat(procStat); err != nil {
		t.Skip("no /proc/stat on this system")
	}
	s := NewSampler()
	defer s.Close()
	// Spin for 200 ms: at USER_HZ = 100 that is about 20 busy ticks of
	// this core, so the busy count cannot stay at zero.
	x := 1.0
	for start := time.Now(); time.Since(start) < 200*time.Millisecond; {
		for i := range 1000 {
			x = x*1.0000001 + float64(i&1)
		}
	}
	sink = x
	got := s.Sample()
	if !(got.CPUUtil > 0 && got.CPUUtil <= 1) {
		t.Errorf("CPUUtil after busy work = %v, want in (0, 1]", got.CPUUtil)
	}
	if GPUName() == NoGPU {
		if !math.IsNaN(got.GPUUtil) || !math.IsNaN(got.GPUMem) {
			t.Errorf("no GPU, but GPU fields = %v, %v", got.GPUUtil, got.GPUMem)
		}
	} else {
		// A GPU machine (the device check): NVML must answer.
		if !(got.GPUUtil >= 0 && got.GPUUtil <= 1) || !(got.GPUMem >= 0) {
			t.Errorf("GPU %s: util %v, mem %v", GPUName(), got.GPUUtil, got.GPUMem)
		}
		t.Logf("GPU %s: util %v, mem %.0f bytes", GPUName(), got.GPUUtil, got.GPUMem)
	}
	s.Close()
	s.Close() // twice is harmless
	if after := s.Sample(); !math.IsNaN(after.GPUUtil) {
		t.Errorf("GPU util after Close = %v, want NaN", after.GPUUtil)
	}
}

var sink float64

func TestSummarizeModels(t *testing.T) {
	if got := summarizeModels([]string{"B", "A", "A"}); got != "2 x A, B" {
		t.Errorf("summarizeModels = %q", got)
	}
	if got := summarizeModels([]string{"NVIDIA H200"}); got != "NVIDIA H200" {
		t.Errorf("one model = %q", got)
	}
}

func TestNoGPUMatchesManifests(t *testing.T) {
	if NoGPU != runstore.NoGPU {
		t.Errorf("telemetry.NoGPU = %q, runstore.NoGPU = %q: manifests and samplers would disagree", NoGPU, runstore.NoGPU)
	}
}
