package runstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestRunSummaryNaNRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run", SummaryFile)
	in := RunSummary{Status: StatusRunning, EnvSteps: 4096, Updates: 8, FinalReturn: math.NaN(),
		StepsPerS: 812.5, WallS: math.Inf(1), Segments: 1, Updated: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	if err := WriteJSON(path, in); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"final_return": null`, `"wall_s": null`, `"steps_per_s": 812.5`, `"env_steps": 4096`, `"status": "running"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("summary.json lacks %s:\n%s", want, raw)
		}
	}
	var out RunSummary
	if err := ReadJSON(path, &out); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(out.FinalReturn) || !math.IsNaN(out.WallS) || out.StepsPerS != 812.5 ||
		out.EnvSteps != 4096 || out.Segments != 1 || !out.Updated.Equal(in.Updated) {
		t.Errorf("round trip = %+v", out)
	}
	// An older summary without the float fields reads them as NaN, not 0.
	var old RunSummary
	if err := json.Unmarshal([]byte(`{"status":"completed","env_steps":3}`), &old); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(old.FinalReturn) || old.EnvSteps != 3 {
		t.Errorf("old summary = %+v", old)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("run dir holds %d entries, want only summary.json (no temp files)", len(entries))
	}
}

func TestManifestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	exp := ExperimentManifest{Name: "quickstart", SpecHash: "abc123", Baseline: "sync", Arms: []string{"sync", "async"},
		Seeds: []uint64{1, 18446744073709551615}, Spec: json.RawMessage(`{"env":"CartPole-v1"}`),
		Created: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := WriteJSON(filepath.Join(dir, ExperimentFile), exp); err != nil {
		t.Fatal(err)
	}
	var gotExp ExperimentManifest
	if err := ReadJSON(filepath.Join(dir, ExperimentFile), &gotExp); err != nil {
		t.Fatal(err)
	}
	if gotExp.Name != exp.Name || gotExp.Seeds[1] != exp.Seeds[1] || compact(t, gotExp.Spec) != string(exp.Spec) ||
		gotExp.Arms[1] != "async" || !gotExp.Created.Equal(exp.Created) {
		t.Errorf("experiment manifest round trip = %+v", gotExp)
	}
	run := RunManifest{Experiment: "quickstart", Arm: "async", Seed: 7, SpecHash: "abc123",
		Config: json.RawMessage(`{"lr":0.0003}`), Build: NewBuildInfo(), Hardware: NewHardware()}
	path := filepath.Join(RunDir(dir, "async", 7), RunFile)
	if err := WriteJSON(path, run); err != nil {
		t.Fatal(err)
	}
	var gotRun RunManifest
	if err := ReadJSON(path, &gotRun); err != nil {
		t.Fatal(err)
	}
	if gotRun.Seed != 7 || gotRun.Build.GoVersion != run.Build.GoVersion || gotRun.Hardware.CPUs != run.Hardware.CPUs ||
		compact(t, gotRun.Config) != `{"lr":0.0003}` {
		t.Errorf("run manifest round trip = %+v", gotRun)
	}
	if want := filepath.Join(dir, "async", "seed-7", "manifest.json"); path != want {
		t.Errorf("RunDir path = %q, want %q", path, want)
	}
}

// compact removes the indentation WriteJSON adds inside raw messages.
func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestJSONErrors(t *testing.T) {
	dir := t.TempDir()
	var s RunSummary
	if err := ReadJSON(filepath.Join(dir, "missing.json"), &s); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ReadJSON(bad, &s); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("bad file: err = %v", err)
	}
	if err := WriteJSON(filepath.Join(dir, "chan.json"), make(chan int)); err == nil {
		t.Error("WriteJSON(chan) succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "chan.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("failed WriteJSON left a file: %v", err)
	}
}

func TestHardwareFromProc(t *testing.T) {
	root := t.TempDir()
	writeFile := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := hardwareFrom(root)
	if h.GPU != NoGPU || h.CPUModel != runtime.GOARCH || h.CPUs != runtime.NumCPU() {
		t.Errorf("empty proc: %+v", h)
	}
	writeFile("cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\n\nprocessor\t: 1\nmodel name\t: other\n")
	writeFile("driver/nvidia/gpus/0000:19:00.0/information", "Model: \t\t NVIDIA H200\nIRQ:   42\n")
	writeFile("driver/nvidia/gpus/0000:3b:00.0/information", "Model: \t\t NVIDIA H200\n")
	writeFile("driver/nvidia/gpus/0000:05:00.0/information", "Model: \t\t NVIDIA A10\n")
	h = hardwareFrom(root)
	if h.CPUModel != "AMD EPYC 9654 96-Core Processor" {
		t.Errorf("CPUModel = %q", h.CPUModel)
	}
	if want := "NVIDIA A10, 2 x NVIDIA H200"; h.GPU != want {
		t.Errorf("GPU = %q, want %q", h.GPU, want)
	}
	if got := cpuModel(strings.NewReader("processor : 0\nHardware : BCM2835\nModel : Raspberry Pi 4\n")); got != "Raspberry Pi 4" {
		t.Errorf("ARM cpuModel = %q", got)
	}
}

// TestNewHardwareHere describes the machine the test runs on; run with -v
// to see it. On a GPU host it shows whether the driver's proc files were
// found.
func TestNewHardwareHere(t *testing.T) {
	h := NewHardware()
	t.Logf("NewHardware() = %+v", h)
	if h.CPUs < 1 || h.CPUModel == "" || h.GPU == "" || h.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("NewHardware() = %+v", h)
	}
}

func TestNewBuildInfo(t *testing.T) {
	bi := NewBuildInfo()
	if bi.GoVersion != runtime.Version() {
		t.Errorf("GoVersion = %q, want %q", bi.GoVersion, runtime.Version())
	}
	if bi.Module != "github.com/accerl/accerl" {
		t.Errorf("Module = %q", bi.Module)
	}
	// Test binaries record no dependencies, so check the conversion on a
	// hand-made build info.
	info := &debug.BuildInfo{
		GoVersion: "go1.99.0",
		Main:      debug.Module{Path: "example.com/m", Version: "v1.2.3"},
		Deps: []*debug.Module{
			{Path: "example.com/a", Version: "v0.1.0"},
			{Path: "example.com/b", Version: "v2.0.0", Replace: &debug.Module{Path: "../b", Version: ""}},
		},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "deadbeef"}, {Key: "vcs.modified", Value: "true"}},
	}
	got := buildInfoFrom(info)
	want := BuildInfo{GoVersion: "go1.99.0", Module: "example.com/m", Version: "v1.2.3", Revision: "deadbeef+dirty",
		Deps: map[string]string{"example.com/a": "v0.1.0", "example.com/b": "v2.0.0 => ../b"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("buildInfoFrom = %+v\nwant %+v", got, want)
	}
}
