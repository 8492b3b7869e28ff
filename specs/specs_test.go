package specs_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/accerl/accerl/jsondur"
	"github.com/accerl/accerl/specs"
)

// mustParse parses src and fails the test on any error diagnostic. Warnings
// (advice about a valid spec) have their own tests.
func mustParse(t *testing.T, src string, vars map[string]string) *specs.Experiment {
	t.Helper()
	exp, diags := specs.Parse("test.hcl", []byte(src), vars)
	if diags.HasErrors() {
		t.Fatalf("unexpected diagnostics:\n%s", diags.Error())
	}
	if exp == nil {
		t.Fatal("Parse returned no experiment and no diagnostics")
	}
	return exp
}

func mustParseFile(t *testing.T, path string, vars map[string]string) *specs.Experiment {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return mustParse(t, string(src), vars)
}

// fullBase is testdata/full.hcl's base arm, written out by hand.
func fullBase() specs.Config {
	return specs.Config{
		Budget: specs.Budget{EnvSteps: 100000, WallTime: jsondur.Duration(30 * time.Minute)},
		Env: specs.Env{
			Kind:            "pendulum",
			MaxEpisodeSteps: 400,
			Latency: specs.Latency{
				Kind: "lognormal", Median: jsondur.Duration(7 * time.Millisecond),
				Sigma: 0.5, SlowFraction: 0.5, SlowFactor: 2.0,
			},
		},
		Policy: specs.Policy{Action: "tokens", Hidden: []int{32, 16, 8}, Activation: "relu", Bins: 128, InitLogStd: -0.5},
		Algorithm: specs.Algorithm{
			Name: "gipo", LearningRate: 3e-4, AnnealLR: false, Gamma: 0.98, GAELambda: 0.9,
			Clip: 0.1, ValueCoef: 1.0, EntropyCoef: 0.02, MaxGradNorm: 1.0,
			Epochs: 10, Minibatches: 3, BatchSteps: 1000, NormAdv: false,
			RecomputeValues: true, AdvantageNorm: "global", GIPOSigma: 0.25,
			KLCoef: 0.1, LRSchedule: "cosine", WarmupUpdates: 5, SAPOTauPos: 0.8, SAPOTauNeg: 1.2,
			VTraceRhoBar: 0.9, VTraceCBar: 0.95, ClipValueLoss: false,
		},
		Pipeline: specs.Pipeline{
			Mode: "sync", Workers: 6, EnvsPerWorker: 3, ChunkSteps: 50, ReplayCapacity: 5000,
			MaxStaleness: 4, Lag: 2,
			Inference: specs.Inference{MaxBatch: 32, MaxWait: jsondur.Duration(2 * time.Millisecond)},
		},
		Checkpoint: specs.Checkpoint{Every: 10, Keep: 5, HeartbeatTimeout: jsondur.Duration(45 * time.Second)},
		WorldModel: defaultWorldModel(),
	}
}

// defaultWorldModel is the world_model block's defaults as the language
// reference (specs/doc.go) lists them, written out by hand.
func defaultWorldModel() specs.WorldModel {
	return specs.WorldModel{
		Enabled: false, OfflineTrajectories: 1000, Behaviour: "random", History: 2,
		ObsHidden: []int{128, 128}, RewHidden: []int{64, 64},
		ObsLearningRate: 1e-3, RewLearningRate: 1e-3, Reward: "direct",
		PretrainEpochs: 20, ImaginationRatio: 0.5, ObsEvery: 100, RewEvery: 50,
		Horizon: specs.Horizon{Start: 5, End: 50, LossHigh: 0.5, LossLow: 0.05},
	}
}

func TestParseFullSpec(t *testing.T) {
	exp := mustParseFile(t, "testdata/full.hcl", nil)
	if exp.Name != "full" || exp.MaxParallel != 2 || exp.Baseline != "big_net" {
		t.Errorf("header = %q/%d/%q, want full/2/big_net", exp.Name, exp.MaxParallel, exp.Baseline)
	}
	if !reflect.DeepEqual(exp.Seeds, []uint64{7, 3, 11}) {
		t.Errorf("seeds = %v, want [7 3 11]", exp.Seeds)
	}
	names := armNames(exp)
	if !reflect.DeepEqual(names, []string{"base", "async", "big_net"}) {
		t.Fatalf("arms = %v, want [base async big_net]", names)
	}

	base := fullBase()
	if got := exp.Arms[0].Config; !reflect.DeepEqual(got, base) {
		t.Errorf("base arm:\n got %+v\nwant %+v", got, base)
	}

	async := fullBase()
	async.Pipeline.Mode = "async"
	if got := exp.Arms[1].Config; !reflect.DeepEqual(got, async) {
		t.Errorf("async arm:\n got %+v\nwant %+v", got, async)
	}

	// big_net changes the hidden sizes, the algorithm name and its learning
	// rate; every other gipo hyperparameter is inherited.
	big := fullBase()
	big.Policy.Hidden = []int{128, 128}
	big.Algorithm.Name = "ppo"
	big.Algorithm.LearningRate = 1e-3
	if got := exp.Arms[2].Config; !reflect.DeepEqual(got, big) {
		t.Errorf("big_net arm:\n got %+v\nwant %+v", got, big)
	}
}

