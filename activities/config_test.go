package activities

import (
	"context"
	"reflect"
	"testing"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/specs"
)

// specConfig is specs' default configuration on CartPole with a small
// network and a 160-step budget.
func specConfig() specs.Config {
	c := specs.DefaultConfig()
	c.Env.Kind = "cartpole"
	c.Policy.Hidden = []int{8}
	c.Pipeline.Mode = specs.ModeSync
	c.Pipeline.Workers, c.Pipeline.EnvsPerWorker = 2, 2
	c.Pipeline.ChunkSteps = 16
	c.Algorithm.BatchSteps = 64
	c.Budget.EnvSteps = 160
	return c
}

func TestEngineConfigMapsSpec(t *testing.T) {
	c := specConfig()
	c.Algorithm.KLCoef = 0.1
	c.Algorithm.WarmupUpdates = 1
	c.Algorithm.VTraceRhoBar, c.Algorithm.VTraceCBar = 2, 0.5
	c.Debug.NaNAtUpdate = 7
	got := EngineConfig(c, 42, 10)
	if err := got.Validate(); err != nil {
		t.Fatalf("default spec maps to an invalid engine config: %v", err)
	}
	l := got.Learner
	if got.MaxEnvSteps != 160 || got.InjectNaNAtUpdate != 7 || got.Seed != 42 || got.Policy.Head != kernels.HeadCategorical ||
		l.Algo != kernels.AlgoPPO || l.KLCoef != 0.1 || l.Gamma != 0.99 || l.RhoBar != 2 || l.CBar != 0.5 ||
		l.Schedule != (kernels.LRSchedule{Base: 2.5e-4, Warmup: 1, Total: 10, Kind: kernels.LRLinear}) ||
		l.AdvNorm != kernels.AdvNormMinibatch || got.BatchSteps != 64 || got.GAELambda != 0.95 {
		t.Fatalf("engine config %+v", got)
	}

	for _, tc := range []struct {
		anneal   bool
		schedule string
		want     string
	}{
		{false, specs.LRScheduleCosine, kernels.LRConstant}, // anneal_lr = false wins
		{true, specs.LRScheduleCosine, kernels.LRCosine},
		{true, specs.LRScheduleConstant, kernels.LRConstant},
		{true, "", kernels.LRLinear}, // a spec from before lr_schedule existed
	} {
		c := specConfig()
		c.Algorithm.AnnealLR, c.Algorithm.LRSchedule = tc.anneal, tc.schedule
		if k := EngineConfig(c, 1, 10).Learner.Schedule.Kind; k != tc.want {
			t.Errorf("anneal_lr %v, lr_schedule %q: schedule %q, want %q", tc.anneal, tc.schedule, k, tc.want)
		}
	}
	for _, tc := range []struct {
		norm  bool
		scope string
		want  string
	}{
		{true, specs.AdvantageNormBatch, kernels.AdvNormMinibatch}, // "batch" is CleanRL's per-minibatch
		{true, specs.AdvantageNormGlobal, kernels.AdvNormGlobal},
		{true, specs.AdvantageNormNone, kernels.AdvNormNone},
		{false, specs.AdvantageNormGlobal, kernels.AdvNormNone}, // norm_adv = false wins
	} {
		c := specConfig()
		c.Algorithm.NormAdv, c.Algorithm.AdvantageNorm = tc.norm, tc.scope
		if n := EngineConfig(c, 1, 10).Learner.AdvNorm; n != tc.want {
			t.Errorf("norm_adv %v, advantage_norm %q: %q, want %q", tc.norm, tc.scope, n, tc.want)
		}
	}
}

func TestEngineConfigRunsEveryHead(t *testing.T) {
	// Each head with a representative algorithm runs to its budget (160
	// steps = two 64-step rounds and a 32-step one) from the mapped config.
	for _, tc := range []struct{ env, action, algo string }{
		{"acrobot", specs.ActionCategorical, specs.AlgorithmVTrace},
		{"pendulum", specs.ActionTokens, specs.AlgorithmGIPO},
		{"mountaincar_continuous", specs.ActionGaussian, specs.AlgorithmSAPO},
	} {
		c := specConfig()
		c.Env.Kind, c.Policy.Action, c.Algorithm.Name = tc.env, tc.action, tc.algo
		c.Policy.Bins = 16
		e, err := NewEngine(c, 3, 3, nil)
		if err != nil {
			t.Fatalf("%s/%s/%s: %v", tc.env, tc.action, tc.algo, err)
		}
		st, err := e.Run(context.Background(), 10, nil)
		if err != nil || !st.BudgetReached || st.EnvSteps != 160 || st.Updates != 3 {
			t.Fatalf("%s/%s/%s: %d steps, %d updates, budget reached %v, err %v; want 160, 3, true",
				tc.env, tc.action, tc.algo, st.EnvSteps, st.Updates, st.BudgetReached, err)
		}
	}
	// A head that does not fit the env is refused with the engine's reason.
	c := specConfig()
	c.Policy.Action = specs.ActionGaussian
	if _, err := NewEngine(c, 1, 3, nil); err == nil {
		t.Fatal("a gaussian head on CartPole was accepted")
	}
}

// TestPixelPretrainConfigMapsSelfForcing: the pixels block's self-forcing reaches M_obs's
// diffusion settings, its counterfactual endings M_rew's with the offline collection's
// input for the replays, and a config made from it passes pretraining's own checks.
func TestPixelPretrainConfigMapsSelfForcing(t *testing.T) {
	c := specs.DefaultConfig()
	c.Env.Kind, c.Env.Pixels, c.Env.ImageSize = specs.EnvTabletop, true, 32
	c.Env.Suite = "spatial"
	c.WorldModel.Enabled, c.WorldModel.History, c.WorldModel.OfflineTrajectories = true, 4, 40
	c.WorldModel.Behaviour = specs.WorldModelBehaviourExpertNoisy
	px := specs.DefaultPixelWorldModel()
	px.SelfForcing, px.SelfForcingFrom, px.RewCounterfactual, px.RewCounterfactualJitter = 4, 320, 2, 0.3
	c.WorldModel.Pixels = &px
	got := PixelPretrainConfig(c, 1)
	if got.RewCounterfactual != 2 || got.RewCounterfactualJitter != 0.3 || !reflect.DeepEqual(got.Collect, pixelCollectInput(c, 1)) {
		t.Errorf("counterfactual endings %d replayed with %+v; want 2 with the offline collection's input", got.RewCounterfactual, got.Collect)
	}
	if got.EDM.SelfForcing != 4 || got.EDM.SelfForcingFrom != 320 || got.ObsSteps != px.ObsSteps {
		t.Fatalf("EDM %+v, %d M_obs steps; want self-forcing 4 from step 320 of %d", got.EDM, got.ObsSteps, px.ObsSteps)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("pretraining config from the block: %v", err)
	}
	def := specs.DefaultPixelWorldModel()
	c.WorldModel.Pixels = &def
	if d := PixelPretrainConfig(c, 1).EDM; d.SelfForcing != 0 || d.SelfForcingFrom != 0 {
		t.Errorf("the block's default self-forces: %+v", d)
	}
}
