package specs_test

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/accerl/accerl/jsondur"
	"github.com/accerl/accerl/specs"
)

// TestExamplesValidate parses every spec shipped in examples/ and requires
// it to produce no diagnostic at all, warnings included.
func TestExamplesValidate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			exp, diags := specs.ParseFile(path, nil)
			if len(diags) > 0 {
				t.Fatalf("diagnostics:\n%s", diags.Error())
			}
			if len(exp.Runs()) == 0 {
				t.Error("example expands to no runs")
			}
		})
	}
}

// TestQuickstartShape pins what the quickstart example promises in its
// comments: CartPole, base (async) and sync arms, seeds [1, 2], 60k steps.
func TestQuickstartShape(t *testing.T) {
	exp, diags := specs.ParseFile(filepath.Join("..", "examples", "quickstart.hcl"), nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if got := armNames(exp); !reflect.DeepEqual(got, []string{"base", "sync"}) {
		t.Errorf("arms = %v, want [base sync]", got)
	}
	if !reflect.DeepEqual(exp.Seeds, []uint64{1, 2}) {
		t.Errorf("seeds = %v, want [1 2]", exp.Seeds)
	}
	if n := len(exp.Runs()); n != 4 {
		t.Errorf("%d runs, want 4", n)
	}
	base, sync := exp.Arms[0].Config, exp.Arms[1].Config
	if base.Env.Kind != "cartpole" || base.Env.Latency.Kind != "none" {
		t.Errorf("env = %+v, want cartpole without latency", base.Env)
	}
	if base.Budget.EnvSteps != 60000 || base.Pipeline.Mode != "async" || sync.Pipeline.Mode != "sync" {
		t.Errorf("steps/modes = %d/%s/%s, want 60000/async/sync",
			base.Budget.EnvSteps, base.Pipeline.Mode, sync.Pipeline.Mode)
	}
	if base.Pipeline.Workers != 4 || base.Pipeline.EnvsPerWorker != 2 || base.Algorithm.BatchSteps != 512 ||
		base.Checkpoint.Every != 20 || base.Algorithm.LearningRate != 2.5e-4 {
		t.Errorf("pipeline/algorithm = %+v / %+v", base.Pipeline, base.Algorithm)
	}
	// The sync arm differs from the base in the mode only.
	sync.Pipeline.Mode = base.Pipeline.Mode
	if !reflect.DeepEqual(sync, base) {
		t.Errorf("sync arm differs from base beyond the mode:\n%+v\n%+v", sync, base)
	}
}

// TestThroughputShape pins the latency workload of examples/throughput.hcl.
func TestThroughputShape(t *testing.T) {
	exp, diags := specs.ParseFile(filepath.Join("..", "examples", "throughput.hcl"), nil)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	base := exp.Arms[0].Config
	want := specs.Latency{Kind: "lognormal", Median: jsondur.Duration(5 * time.Millisecond), Sigma: 1.0, SlowFraction: 0.25, SlowFactor: 3}
	if base.Env.Latency != want {
		t.Errorf("latency = %+v, want %+v", base.Env.Latency, want)
	}
	if base.Pipeline.Workers != 16 || base.Pipeline.EnvsPerWorker != 4 {
		t.Errorf("workers x envs = %d x %d, want 16 x 4", base.Pipeline.Workers, base.Pipeline.EnvsPerWorker)
	}
	if sync, ok := exp.Arm("sync"); !ok || sync.Config.Pipeline.Mode != "sync" {
		t.Errorf("no sync ablation: %+v", sync)
	}
}