// TestParseMinimalSpec checks every documented default against the values
// in the language reference (specs/doc.go), written out by hand here.
func TestParseMinimalSpec(t *testing.T) {
	exp := mustParseFile(t, "testdata/minimal.hcl", nil)
	if exp.Name != "minimal" || exp.MaxParallel != 4 || exp.Baseline != "base" {
		t.Errorf("header = %q/%d/%q, want minimal/4/base", exp.Name, exp.MaxParallel, exp.Baseline)
	}
	if !reflect.DeepEqual(exp.Seeds, []uint64{1, 2}) {
		t.Errorf("seeds = %v, want the default [1 2]", exp.Seeds)
	}
	if len(exp.Arms) != 1 || exp.Arms[0].Name != "base" {
		t.Fatalf("arms = %v, want only base", armNames(exp))
	}
	want := specs.Config{
		Budget: specs.Budget{EnvSteps: 5000, WallTime: 0},
		Env: specs.Env{
			Kind:            "cartpole",
			MaxEpisodeSteps: 500, // CartPole-v1's TimeLimit
			Latency: specs.Latency{
				Kind: "none", Median: jsondur.Duration(5 * time.Millisecond),
				Sigma: 1.0, SlowFraction: 0.25, SlowFactor: 3.0,
			},
		},
		Policy: specs.Policy{Action: "categorical", Hidden: []int{64, 64}, Activation: "tanh", Bins: 256},
		Algorithm: specs.Algorithm{
			Name: "ppo", LearningRate: 2.5e-4, AnnealLR: true, Gamma: 0.99, GAELambda: 0.95,
			Clip: 0.2, ValueCoef: 0.5, EntropyCoef: 0.01, MaxGradNorm: 0.5,
			Epochs: 4, Minibatches: 4, BatchSteps: 512, NormAdv: true,
			RecomputeValues: false, AdvantageNorm: "minibatch", GIPOSigma: 0.5,
			KLCoef: 0, LRSchedule: "linear", WarmupUpdates: 0, SAPOTauPos: 1, SAPOTauNeg: 1.05,
			VTraceRhoBar: 1, VTraceCBar: 1, ClipValueLoss: true,
		},
		Pipeline: specs.Pipeline{
			Mode: "async", Workers: 4, EnvsPerWorker: 2, ChunkSteps: 64, ReplayCapacity: 8192,
			MaxStaleness: 0, Lag: 0,
			Inference: specs.Inference{MaxBatch: 256, MaxWait: jsondur.Duration(5 * time.Millisecond)},
		},
		Checkpoint: specs.Checkpoint{Every: 25, Keep: 3, HeartbeatTimeout: jsondur.Duration(30 * time.Second)},
		WorldModel: defaultWorldModel(),
	}
	if got := exp.Arms[0].Config; !reflect.DeepEqual(got, want) {
		t.Errorf("minimal config:\n got %+v\nwant %+v", got, want)
	}
}

func TestDefaultMaxEpisodeSteps(t *testing.T) {
	// Gymnasium's registered TimeLimit for each environment.
	want := map[string]int{"cartpole": 500, "acrobot": 500, "pendulum": 200, "mountaincar_continuous": 999}
	for kind, steps := range want {
		src := `experiment "e" {
  budget { env_steps = 10 }
  env "` + kind + `" {}
  policy { action = "` + map[bool]string{true: "categorical", false: "tokens"}[kind == "cartpole" || kind == "acrobot"] + `" }
}`
		if got := mustParse(t, src, nil).Arms[0].Config.Env.MaxEpisodeSteps; got != steps {
			t.Errorf("%s: max_episode_steps = %d, want %d", kind, got, steps)
		}
	}
	if _, ok := specs.DefaultMaxEpisodeSteps("hopper"); ok {
		t.Error("DefaultMaxEpisodeSteps(hopper) reported a known kind")
	}
}

