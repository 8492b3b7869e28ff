package pixelwm

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/proprio"
	"github.com/accerl/accerl/testenv/tabletop"
)

// TestEvaluateProprioByHand scores a head that always predicts the change
// (+1, 0) on three hand-made episodes (k = 2, D = 2, Δ's σ = (2, 1)):
//
//	A: p_t = (t, 0), t = 0…5   the head is exact; copy-last errs by (h, 0)
//	B: p_t = (2t, 0), t = 0…5  the head errs by (h, 0); copy-last by (2h, 0)
//	C: p_t = (0, 0), t = 0…2   too short for a rollout from step 1 of 2 steps
//
// Rollouts from step 1, horizon 2 (A and B): step h's MSE is the mean of
// the two values' squared errors, NMSE the same with the first divided by
// σ² = 4. A: model 0, 0; copy 1/2, 4/2. B: model 1/2, 4/2; copy 4/2, 16/2.
// Averages: MSE (0.25, 1), copy (1.25, 5); NMSE a quarter of those.
// One step, every transition from step 1 (4 of A, 4 of B, 1 of C): the
// model errs 0 on A, 1/2 on B and on C; copy-last 1/2 on A, 2 on B, 0 on
// C: MSE 2.5/9 and 10/9, NMSE a quarter.
func TestEvaluateProprioByHand(t *testing.T) {
	c := proprio.Config{History: 2, ProprioDim: 2, ActionDim: 1, Hidden: []int{3}}
	nm := proprio.Norm{InMean: make([]float64, c.In()), InStd: []float64{1, 1, 1, 1, 1},
		OutMean: []float64{0, 0}, OutStd: []float64{2, 1}}
	m := proprio.NewModel[float32](c, nm, rand.New(rand.NewPCG(1, 1)))
	bias := m.Spans()[len(m.Spans())-1]
	m.Params()[bias.Offset] = 0.5 // σ·y = 2·0.5 = +1 on the first value
	ep := func(n int, f func(t int) []float64) Episode {
		e := Episode{}
		for t := range n {
			e.Proprio = append(e.Proprio, f(t))
			if t+1 < n {
				e.Actions = append(e.Actions, []float64{0})
			}
		}
		return e
	}
	held := []Episode{
		ep(6, func(t int) []float64 { return []float64{float64(t), 0} }),
		ep(6, func(t int) []float64 { return []float64{float64(2 * t), 0} }),
		ep(3, func(int) []float64 { return []float64{0, 0} }),
	}
	ev := EvaluateProprio(m, held, 1, 2)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	for _, v := range []struct {
		name      string
		got, want []float64
	}{
		{"MSE", ev.MSE, []float64{0.25, 1}}, {"copy-last MSE", ev.CopyLastMSE, []float64{1.25, 5}},
		{"NMSE", ev.NMSE, []float64{0.0625, 0.25}}, {"copy-last NMSE", ev.CopyLastNMSE, []float64{0.3125, 1.25}},
		{"one-step", []float64{ev.OneStepMSE, ev.OneStepCopyLastMSE, ev.OneStepNMSE, ev.OneStepCopyLastNMSE},
			[]float64{2.5 / 9, 10.0 / 9, 2.5 / 36, 10.0 / 36}},
	} {
		if len(v.got) != len(v.want) || !near(v.got[0], v.want[0]) || !near(v.got[1], v.want[1]) ||
			(len(v.got) > 2 && (!near(v.got[2], v.want[2]) || !near(v.got[3], v.want[3]))) {
			t.Errorf("%s %v, want %v", v.name, v.got, v.want)
		}
	}
	if ev.Rollouts != 2 || ev.Transitions != 9 || ev.Horizon != 2 || ev.Start != 1 {
		t.Errorf("%d rollouts, %d transitions, horizon %d, start %d; want 2, 9, 2, 1", ev.Rollouts, ev.Transitions, ev.Horizon, ev.Start)
	}
}

