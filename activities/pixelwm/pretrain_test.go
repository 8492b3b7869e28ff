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
// checkpoint of each phase (25, 250 and 1,000 steps).
func tinyPretrain(seed uint64) PretrainConfig {
	return PretrainConfig{
		Obs: edm.Config{ImageSize: 16, Cameras: 2, History: 2, ActionDim: tabletop.ActionDim, Channels: []int{8, 8}, CondDim: 8, GroupSize: 4},
		EDM: residualEDM(), ObsTrain: edm.TrainConfig{LR: 1e-3, BatchSize: 4, MaxGradNorm: 1, Seed: seed},
		Rew:          reward.Config{ImageSize: 16, Patch: 8, Cameras: 2, Dim: 8, Hidden: 8},
		RewTrain:     reward.TrainConfig{LR: 3e-3, BatchSize: 8, Focal: reward.Focal{Gamma: 2}, MaxGradNorm: 1, Seed: seed},
		Proprio:      proprio.Config{History: 2, ProprioDim: tabletop.ProprioDim, ActionDim: tabletop.ActionDim, Hidden: []int{8}},
		ProprioTrain: proprio.TrainConfig{LR: 1e-3, BatchSize: 8, MaxGradNorm: 1, Seed: seed},
		ObsSteps:     30, RewSteps: 260, ProprioSteps: 1010,
		HeldEvery: 10, Horizon: 3, Start: 20, Seed: seed,
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
			!reflect.DeepEqual(res.ProprioLoss, full.ProprioLoss) || !reflect.DeepEqual(res.Scores, full.Scores) || res.Step != full.Step {
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
