package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestBenchPixelWMArgumentErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--suite", "kitchen"}, `unknown suite "kitchen" (known: goal, long, object, spatial)`},
		{[]string{"--episodes", "0"}, "episodes must be at least 1, got 0"},
		{[]string{"--episodes", "3"}, "3 episodes hold none out at one in 5; collect at least 5"},
		{[]string{"--behaviour", "bc"}, `unknown behaviour policy "bc"; choose random or expert_noisy`},
		{[]string{"--noise", "-1"}, "noise must be a finite σ ≥ 0"},
		{[]string{"--minutes", "0"}, "--minutes must be positive, got 0"},
		{[]string{"--rew-share", "1"}, "reward-model share of the budget must be in (0, 1), got 1"},
		{[]string{"--alpha", "1"}, "focal alpha must be in [0, 1)"},
		{[]string{"--gamma", "-2"}, "focal gamma must be a finite number ≥ 0"},
		{[]string{"--horizon", "0"}, "horizon must be at least 1 imagined step"},
		{[]string{"--start", "1"}, "rollouts start at step 1, before the 4 context frames exist; start at 3 or later"},
		{[]string{"--held-every", "1"}, "held-every must be at least 2"},
		{[]string{"--proprio-steps", "-1"}, "proprio head steps must not be negative (0 leaves the head out), got -1"},
		{[]string{"--obs-steps", "-3"}, "observation-model steps must not be negative (0 trains for the budget's share), got -3"},
		{[]string{"--sigma-data", "-1"}, "--sigma-data must be positive (0 keeps the default), got -1"},
		{[]string{"--sample-steps", "0"}, "--sample-steps must be at least 1, got 0"},
		{[]string{"--rew-steps", "-1"}, "reward-model steps must not be negative (0 trains for the budget's share), got -1"},
		{[]string{"--rew-imagined", "-1"}, "imagined endings per episode for M_rew must not be negative (0 trains it on real frames only), got -1"},
		{[]string{"--obs-checkpoint", "obs.ckpt"}, "M_obs checkpoint obs.ckpt: a checkpoint stands for a fixed number of training steps; set the observation-model steps (--obs-steps)"},
		{[]string{"--counterfactual-swaps", "0"}, "--counterfactual-swaps must be at least 1, got 0"},
		{[]string{"--rew-counterfactual", "-2"}, "counterfactual endings per episode for M_rew must not be negative (0 draws none), got -2"},
		{[]string{"--counterfactual-jitter", "-0.1"}, "counterfactual action noise must be 0 (other episodes' actions) to 2 action units, got -0.1 for the evaluation and 0 for M_rew's endings"},
		{[]string{"--rew-counterfactual", "2", "--rew-counterfactual-jitter", "NaN"}, "counterfactual action noise must be 0 (other episodes' actions) to 2 action units, got 0 for the evaluation and NaN"},
		{[]string{"--rew-counterfactual-jitter", "0.3"}, "M_rew's counterfactual action noise 0.3 has no endings to drive; give the counterfactual endings per episode too"},
		{[]string{"--context-noise", "1.5"}, "context noise must be in [0, 1] (a standard deviation in frame units, which span [−1, 1]; 0 trains on the recorded contexts), got 1.5"},
		{[]string{"--context-noise", "NaN"}, "context noise must be in [0, 1]"},
		{[]string{"--self-forcing", "5"}, "self-forcing must be 0 to the 4 context steps, got 5"},
		{[]string{"--self-forcing-from", "10"}, "self-forcing from step 10: must not be negative, and needs a self-forcing depth above 0"},
		{[]string{"spatial"}, `unexpected argument "spatial"; every setting is a flag`},
	} {
		_, _, err := runCLI(t, append([]string{"bench", "pixel-wm"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	_, stderr, err := runCLI(t, "bench", "pixel-wm", "-h")
	var ec exitCode
	if !errors.As(err, &ec) || ec != 0 || !strings.Contains(stderr, "Usage: accerl bench pixel-wm") || !strings.Contains(stderr, "-linger") {
		t.Errorf("-h: error %v, usage:\n%s", err, stderr)
	}
	if stdout, _, _ := runCLI(t, "--help"); !strings.Contains(stdout, "bench pixel-wm") {
		t.Error("accerl --help does not list bench pixel-wm")
	}
}

// TestBenchPixelWMTiny runs the bench end to end on 10 episodes with a
// 1.2-second budget (a step or two of each model) and checks the report,
// the JSON and the strip; whether the models learn is their packages'
// tests.
func TestBenchPixelWMTiny(t *testing.T) {
	dir := t.TempDir()
	js, png := filepath.Join(dir, "wm.json"), filepath.Join(dir, "strip.png")
	stdout, _, err := runCLI(t, "bench", "pixel-wm", "--episodes", "10", "--minutes", "0.02", "--horizon", "2", "--start", "5",
		"--json", js, "--strip", png, "--data", filepath.Join(dir, "data"), "--counterfactual-swaps", "5")
	if err != nil {
		t.Fatalf("bench pixel-wm: %v\n%s", err, stdout)
	}
	for _, want := range []string{"collected 10 expert_noisy episodes", "imagined MSE  copy-last MSE", "success accuracy", "end     accuracy", "r̂ = p_success", "M_rew on counterfactual endings", "strip: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var res pixelWMBenchResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.HeldEpisodes != 2 || res.ObsSteps < 1 || res.RewSteps < 1 || len(res.ObsImagination.MSE) != 2 || res.RewHeld.Frames == 0 || res.Strip != png {
		t.Errorf("result %+v", res)
	}
	// Both held-out endings replay in the simulator (the replay reproduces every recorded
	// state), each driven by the other's actions only (5 swaps capped at the 1 other).
	if cf := res.Counterfactual; cf == nil || cf.Endings != 2 || cf.Unreplayable != 0 || cf.Horizon != 2 || cf.Swaps != 1 {
		t.Errorf("counterfactual endings %+v, want 2 replayed at horizon 2", cf)
	}
	decodePNG(t, png)
	// The same episodes again come from the stored files; a residual M_obs for exactly 2
	// steps on noised and self-forced contexts, and M_rew trained on 3 imagined endings of 1
	// step per training episode too (every one of the 8 has an end frame after its 4 context
	// frames), and on 2 counterfactual endings of 1 step per training episode (8 more frames
	// each).
	stdout, _, err = runCLI(t, "bench", "pixel-wm", "--episodes", "10", "--minutes", "0.01", "--horizon", "1", "--start", "5",
		"--strip", "", "--data", filepath.Join(dir, "data"), "--obs-steps", "2", "--residual", "--sigma-data", "0.15", "--sample-steps", "1",
		"--rew-imagined", "3", "--rew-counterfactual", "2", "--rew-steps", "7", "--context-noise", "0.05", "--self-forcing", "2", "--self-forcing-from", "1", "--json", js)
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &res) != nil || res.ObsSteps != 2 || !res.EDM.Residual || res.EDM.SigmaData != 0.15 || res.EDM.Steps != 1 ||
		res.EDM.ContextNoise != 0.05 || res.EDM.SelfForcing != 2 || res.EDM.SelfForcingFrom != 1 || !(res.ObsChangeStd > 0) {
		t.Errorf("residual run: %v; result steps %d, EDM %+v, change σ %v", err, res.ObsSteps, res.EDM, res.ObsChangeStd)
	}
	if cf := res.RewCounterfactual; res.RewImagined != 3*8+2*8 || res.RewSteps != 7 || !strings.Contains(stdout, "M_rew: 24 imagined frames (3 endings per training episode)") ||
		cf == nil || cf.Endings != 16 || cf.Frames != 16 || cf.Unreplayable != 0 || !strings.Contains(stdout, "M_rew: 16 imagined frames of 16 counterfactual endings (2 per training episode") {
		t.Errorf("M_rew's imagined frames: %d, want 40, counterfactual %+v; output:\n%s", res.RewImagined, cf, stdout)
	}
	if err != nil || !strings.Contains(stdout, "loaded 10 expert_noisy episodes") {
		t.Errorf("second run: %v\n%s", err, stdout)
	}
	// Residual without --sigma-data: σ_data is the measured frame-change σ, as in the
	// pixels block's pretraining.
	_, _, err = runCLI(t, "bench", "pixel-wm", "--episodes", "10", "--minutes", "0.01", "--horizon", "1", "--start", "5",
		"--strip", "", "--data", filepath.Join(dir, "data"), "--obs-steps", "1", "--residual", "--proprio-steps", "0", "--json", js)
	res = pixelWMBenchResult{}
	if b, rerr := os.ReadFile(js); err != nil || rerr != nil || json.Unmarshal(b, &res) != nil || !(res.ObsChangeStd > 0) || res.EDM.SigmaData != res.ObsChangeStd {
		t.Errorf("residual run, σ_data measured: %v; EDM %+v, change σ %v", err, res.EDM, res.ObsChangeStd)
	}
}

// TestBenchPixelWMObsCheckpoint: --obs-checkpoint keeps the trained M_obs; a second run
// restores it (no M_obs step taken, the same imagination scores and training curve, M_rew
// measured again), and a run asking for another M_obs is refused, naming the difference.
func TestBenchPixelWMObsCheckpoint(t *testing.T) {
	dir := t.TempDir()
	ckpt, js := filepath.Join(dir, "obs.ckpt"), filepath.Join(dir, "wm.json")
	run := func(extra ...string) (pixelWMBenchResult, string, error) {
		args := append([]string{"bench", "pixel-wm", "--episodes", "10", "--minutes", "0.01", "--horizon", "2", "--start", "5", "--strip", "",
			"--data", filepath.Join(dir, "data"), "--proprio-steps", "0", "--rew-steps", "3", "--obs-checkpoint", ckpt, "--json", js}, extra...)
		stdout, _, err := runCLI(t, args...)
		var res pixelWMBenchResult
		if err == nil {
			b, rerr := os.ReadFile(js)
			if rerr != nil || json.Unmarshal(b, &res) != nil {
				t.Fatalf("reading %s: %v", js, rerr)
			}
		}
		return res, stdout, err
	}
	first, stdout, err := run("--obs-steps", "3")
	if err != nil || first.ObsSteps != 3 || first.ObsRestored != "" || !strings.Contains(stdout, "M_obs: saved to "+ckpt) {
		t.Fatalf("first run: %v, %d steps, restored %q\n%s", err, first.ObsSteps, first.ObsRestored, stdout)
	}
	second, stdout, err := run("--obs-steps", "3", "--rew-imagined", "1")
	if err != nil || second.ObsRestored != ckpt || strings.Contains(stdout, "M_obs: saved to") || !strings.Contains(stdout, "M_obs: restored after 3 steps") || second.ObsSteps != 3 ||
		!reflect.DeepEqual(second.ObsImagination.MSE, first.ObsImagination.MSE) || !reflect.DeepEqual(second.ObsLoss, first.ObsLoss) ||
		second.ObsSeconds != first.ObsSeconds || second.RewImagined == 0 {
		t.Errorf("second run: %v, restored %q, steps %d, MSE %v vs %v, curve %v vs %v, %d imagined M_rew frames\n%s", err, second.ObsRestored, second.ObsSteps,
			second.ObsImagination.MSE, first.ObsImagination.MSE, second.ObsLoss, first.ObsLoss, second.RewImagined, stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--obs-steps", "2"}, "holds 3 training steps (its record says 3), more than this run asks for (2)"},
		{[]string{"--obs-steps", "3", "--residual"}, "was trained with other diffusion settings"},
		{[]string{"--obs-steps", "3", "--noise", "0.2"}, "was trained with other offline data"},
	} {
		if _, stdout, err := run(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		} else if strings.Contains(stdout, "collected") {
			t.Errorf("%v: collected episodes before refusing the checkpoint:\n%s", tc.args, stdout)
		}
	}
	// Asked for more steps, it trains on from the checkpoint and ends where 5 straight
	// steps do.
	more, stdout, err := run("--obs-steps", "5")
	if err != nil || more.ObsSteps != 5 || more.ObsRestored != ckpt || !strings.Contains(stdout, "M_obs: restored after 3 steps") || !strings.Contains(stdout, "M_obs: saved to") {
		t.Fatalf("trained on: %v, %d steps, restored %q\n%s", err, more.ObsSteps, more.ObsRestored, stdout)
	}
	straight, _, err := run("--obs-steps", "5", "--obs-checkpoint", filepath.Join(dir, "straight.ckpt"))
	if err != nil || !reflect.DeepEqual(more.ObsImagination.MSE, straight.ObsImagination.MSE) {
		t.Errorf("3 + 2 steps imagine %v, 5 straight %v (%v)", more.ObsImagination.MSE, straight.ObsImagination.MSE, err)
	}
	a, errA := os.ReadFile(ckpt)
	b, errB := os.ReadFile(filepath.Join(dir, "straight.ckpt"))
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		t.Errorf("the trained-on checkpoint differs from the straight run's (%v, %v)", errA, errB)
	}
	if err := os.Remove(ckpt + ".json"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run("--obs-steps", "3"); err == nil || !strings.Contains(err.Error(), "its record") {
		t.Errorf("checkpoint without its record: error %v", err)
	}
}