const ablationSpec = `
experiment "abl" {
  budget { env_steps = 1000 }
  env "cartpole" {}
  policy { hidden = [16, 16] }
  algorithm "ppo" {
    learning_rate = 1e-3
    epochs        = 3
  }
  pipeline {
    workers = 8
    inference {
      max_batch = 128
      max_wait  = "2ms"
    }
  }

  ablation "short_wait" {
    pipeline {
      inference { max_wait = "1ms" }
    }
  }
  ablation "gipo" {
    algorithm "gipo" { gipo_sigma = 0.3 }
  }
  ablation "wide" {
    policy { hidden = [128, 128] }
  }
  ablation "pendulum" {
    env "pendulum" {}
    policy { action = "tokens" }
  }
  ablation "same" {}
}
`

func TestAblationOverridesOnlyWhatItWrites(t *testing.T) {
	exp := mustParse(t, ablationSpec, nil)
	arms := map[string]specs.Config{}
	for _, a := range exp.Arms {
		arms[a.Name] = a.Config
	}
	base := arms["base"]

	// A nested partial override: max_wait changes, max_batch and the rest of
	// the pipeline stay as the base wrote them (not reset to defaults).
	sw := arms["short_wait"]
	if sw.Pipeline.Inference.MaxWait.Std() != time.Millisecond {
		t.Errorf("short_wait max_wait = %v, want 1ms", sw.Pipeline.Inference.MaxWait)
	}
	if sw.Pipeline.Inference.MaxBatch != 128 || sw.Pipeline.Workers != 8 {
		t.Errorf("short_wait max_batch/workers = %d/%d, want the base's 128/8",
			sw.Pipeline.Inference.MaxBatch, sw.Pipeline.Workers)
	}
	want := base
	want.Pipeline.Inference.MaxWait = jsondur.Duration(time.Millisecond)
	if !reflect.DeepEqual(sw, want) {
		t.Errorf("short_wait differs from base in more than max_wait:\n got %+v\nwant %+v", sw, want)
	}
	if base.Pipeline.Inference.MaxWait.Std() != 2*time.Millisecond {
		t.Errorf("base max_wait = %v after ablations, want 2ms", base.Pipeline.Inference.MaxWait)
	}

	// Changing the algorithm label keeps the base's hyperparameters.
	want = base
	want.Algorithm.Name = "gipo"
	want.Algorithm.GIPOSigma = 0.3
	if got := arms["gipo"]; !reflect.DeepEqual(got, want) {
		t.Errorf("gipo arm:\n got %+v\nwant %+v", got, want)
	}

	// A list is replaced, and the base's list is not aliased.
	if got := arms["wide"].Policy.Hidden; !reflect.DeepEqual(got, []int{128, 128}) {
		t.Errorf("wide hidden = %v, want [128 128]", got)
	}
	if !reflect.DeepEqual(base.Policy.Hidden, []int{16, 16}) {
		t.Errorf("base hidden = %v, want [16 16]", base.Policy.Hidden)
	}
	exp.Arms[0].Config.Policy.Hidden[0] = 999
	if exp.Arms[1].Config.Policy.Hidden[0] == 999 {
		t.Error("ablation shares its hidden slice with the base")
	}

	// Switching env kind without writing max_episode_steps gets the new
	// kind's default: 200 for pendulum, where the cartpole base has 500.
	if got := arms["pendulum"].Env; got.Kind != "pendulum" || got.MaxEpisodeSteps != 200 {
		t.Errorf("pendulum env = %+v, want kind pendulum with 200 steps", got)
	}
	if base.Env.MaxEpisodeSteps != 500 {
		t.Errorf("base max_episode_steps = %d, want 500", base.Env.MaxEpisodeSteps)
	}

	// An empty ablation equals the base (both parsed afresh, since the
	// base's hidden slice was modified above).
	same := mustParse(t, ablationSpec, nil).Arms[5].Config
	fresh := mustParse(t, ablationSpec, nil).Arms[0].Config
	if !reflect.DeepEqual(same, fresh) {
		t.Errorf("empty ablation differs from base:\n got %+v\nwant %+v", same, fresh)
	}
}

