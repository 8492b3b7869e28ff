package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accerl/accerl/kernels/kbench"
)

// bench kernels on one small shape prints kbench's table and writes its report as JSON.
func TestBenchKernelsOneShape(t *testing.T) {
	out := filepath.Join(t.TempDir(), "kernels.json")
	stdout, stderr, err := runCLI(t, "bench", "kernels", "--shapes", "vla-proj", "--min-time", "5ms", "--threads", "1", "--no-cuda", "--json", out)
	if err != nil {
		t.Fatalf("bench kernels: %v\n%s%s", err, stdout, stderr)
	}
	if !strings.Contains(stdout, "vla-proj") || !strings.Contains(stdout, "150×128×128") || !strings.Contains(stdout, "(GFLOP/s;") {
		t.Errorf("output lacks the vla-proj row:\n%s", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep kbench.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("parse %s: %v", out, err)
	}
	if len(rep.Results) != 1 || rep.Results[0].Name != "vla-proj" || rep.Results[0].CPU1 <= 0 || rep.Threads != 1 || rep.CUDA != "skipped" {
		t.Errorf("report %+v, want one vla-proj result on 1 thread without CUDA", rep)
	}
}
