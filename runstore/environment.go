package runstore

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
)

// NoGPU is the Hardware.GPU value of a machine without a visible GPU.
const NoGPU = "no GPU"

// BuildInfo records the binary that produced a run, from debug.ReadBuildInfo.
type BuildInfo struct {
	GoVersion string            `json:"go_version"`
	Module    string            `json:"module"`             // main module path
	Version   string            `json:"version"`            // main module version, "(devel)" for a local build
	Revision  string            `json:"revision,omitempty"` // VCS revision, "+dirty" appended for a modified tree, when stamped
	Deps      map[string]string `json:"deps,omitempty"`     // module path -> version ("v1 => path v2" when replaced)
}

// NewBuildInfo describes the running binary. Outside a module-aware build
// (debug.ReadBuildInfo fails) only GoVersion is set.
func NewBuildInfo() BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return buildInfoFrom(info)
}

// buildInfoFrom converts the runtime's build information; info may be nil.
func buildInfoFrom(info *debug.BuildInfo) BuildInfo {
	bi := BuildInfo{GoVersion: runtime.Version()}
	if info == nil {
		return bi
	}
	if info.GoVersion != "" {
		bi.GoVersion = info.GoVersion
	}
	bi.Module, bi.Version = info.Main.Path, info.Main.Version
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			bi.Revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && bi.Revision != "" {
		bi.Revision += "+dirty"
	}
	if len(info.Deps) > 0 {
		bi.Deps = make(map[string]string, len(info.Deps))
		for _, d := range info.Deps {
			v := d.Version
			if d.Replace != nil {
				v = strings.TrimSpace(fmt.Sprintf("%s => %s %s", d.Version, d.Replace.Path, d.Replace.Version))
			}
			bi.Deps[d.Path] = v
		}
	}
	return bi
}

// Hardware records the machine a run's process ran on.
type Hardware struct {
	CPUs     int    `json:"cpus"`      // logical CPUs usable by the process (runtime.NumCPU)
	CPUModel string `json:"cpu_model"` // from /proc/cpuinfo when present, else GOARCH
	GPU      string `json:"gpu"`       // e.g. "NVIDIA H200" or "2 x NVIDIA H200"; NoGPU when absent
	Platform string `json:"platform"`  // GOOS/GOARCH
}

// NewHardware describes this machine. The CPU model comes from
// /proc/cpuinfo and the GPU from the NVIDIA driver's
// /proc/driver/nvidia/gpus/*/information files when they exist; this needs
// no cgo. Callers with richer device discovery (NVML in the worker) may
// overwrite GPU.
func NewHardware() Hardware {
	return hardwareFrom("/proc")
}

// hardwareFrom reads the machine description below procRoot (normally
// "/proc"; tests point it at a fixture).
func hardwareFrom(procRoot string) Hardware {
	h := Hardware{
		CPUs:     runtime.NumCPU(),
		CPUModel: runtime.GOARCH,
		GPU:      NoGPU,
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	if f, err := os.Open(filepath.Join(procRoot, "cpuinfo")); err == nil {
		if m := cpuModel(f); m != "" {
			h.CPUModel = m
		}
		f.Close()
	}
	infos, _ := filepath.Glob(filepath.Join(procRoot, "driver", "nvidia", "gpus", "*", "information"))
	slices.Sort(infos)
	var models []string
	for _, path := range infos {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		if m := keyValue(f, "Model"); m != "" {
			models = append(models, m)
		}
		f.Close()
	}
	if len(models) > 0 {
		h.GPU = SummarizeGPUModels(models)
	}
	return h
}

// cpuModel returns the first processor name in a /proc/cpuinfo listing:
// "model name" on x86, "Model" or "Hardware" on ARM.
func cpuModel(r io.Reader) string {
	data, err := io.ReadAll(r)
	if err != nil {
		return ""
	}
	for _, key := range []string{"model name", "Model", "Hardware"} {
		if v := keyValue(strings.NewReader(string(data)), key); v != "" {
			return v
		}
	}
	return ""
}

// keyValue returns the value of the first "key : value" line whose key is
// exactly key, with surrounding blanks trimmed.
func keyValue(r io.Reader, key string) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// SummarizeGPUModels turns a list of GPU model names into one line, grouping
// equal models: ["B", "A", "A"] -> "2 x A, B". Run manifests use this format, whether
// the names came from /proc (NewHardware) or from NVML (activities/telemetry).
func SummarizeGPUModels(models []string) string {
	models = slices.Sorted(slices.Values(models))
	var parts []string
	for i := 0; i < len(models); {
		j := i
		for j < len(models) && models[j] == models[i] {
			j++
		}
		if n := j - i; n > 1 {
			parts = append(parts, fmt.Sprintf("%d x %s", n, models[i]))
		} else {
			parts = append(parts, models[i])
		}
		i = j
	}
	return strings.Join(parts, ", ")
}
