package pixelwm

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/proprio"
	"github.com/accerl/accerl/kernels/edm/reward"
	"github.com/accerl/accerl/testenv/tabletop"
)

// tinyPretrain is a pretraining small enough for a unit test: 16×16
// frames, narrow models, and step counts that cross one mid-phase
// checkpoint of each phase (25, 250 and 1,000 steps); M_obs self-forced
// from step 20, so that its checkpoint at 25 is taken while self-forcing.
func tinyPretrain(seed uint64) PretrainConfig {
	e := residualEDM()
	e.SelfForcing, e.SelfForcingFrom = 2, 20
	return PretrainConfig{
		Obs: edm.Config{ImageSize: 16, Cameras: 2, History: 2, ActionDim: tabletop.ActionDim, Channels: []int{8, 8}, CondDim: 8, GroupSize: 4},
		EDM: e, ObsTrain: edm.TrainConfig{LR: 1e-3, BatchSize: 4, MaxGradNorm: 1, Seed: seed},
		Rew:          reward.Config{ImageSize: 16, Patch: 8, Cameras: 2, Dim: 8, Hidden: 8},
		RewTrain:     reward.TrainConfig{LR: 3e-3, BatchSize: 8, Focal: reward.Focal{Gamma: 2}, MaxGradNorm: 1, Seed: seed},
		Proprio:      proprio.Config{History: 2, ProprioDim: tabletop.ProprioDim, ActionDim: tabletop.ActionDim, Hidden: []int{8}},
		ProprioTrain: proprio.TrainConfig{LR: 1e-3, BatchSize: 8, MaxGradNorm: 1, Seed: seed},
		ObsSteps:     30, RewSteps: 260, ProprioSteps: 1010,
		HeldEvery: 10, Horizon: 3, Start: 20, Seed: seed, RewImagined: 2,
	}
}