// collectProprio is the learning test's data: 20 noisy-expert spatial
// episodes (16×16 frames, which the head does not read but Collect
// renders; 8 lingering steps), split 16 to train on, 4 held out.
func collectProprio(t *testing.T) (train, held []Episode) {
	t.Helper()
	in := CollectInput{Suite: "spatial", Episodes: 20, Behaviour: BehaviourExpertNoisy, Noise: 0.3, ImageSize: 16, Linger: 8, Seed: 3}
	eps, err := Collect(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	train, held = Split(eps, 5)
	return train, held
}

// TestProprioSamplesAlignWithFrames checks that the recorded
// proprioception is the simulator's (the first ProprioDim values of its
// state vector, an independent record of the same step) and that proprio
// sample i and M_obs's transition i predict the same step from the same
// context.
func TestProprioSamplesAlignWithFrames(t *testing.T) {
	train, _ := collectProprio(t)
	e := train[0]
	for step, p := range e.Proprio {
		if !slices.Equal(p, e.State[step][:tabletop.ProprioDim]) {
			t.Fatalf("step %d: proprio %v, state starts %v", step, p, e.State[step][:tabletop.ProprioDim])
		}
	}
	pc := proprio.DefaultConfig(tabletop.ProprioDim, tabletop.ActionDim)
	oc := edm.DefaultConfig(2, tabletop.ActionDim)
	ps, os := ProprioTransitions(pc, e.Proprio, e.Actions), Transitions(oc, e.Frames, e.Actions)
	if len(ps) != len(os) || len(ps) != e.Len()-pc.History {
		t.Fatalf("%d proprio samples, %d frame samples, want both %d", len(ps), len(os), e.Len()-pc.History)
	}
	for i := range ps {
		step := i + pc.History - 1
		if !slices.Equal(ps[i].Next, e.Proprio[step+1]) || !slices.Equal(ps[i].Past[pc.History-1], e.Proprio[step]) ||
			!slices.Equal(ps[i].Past[0], e.Proprio[step-pc.History+1]) || !slices.Equal(ps[i].Action, os[i].Action) {
			t.Fatalf("sample %d does not predict step %d from steps %d…%d with the frame sample's action", i, step+1, step-pc.History+1, step)
		}
	}
}

// TestProprioHeadLearns trains the default head (k = 4, hidden 64, 64) for
// 400 steps of 64 on the transitions of 16 noisy-expert episodes and
// checks the learning signals on them and on 4 held-out episodes.
//
// The standardised loss on all training transitions starts at exactly 1
// (zero output layer; see package proprio) and must halve: most of a
// step's change is the commanded motion, 1.5 cm and 0.1 rad per action
// unit, which the head reads.
//
// Held out, one step ahead, in NMSE (each value's squared error over the
// variance of its change, so that the millimetre fingertip steps count as
// much as the 0.1-rad turns): copying the last vector scores ≈ 1 + μ²/σ²
// ≥ 1 per value, predicting the mean change ≈ 1 — both know nothing of
// the action. The head must score below a quarter of copy-last, i.e.
// explain at least ~75% of the change's variance from the action and the
// state; the fingertip and wrist follow the action exactly except at
// contacts and limits, the fingers follow it at a bounded speed. In the
// simulator's units (MSE, which the orientation dominates) it must beat
// copy-last by the same factor. Measured (1.7 s on 2 cores, collection
// included): loss 1 → 0.075; one-step NMSE 0.080 against copy-last's 0.96
// (12×), MSE 1.0e-4 against 1.4e-3 (14×).
func TestProprioHeadLearns(t *testing.T) {
	start := time.Now()
	train, held := collectProprio(t)
	c := proprio.DefaultConfig(tabletop.ProprioDim, tabletop.ActionDim)
	data := ProprioSamples(c, train)
	tr, err := proprio.NewTrainer(c, proprio.FitNorm(c, data), proprio.DefaultTrainConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	before := tr.EvalLoss(data)
	const steps = 400
	for range steps {
		if _, err := tr.Step(data); err != nil {
			t.Fatal(err)
		}
	}
	after := tr.EvalLoss(data)
	ev := EvaluateProprio(tr.Model, held, 20, 8)
	t.Logf("%d train / %d held-out transitions, %d steps, %.1fs with collection: loss %.4f → %.4f",
		len(data), ev.Transitions, steps, time.Since(start).Seconds(), before, after)
	t.Logf("one step held out: NMSE %.4f vs copy-last %.4f; MSE %.3g vs copy-last %.3g", ev.OneStepNMSE, ev.OneStepCopyLastNMSE, ev.OneStepMSE, ev.OneStepCopyLastMSE)
	t.Logf("open loop from step 20 (%d rollouts): MSE %.3g, copy-last %.3g", ev.Rollouts, ev.MSE, ev.CopyLastMSE)
	if math.Abs(before-1) > 1e-5 {
		t.Errorf("initial loss %v, want 1", before)
	}
	if !(after < before/2) {
		t.Errorf("training loss %.4f → %.4f, want at most half", before, after)
	}
	if !(ev.OneStepNMSE < ev.OneStepCopyLastNMSE/4) || !(ev.OneStepMSE < ev.OneStepCopyLastMSE/4) {
		t.Errorf("held-out one-step NMSE %.4f (MSE %.3g), want below a quarter of copy-last's %.4f (%.3g)",
			ev.OneStepNMSE, ev.OneStepMSE, ev.OneStepCopyLastNMSE, ev.OneStepCopyLastMSE)
	}
}

// TestBenchValidatesProprio checks the proprio settings' errors.
func TestBenchValidatesProprio(t *testing.T) {
	c := DefaultBenchConfig(1)
	if err := c.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	c.Proprio.ProprioDim = 6
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "proprio head reads 6-D proprioception") {
		t.Errorf("a 6-D head was accepted: %v", err)
	}
	c.ProprioSteps = 0 // the head is left out, its config no longer matters
	if err := c.Validate(); err != nil {
		t.Errorf("without the head: %v", err)
	}
	c.ProprioSteps = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "must not be negative") {
		t.Errorf("negative steps accepted: %v", err)
	}
}