func TestExplicitEpisodeLimitIsInherited(t *testing.T) {
	exp := mustParse(t, `
experiment "e" {
  budget { env_steps = 10 }
  env "cartpole" { max_episode_steps = 300 }
  ablation "pendulum" {
    env "pendulum" {}
    policy { action = "tokens" }
  }
}`, nil)
	// The base wrote 300, and the ablation overrides only the kind.
	if got := exp.Arms[1].Config.Env.MaxEpisodeSteps; got != 300 {
		t.Errorf("pendulum ablation max_episode_steps = %d, want the inherited 300", got)
	}
}

const varSpec = `
variable "steps" { default = 1000 }
variable "mode" { default = "async" }
variable "wall" { default = "0s" }
variable "seeds" { default = [1] }

experiment "vars" {
  seeds = var.seeds
  budget {
    env_steps = var.steps
    wall_time = var.wall
  }
  env "cartpole" {}
  pipeline { mode = var.mode }
}
`

func TestVarOverrides(t *testing.T) {
	cases := []struct {
		name  string
		vars  map[string]string
		check func(*specs.Experiment) bool
	}{
		{"defaults", nil, func(e *specs.Experiment) bool {
			c := e.Arms[0].Config
			return c.Budget.EnvSteps == 1000 && c.Pipeline.Mode == "async" && c.Budget.WallTime == 0
		}},
		{"number", map[string]string{"steps": "5000"}, func(e *specs.Experiment) bool {
			return e.Arms[0].Config.Budget.EnvSteps == 5000
		}},
		{"quoted string", map[string]string{"mode": `"sync"`}, func(e *specs.Experiment) bool {
			return e.Arms[0].Config.Pipeline.Mode == "sync"
		}},
		{"bare word", map[string]string{"mode": "sync"}, func(e *specs.Experiment) bool {
			return e.Arms[0].Config.Pipeline.Mode == "sync"
		}},
		{"bare duration", map[string]string{"wall": "30m"}, func(e *specs.Experiment) bool {
			return e.Arms[0].Config.Budget.WallTime.Std() == 30*time.Minute
		}},
		{"list", map[string]string{"seeds": "[4, 5]"}, func(e *specs.Experiment) bool {
			return reflect.DeepEqual(e.Seeds, []uint64{4, 5})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if exp := mustParse(t, varSpec, tc.vars); !tc.check(exp) {
				t.Errorf("overrides %v not applied: %+v", tc.vars, exp.Arms[0].Config)
			}
		})
	}
}

func TestVarOverrideErrors(t *testing.T) {
	cases := []struct {
		name     string
		vars     map[string]string
		summary  string
		filename string
	}{
		{"undeclared", map[string]string{"stepz": "10"}, "Value for undeclared variable", "<-var stepz>"},
		{"broken list", map[string]string{"seeds": "[1, 2"}, "", "<-var seeds>"},
		// 5 parses as a number, and a number is no valid mode.
		{"wrong type at use", map[string]string{"mode": "5"}, "Unsupported value", "test.hcl"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exp, diags := specs.Parse("test.hcl", []byte(varSpec), tc.vars)
			if exp != nil || !diags.HasErrors() {
				t.Fatalf("want errors, got experiment %v", exp)
			}
			d := diags[0]
			if !strings.Contains(d.Summary, tc.summary) {
				t.Errorf("summary %q, want it to contain %q", d.Summary, tc.summary)
			}
			if d.Subject == nil || d.Subject.Filename != tc.filename {
				t.Errorf("subject %v, want one in %q", d.Subject, tc.filename)
			}
			if d.Detail == "" {
				t.Error("empty detail")
			}
		})
	}
}

func TestMissingVariableValue(t *testing.T) {
	src := `
variable "steps" {}
experiment "e" {
  budget { env_steps = var.steps }
  env "cartpole" {}
}`
	_, diags := specs.Parse("test.hcl", []byte(src), nil)
	if !diags.HasErrors() || diags[0].Summary != "Missing value for variable" {
		t.Fatalf("want a missing-value error, got %v", diags)
	}
	exp := mustParse(t, src, map[string]string{"steps": "77"})
	if got := exp.Arms[0].Config.Budget.EnvSteps; got != 77 {
		t.Errorf("env_steps = %d, want 77 from -var", got)
	}
}

func TestRunsOrder(t *testing.T) {
	exp := mustParse(t, `
experiment "order" {
  seeds = [3, 1]
  budget { env_steps = 10 }
  env "cartpole" {}
  ablation "sync" {
    pipeline { mode = "sync" }
  }
}`, nil)
	runs := exp.Runs()
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	want := []string{"base/seed-3", "base/seed-1", "sync/seed-3", "sync/seed-1"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("run IDs = %v, want %v", ids, want)
	}
	if runs[2].Arm != "sync" || runs[2].Seed != 3 || runs[2].Config.Pipeline.Mode != "sync" {
		t.Errorf("run 2 = %+v, want the sync arm with seed 3", runs[2])
	}
	runs[0].Config.Policy.Hidden[0] = 999
	if exp.Arms[0].Config.Policy.Hidden[0] == 999 {
		t.Error("a run's config shares its hidden slice with the experiment")
	}
}