// TestPretrainResumesBitExactly runs the pixel world model's pretraining
// without a stop, then again from every checkpoint it saved (as a retry
// after a crash does), and checks that each resumed run ends in the same
// state byte for byte: the three trainers, the loss curves and the scores.
// It also checks the checkpoints' order (phases, steps) and that a state
// already done is returned as it is.
func TestPretrainResumesBitExactly(t *testing.T) {
	in := CollectInput{Suite: tabletop.SuiteSpatial, Episodes: 10, Behaviour: BehaviourExpertNoisy, Noise: 0.3,
		ImageSize: 16, MaxSteps: 40, Linger: 2, Seed: 5}
	eps, err := Collect(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	c := tinyPretrain(7)
	c.RewCounterfactual, c.Collect = 1, in
	var saved []*PretrainState
	keep := func(st *PretrainState) error {
		cp := *st
		cp.ObsLoss, cp.RewLoss, cp.ProprioLoss = clone(st.ObsLoss), clone(st.RewLoss), clone(st.ProprioLoss)
		saved = append(saved, &cp)
		return nil
	}
	full, err := Pretrain(context.Background(), c, eps, nil, keep)
	if err != nil {
		t.Fatal(err)
	}
	// Checkpoints: obs 25, obs end (30), rew 250, rew end (260), proprio
	// 1000, done (1010): steps counted over the three phases.
	type mark struct {
		phase string
		step  int
	}
	var got []mark
	for _, s := range saved {
		got = append(got, mark{s.Phase, s.Step})
	}
	want := []mark{{PhaseObs, 25}, {PhaseRew, 30}, {PhaseRew, 30 + 250}, {PhaseProprio, 30 + 260}, {PhaseProprio, 290 + 1000}, {PhaseDone, 290 + 1010}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("checkpoints (phase, step) = %v, want %v", got, want)
	}
	if full.Scores == nil || full.Scores.HeldEpisodes != 1 || full.Scores.Imagination.Rollouts != 1 {
		t.Fatalf("scores = %+v, want one held-out episode with one rollout", full.Scores)
	}
	train, _ := Split(eps, c.HeldEvery)
	if want := ChangeStd(ObsSamples(c.Obs, train)); full.Scores.SigmaData != want || !(want > 0) || full.Scores.SampleSteps != 1 {
		t.Errorf("σ_data %v with %d sampling steps, want the training frames' change σ %v with 1", full.Scores.SigmaData, full.Scores.SampleSteps, want)
	}
	// M_rew trained on 2 imagined endings of 3 steps per training episode too (each
	// episode here is long enough), and learned something else from them.
	if want := 2 * 3 * len(train); full.Scores.RewImagined != want {
		t.Errorf("%d imagined frames for M_rew, want %d", full.Scores.RewImagined, want)
	}
	// And on one counterfactual ending per training episode with an ending window.
	if cf := full.RewCounterfactual; cf == nil || cf.Endings == 0 || cf.Unreplayable != 0 || cf.Frames != cf.Endings*c.Horizon {
		t.Errorf("counterfactual M_rew examples %+v, want some endings of %d frames", cf, c.Horizon)
	}
	realOnly := c
	realOnly.RewImagined, realOnly.RewCounterfactual = 0, 0
	if ro, err := Pretrain(context.Background(), realOnly, eps, saved[1], func(*PretrainState) error { return nil }); err != nil {
		t.Fatal(err)
	} else if bytes.Equal(ro.Rew, full.Rew) || ro.Scores.RewImagined != 0 || ro.RewCounterfactual != nil || !bytes.Equal(ro.Obs, full.Obs) {
		t.Errorf("M_rew without imagined frames: the same as with them (%v) or %d imagined frames, or M_obs differs",
			bytes.Equal(ro.Rew, full.Rew), ro.Scores.RewImagined)
	}
	// Curves: a point every 5 / 50 / 100 steps plus the partial last one.
	if len(full.ObsLoss) != 6 || len(full.RewLoss) != 6 || len(full.ProprioLoss) != 11 {
		t.Errorf("curve lengths %d, %d, %d; want 6, 6, 11", len(full.ObsLoss), len(full.RewLoss), len(full.ProprioLoss))
	}
	for i, from := range saved[:len(saved)-1] {
		res, err := Pretrain(context.Background(), c, eps, from, func(*PretrainState) error { return nil })
		if err != nil {
			t.Fatalf("resume from checkpoint %d (%s, step %d): %v", i, from.Phase, from.Step, err)
		}
		if !bytes.Equal(res.Obs, full.Obs) || !bytes.Equal(res.Rew, full.Rew) || !bytes.Equal(res.Proprio, full.Proprio) {
			t.Errorf("resume from checkpoint %d (%s, step %d): trainers differ from the uninterrupted run", i, from.Phase, from.Step)
		}
		if !reflect.DeepEqual(res.ObsLoss, full.ObsLoss) || !reflect.DeepEqual(res.RewLoss, full.RewLoss) ||
			!reflect.DeepEqual(res.ProprioLoss, full.ProprioLoss) || !reflect.DeepEqual(res.Scores, full.Scores) || res.Step != full.Step ||
			!reflect.DeepEqual(res.RewCounterfactual, full.RewCounterfactual) {
			t.Errorf("resume from checkpoint %d (%s, step %d): curves, scores or step differ from the uninterrupted run", i, from.Phase, from.Step)
		}
	}
	again, err := Pretrain(context.Background(), c, eps, full, func(*PretrainState) error { return errors.New("a finished state saved again") })
	if err != nil || !bytes.Equal(again.Obs, full.Obs) {
		t.Errorf("a finished state: %v, want it back at once", err)
	}
}

// residualEDM is a residual M_obs whose σ_data Pretrain measures on the data.
func residualEDM() edm.EDM {
	e := edm.DefaultEDM()
	e.Residual, e.SigmaData, e.Steps = true, 0, 1
	return e
}

func clone(s []float64) []float64 { return append([]float64(nil), s...) }

// TestStrided checks the policy-step view of an episode against a hand-made one: 7
// frames, 6 actions, stride 2 gives phase 0 (frames 0 2 4 6, actions a0a1 a2a3 a4a5,
// rewards summed) and phase 1 (frames 1 3 5: the last frame has no whole step after it).
func TestStrided(t *testing.T) {
	e := Episode{Task: 3, Steps: 5, Succeeded: true}
	for i := range 7 {
		e.Frames = append(e.Frames, [][]uint8{{uint8(i)}})
		e.Proprio = append(e.Proprio, []float64{float64(i)})
		e.Success = append(e.Success, i >= 5)
		e.End = append(e.End, i >= 5)
	}
	for i := range 6 {
		e.Actions = append(e.Actions, []float64{float64(10 + i)})
		e.Rewards = append(e.Rewards, float64(i))
	}
	frameIDs := func(s Episode) (ids []uint8) {
		for _, f := range s.Frames {
			ids = append(ids, f[0][0])
		}
		return ids
	}
	got := Strided([]Episode{e}, 2, false)
	if len(got) != 2 {
		t.Fatalf("%d phases, want 2", len(got))
	}
	p0, p1 := got[0], got[1]
	if ids := frameIDs(p0); !reflect.DeepEqual(ids, []uint8{0, 2, 4, 6}) {
		t.Errorf("phase 0 frames %v, want 0 2 4 6", ids)
	}
	if !reflect.DeepEqual(p0.Actions, [][]float64{{10, 11}, {12, 13}, {14, 15}}) || !reflect.DeepEqual(p0.Rewards, []float64{1, 5, 9}) {
		t.Errorf("phase 0 actions %v rewards %v, want pairs 10–15 and sums 1 5 9", p0.Actions, p0.Rewards)
	}
	if !reflect.DeepEqual(p0.Success, []bool{false, false, false, true}) || !reflect.DeepEqual(p0.Proprio, [][]float64{{0}, {2}, {4}, {6}}) {
		t.Errorf("phase 0 success %v proprio %v", p0.Success, p0.Proprio)
	}
	if ids := frameIDs(p1); !reflect.DeepEqual(ids, []uint8{1, 3, 5}) || !reflect.DeepEqual(p1.Actions, [][]float64{{11, 12}, {13, 14}}) {
		t.Errorf("phase 1 frames %v actions %v, want 1 3 5 and 11–14", ids, p1.Actions)
	}
	if p1.Task != 3 || !p1.Succeeded || p1.Steps != 5 {
		t.Errorf("phase 1 lost the episode's task or outcome: %+v", p1)
	}
	if first := Strided([]Episode{e}, 2, true); len(first) != 1 || !reflect.DeepEqual(frameIDs(first[0]), []uint8{0, 2, 4, 6}) {
		t.Errorf("first phase only: %d episodes", len(first))
	}
	if same := Strided([]Episode{e}, 1, false); len(same) != 1 || len(same[0].Frames) != 7 {
		t.Error("stride 1 changed the episodes")
	}
	// Transitions of the strided episode are one per whole step after the context.
	oc := edm.Config{History: 2}
	if n := len(Transitions(oc, p0.Frames, p0.Actions)); n != 2 {
		t.Errorf("%d transitions of phase 0 at history 2, want 2", n)
	}
}

// TestPretrainStride pretrains a policy step (2 actions) at a time: M_obs and the proprio
// head take 14-D actions, the scoring rollouts are strided, a resumed pretraining ends in
// the uninterrupted one's state, and a checkpoint of an action-at-a-time pretraining
// (an older build's default) resumes under the strided config as it began.
func TestPretrainStride(t *testing.T) {
	in := CollectInput{Suite: tabletop.SuiteSpatial, Episodes: 10, Behaviour: BehaviourExpertNoisy, Noise: 0.3,
		ImageSize: 16, MaxSteps: 40, Linger: 2, Seed: 5}
	eps, err := Collect(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	strided := func(c PretrainConfig) PretrainConfig {
		c.Stride, c.Obs.ActionDim, c.Proprio.ActionDim, c.Start = 2, 2*tabletop.ActionDim, 2*tabletop.ActionDim, StartFor(2, c.Obs.History)
		c.RewSteps, c.ProprioSteps = 20, 20
		return c
	}
	c := strided(tinyPretrain(7))
	// Counterfactual endings of the episodes' own jittered actions (as accerl run's
	// rew_counterfactual_jitter), 3 policy steps of 2 actions each.
	c.RewCounterfactual, c.RewCounterfactualJitter, c.Collect = 2, 0.3, in
	full, first := pretrainKeepingFirst(t, c, eps)
	if cf := full.RewCounterfactual; cf == nil || cf.Endings == 0 || cf.Unreplayable != 0 || cf.Frames != cf.Endings*c.Horizon {
		t.Errorf("counterfactual M_rew examples %+v, want some endings of %d frames", cf, c.Horizon)
	}
	// The noise reaches M_rew's examples: without it M_rew ends elsewhere, M_obs the same.
	plain := c
	plain.RewCounterfactualJitter = 0
	if p, _ := pretrainKeepingFirst(t, plain, eps); bytes.Equal(p.Rew, full.Rew) || !bytes.Equal(p.Obs, full.Obs) {
		t.Error("M_rew trained on jittered counterfactual endings equals the one trained on another's actions")
	}
	var obs edm.Trainer
	if err := obs.UnmarshalBinary(full.Obs); err != nil || obs.Net.Config().ActionDim != 14 {
		t.Fatalf("M_obs: %v, %d-D actions; want 14", err, obs.Net.Config().ActionDim)
	}
	if im := full.Scores.Imagination; im.Rollouts != 1 || im.Start != 10 || im.Horizon != 3 {
		t.Errorf("scoring: %d rollouts from policy step %d over %d steps; want 1 from 10 (20 actions in) over 3", im.Rollouts, im.Start, im.Horizon)
	}
	res, err := Pretrain(context.Background(), c, eps, first, func(*PretrainState) error { return nil })
	if err != nil || !bytes.Equal(res.Obs, full.Obs) || !bytes.Equal(res.Proprio, full.Proprio) || !reflect.DeepEqual(res.Scores, full.Scores) {
		t.Errorf("resumed from step %d: %v, or a state other than the uninterrupted one's", first.Step, err)
	}

	// An action-at-a-time checkpoint, resumed by the strided config, stays action at a time.
	old := tinyPretrain(7)
	old.RewSteps, old.ProprioSteps, old.RewCounterfactual, old.RewCounterfactualJitter, old.Collect = 20, 20, 2, 0.3, in
	oldFull, oldFirst := pretrainKeepingFirst(t, old, eps)
	res, err = Pretrain(context.Background(), c, eps, oldFirst, func(*PretrainState) error { return nil })
	if err != nil || !bytes.Equal(res.Obs, oldFull.Obs) || !bytes.Equal(res.Proprio, oldFull.Proprio) || !reflect.DeepEqual(res.Scores, oldFull.Scores) {
		t.Errorf("an action-at-a-time checkpoint resumed with stride 2: %v, or not the state it would have reached", err)
	}
}

// pretrainKeepingFirst pretrains c on eps without a stop and returns the final state and
// the first checkpoint it saved.
func pretrainKeepingFirst(t *testing.T, c PretrainConfig, eps []Episode) (full, first *PretrainState) {
	t.Helper()
	full, err := Pretrain(context.Background(), c, eps, nil, func(st *PretrainState) error {
		if first == nil {
			cp := *st
			first = &cp
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return full, first
}