// TestBenchReportsProprio runs Bench at toy size (10 episodes, a 16×16
// M_obs for one step, M_rew for one, the proprio head for 200) and checks
// that the report carries the head's results under its JSON names next to
// the existing fields, which keep theirs.
func TestBenchReportsProprio(t *testing.T) {
	c := DefaultBenchConfig(2)
	c.Collect.Episodes, c.Collect.ImageSize, c.Collect.Linger = 10, 16, 2
	c.Obs = edm.Config{ImageSize: 16, Cameras: 2, History: 4, ActionDim: tabletop.ActionDim, Channels: []int{4, 8}, CondDim: 8, GroupSize: 4}
	c.Rew.ImageSize = 16
	c.Budget, c.ProprioSteps, c.Horizon, c.Start = time.Millisecond, 200, 4, 10
	res, _, err := Bench(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if res.ProprioSteps != 200 || len(res.ProprioLoss) != 2 || res.ProprioEval.Rollouts != res.HeldEpisodes ||
		len(res.ProprioEval.MSE) != 4 || res.ProprioSamples == 0 || !(res.ProprioHeldAfter < res.ProprioHeldBefore) {
		t.Errorf("proprio report: %d steps, loss curve %v, %d rollouts of %d held-out episodes, per-step MSE %v, %d samples, held-out loss %.3f → %.3f",
			res.ProprioSteps, res.ProprioLoss, res.ProprioEval.Rollouts, res.HeldEpisodes, res.ProprioEval.MSE, res.ProprioSamples, res.ProprioHeldBefore, res.ProprioHeldAfter)
	}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"collect", "train_episodes", "held_out_episodes", "episodes_succeeded", "collect_seconds", "loaded",
		"obs_config", "edm", "obs_train", "obs_params", "obs_train_samples", "obs_train_steps", "obs_train_seconds", "obs_loss_every",
		"obs_loss_curve", "obs_change_std", "obs_imagination", "rew_config", "rew_train", "rew_params", "rew_train_frames", "rew_train_steps",
		"rew_train_seconds", "rew_loss_every", "rew_loss_curve", "rew_held_out_focal_loss_before", "rew_held_out_focal_loss_after",
		"rew_held_out", "imagined_endings", "counterfactual_endings", "proprio_config", "proprio_train", "proprio_params", "proprio_train_samples", "proprio_train_steps",
		"proprio_train_seconds", "proprio_loss_every", "proprio_loss_curve", "proprio_held_out_loss_before",
		"proprio_held_out_loss_after", "proprio_imagination"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("the report has no %q", k)
		}
	}
	if len(keys) != 41 {
		t.Errorf("the report has %d fields, want the 30 others and the proprio head's 11", len(keys))
	}
}