const hashSpec = `
variable "steps" { default = 60000 }
experiment "h" {
  seeds = [1, 2]
  budget { env_steps = var.steps }
  env "cartpole" {}
  algorithm "ppo" {
    learning_rate = 2.5e-4
    clip          = 0.2
  }
  ablation "sync" {
    pipeline { mode = "sync" }
  }
}
`

// hashSpecReformatted is hashSpec with comments, other layout, attributes
// and blocks in another order, and literals in place of the variable.
const hashSpecReformatted = `
# The same experiment, written differently.
experiment "h" {
  algorithm "ppo" { # same values, other order
    clip = 0.2
    learning_rate = 0.00025
  }
  env "cartpole" {
  }
  budget {
    env_steps = 60000 // a literal instead of var.steps
  }
  seeds = [1, 2]

  ablation "sync" {
    pipeline {
      mode = "sync"
    }
  }
}
`

func TestHashStability(t *testing.T) {
	h := mustParse(t, hashSpec, nil).Hash
	if len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		t.Fatalf("hash %q is not 64 hex digits", h)
	}
	if again := mustParse(t, hashSpec, nil).Hash; again != h {
		t.Errorf("same spec, different hash: %s vs %s", h, again)
	}
	if re := mustParse(t, hashSpecReformatted, nil).Hash; re != h {
		t.Errorf("reformatted spec changed the hash: %s vs %s", re, h)
	}
	if same := mustParse(t, hashSpec, map[string]string{"steps": "60000"}).Hash; same != h {
		t.Errorf("a -var equal to the default changed the hash")
	}

	changed := strings.Replace(hashSpec, "clip          = 0.2", "clip          = 0.3", 1)
	if c := mustParse(t, changed, nil).Hash; c == h {
		t.Error("changing clip did not change the hash")
	}
	if c := mustParse(t, hashSpec, map[string]string{"steps": "60001"}).Hash; c == h {
		t.Error("a -var that changes env_steps did not change the hash")
	}
	swapped := strings.Replace(hashSpec, "seeds = [1, 2]", "seeds = [2, 1]", 1)
	if c := mustParse(t, swapped, nil).Hash; c == h {
		t.Error("reordering seeds (which reorders runs) did not change the hash")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	exp := mustParseFile(t, "testdata/full.hcl", nil)
	b, err := json.Marshal(exp)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"env_steps":100000`, `"max_episode_steps":400`, `"replay_capacity":5000`,
		`"gipo_sigma":0.25`, `"max_wait":"2ms"`, `"wall_time":"30m0s"`, `"heartbeat_timeout":"45s"`,
		`"median":"7ms"`, `"arms":[`, `"hash":"` + exp.Hash + `"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	var back specs.Experiment
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, exp) {
		t.Errorf("round trip changed the experiment:\n got %+v\nwant %+v", back, *exp)
	}
	if got := back.ComputeHash(); got != exp.Hash {
		t.Errorf("hash after round trip = %s, want %s", got, exp.Hash)
	}

	// Workflow histories and files written before durations became strings
	// hold them as integer nanoseconds; they must decode to the same
	// experiment.
	legacy := strings.NewReplacer(`"max_wait":"2ms"`, `"max_wait":2000000`, `"wall_time":"30m0s"`, `"wall_time":1800000000000`,
		`"heartbeat_timeout":"45s"`, `"heartbeat_timeout":45000000000`, `"median":"7ms"`, `"median":7000000`).Replace(string(b))
	if legacy == string(b) {
		t.Fatal("the legacy rewrite changed nothing")
	}
	var old specs.Experiment
	if err := json.Unmarshal([]byte(legacy), &old); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&old, exp) {
		t.Errorf("nanosecond durations decoded differently:\n got %+v\nwant %+v", old, *exp)
	}
}

// TestDiagnosticsRender checks that Parser.Files lets hcl's text writer show
// the offending source line, also for -var values.
func TestDiagnosticsRender(t *testing.T) {
	p := specs.NewParser()
	_, diags := p.Parse("spec.hcl", []byte(varSpec), map[string]string{"stepz": "10"})
	var out strings.Builder
	wr := hcl.NewDiagnosticTextWriter(&out, p.Files(), 100, false)
	if err := wr.WriteDiagnostics(diags); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Error: Value for undeclared variable", "on <-var stepz> line 1:", "1: stepz=10"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("rendered diagnostics lack %q:\n%s", want, out.String())
		}
	}

	p = specs.NewParser()
	_, diags = p.Parse("spec.hcl", []byte(strings.Replace(varSpec, "var.mode", `"fast"`, 1)), nil)
	out.Reset()
	wr = hcl.NewDiagnosticTextWriter(&out, p.Files(), 100, false)
	if err := wr.WriteDiagnostics(diags); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"on spec.hcl line 14", `pipeline { mode = "fast" }`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("rendered diagnostics lack %q:\n%s", want, out.String())
		}
	}
}

func armNames(e *specs.Experiment) []string {
	var names []string
	for _, a := range e.Arms {
		names = append(names, a.Name)
	}
	return names
}

// A tabletop env resolves its defaults from the suite: every task, the suite's episode
// limit, 64×64 images from both cameras; task = N picks one task; a classic env carries none
// of the tabletop fields (so its spec hash is what it was before they existed).
func TestTabletopEnv(t *testing.T) {
	exp := mustParse(t, `
experiment "tt" {
  budget { env_steps = 1000 }
  env "tabletop" { suite = "long" }
  policy { action = "tokens" }
  ablation "one" {
    env "tabletop" {
      suite      = "goal"
      task       = 3
      image_size = 128
      cameras    = ["wrist"]
    }
  }
  ablation "cartpole" {
    env "cartpole" {}
    policy { action = "categorical" }
  }
}`, nil)
	base := exp.Arms[0].Config.Env
	if base.Suite != "long" || len(base.Tasks) != 10 || base.Tasks[9] != 9 || base.MaxEpisodeSteps != 520 ||
		base.ImageSize != 64 || !reflect.DeepEqual(base.Cameras, []string{"agentview", "wrist"}) {
		t.Errorf("base tabletop env = %+v, want suite long, tasks 0-9, 520 steps, 64 px, both cameras", base)
	}
	one := exp.Arms[1].Config.Env
	if one.Suite != "goal" || !reflect.DeepEqual(one.Tasks, []int{3}) || one.MaxEpisodeSteps != 300 ||
		one.ImageSize != 128 || !reflect.DeepEqual(one.Cameras, []string{"wrist"}) {
		t.Errorf("ablation env = %+v, want goal task 3, 300 steps, 128 px, wrist", one)
	}
	cp := exp.Arms[2].Config.Env
	if cp.Suite != "" || cp.Tasks != nil || cp.ImageSize != 0 || cp.Cameras != nil || cp.MaxEpisodeSteps != 500 {
		t.Errorf("cartpole ablation env = %+v, want no tabletop fields and 500 steps", cp)
	}
	if b, _ := json.Marshal(cp); strings.Contains(string(b), "suite") {
		t.Errorf("cartpole env JSON %s carries tabletop fields", b)
	}
}

// TestHashGolden pins the hashes of specs as earlier versions of accerl
// computed them. A run's state directory and its workflows are keyed by
// the hash, so a change here makes `accerl run` of an unchanged spec refuse
// to attach to (or resume) the experiment it started before an upgrade. The
// values were printed by the version before durations were written as
// strings (54bc0b4); testdata/full.hcl sets all four duration fields.
func TestHashGolden(t *testing.T) {
	for path, want := range map[string]string{
		"testdata/full.hcl":           "9a3659e0ae7ea64cb6bf0ec1f116fcb159eb7ae8ae0966635ab63398ce0b33bc",
		"testdata/minimal.hcl":        "f5a3fb5f6b75266859448eda6a27e7e8990b06ab89e7a3ea83b96159caf25ef4",
		"../examples/quickstart.hcl":  "a2dbb0bbc348a69b76a1a51b7b0b4665211204d2ddcb17297417e0090a203a10",
		"../examples/throughput.hcl":  "8514c4275be789f8607cd149354be767f82542a0dd8c7b35c93e29799150e9e6",
		"../examples/world-model.hcl": "c71688d4cfb8759f2ac5e2e985d5aba6fa8a3e1a151acf1896977235306a7c09",
	} {
		if got := mustParseFile(t, path, nil).Hash; got != want {
			t.Errorf("%s: hash %s, want %s as before", path, got, want)
		}
	}
}
