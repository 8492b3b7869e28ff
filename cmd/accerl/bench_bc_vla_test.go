package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/activities/bc"
	"github.com/accerl/accerl/activities/checkpoint"
	"github.com/accerl/accerl/runstore"
)

// TestBenchBCVLATiny runs `bench bc --policy vla` end to end at a toy size (one wrist camera
// at 16×16, width 16, one epoch on two demonstrations per task, one initial state) and checks
// its report and JSON; whether the recipe learns is activities/bc's smoke test.
func TestBenchBCVLATiny(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bc.json")
	var stdout, stderr bytes.Buffer
	args := []string{"--policy", "vla", "--demos", "2", "--epochs", "1", "--init-states", "1", "--dim", "16", "--layers", "1",
		"--chunk", "2", "--execute", "1", "--cameras", "wrist", "--image-size", "16", "--patch", "4", "--json", out}
	if err := benchBC(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("bench bc: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"epoch 1/1: cross-entropy", "greedy VLA BC success", "act ", "samples/s"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	var res bcVLABenchResult
	if err := runstore.ReadJSON(out, &res); err != nil {
		t.Fatal(err)
	}
	if res.Policy != "vla" || len(res.EpochLoss) != 1 || len(res.Tasks) != 10 || res.Model.ActionDims != 14 ||
		res.Model.Cameras != 1 || res.Params == 0 || res.TrainSamplesPerS <= 0 || res.ActCalls == 0 {
		t.Errorf("result %+v", res)
	}
	// The edge failures are counted per task, summed, and bounded by the failures.
	edge := 0
	for _, ts := range res.Tasks {
		edge += ts.EdgeFailures
		if ts.EdgeFailures < 0 || float64(ts.EdgeFailures) > (1-ts.SuccessRate)*float64(ts.Episodes)+1e-9 {
			t.Errorf("task %d: %d edge failures of %d episodes at success %.2f", ts.Task, ts.EdgeFailures, ts.Episodes, ts.SuccessRate)
		}
	}
	if edge != res.EdgeFails || (res.SuccessRate < 1 && !strings.Contains(stdout.String(), "failed episodes ended with the fingertip at the workspace's edge")) {
		t.Errorf("edge failures: %d per task, %d in all; output:\n%s", edge, res.EdgeFails, stdout.String())
	}
}

func TestBenchBCUnknownPolicy(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := benchBC(context.Background(), []string{"--policy", "cnn"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `unknown --policy "cnn"`) {
		t.Errorf("err %v, want the unknown policy named", err)
	}
}

// TestBenchBCVLASaveLoad trains a toy policy with a held-out split and soft labels, saves it,
// and evaluates the saved file with the mean decode and another --execute: the second run
// trains nothing and reports the loaded model's scores.
func TestBenchBCVLASaveLoad(t *testing.T) {
	dir := t.TempDir()
	model, out := filepath.Join(dir, "m.bin"), filepath.Join(dir, "bc.json")
	toy := []string{"--policy", "vla", "--demos", "2", "--init-states", "1", "--dim", "16", "--layers", "1",
		"--chunk", "2", "--cameras", "wrist", "--image-size", "16", "--patch", "4", "--holdout", "1", "--score-samples", "50"}
	var stdout, stderr bytes.Buffer
	args := append(append([]string(nil), toy...), "--epochs", "1", "--execute", "2", "--label-sigma", "2", "--save-model", model)
	if err := benchBC(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("bench bc: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"training demos (", "held-out demos (", "argmax-decoded actions: MAE translation"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("training run's output lacks %q:\n%s", want, stdout.String())
		}
	}
	stdout.Reset()
	args = append(append([]string(nil), toy...), "--execute", "1", "--decode", "mean", "--load-model", model, "--json", out)
	if err := benchBC(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("bench bc --load-model: %v\n%s", err, stderr.String())
	}
	if strings.Contains(stdout.String(), "epoch 1/") || !strings.Contains(stdout.String(), "loaded "+model) {
		t.Errorf("the loading run trained, or did not say what it loaded:\n%s", stdout.String())
	}
	var res bcVLABenchResult
	if err := runstore.ReadJSON(out, &res); err != nil {
		t.Fatal(err)
	}
	if res.LoadedModel != model || res.Decode != "mean" || res.Execute != 1 || len(res.EpochLoss) != 0 || res.HeldOutDemos != 1 ||
		res.TrainScore == nil || res.HeldOutScore == nil || res.HeldOutScore.Samples == 0 || res.HeldOutScore.Decode != "mean" || res.ActCalls == 0 {
		t.Errorf("result %+v", res)
	}
	stdout.Reset()
	args = append(append([]string(nil), toy...), "--ensemble", "4", "--load-model", model, "--json", out)
	if err := benchBC(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("bench bc --ensemble 4: %v\n%s", err, stderr.String())
	}
	res = bcVLABenchResult{}
	if err := runstore.ReadJSON(out, &res); err != nil {
		t.Fatal(err)
	}
	if res.Ensemble != 2 || !strings.Contains(stdout.String(), "temporal ensembling") {
		t.Errorf("--ensemble 4 on a chunk-2 model: ensemble %d in the JSON, want 2 (the chunk); output:\n%s", res.Ensemble, stdout.String())
	}
	if err := benchBC(context.Background(), append(toy, "--ensemble", "-1"), &stdout, &stderr); err == nil {
		t.Error("--ensemble -1 was accepted")
	}
	args = append(append([]string(nil), toy...), "--execute", "3", "--load-model", model)
	if err := benchBC(context.Background(), args, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "chunk 2") {
		t.Errorf("--execute 3 on a chunk-2 model: err %v, want it refused", err)
	}
	if err := benchBC(context.Background(), append(toy, "--decode", "mode"), &stdout, &stderr); err == nil {
		t.Error("--decode mode was accepted")
	}
	if err := benchBC(context.Background(), append(toy, "--dagger-max-steps", "-1"), &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "--dagger-max-steps") {
		t.Errorf("--dagger-max-steps -1: err %v, want it refused by name", err)
	}
	// One DAgger round from the saved clone, and its control: the round adds the clone's
	// labelled steps (10 tasks × 1 episode × at most 4 steps) to the demonstrations; the
	// control adds none and trains the same epochs on the demonstrations alone.
	for _, control := range []bool{false, true} {
		args = append(append([]string(nil), toy...), "--load-model", model, "--dagger-rounds", "1", "--dagger-episodes", "1",
			"--dagger-max-steps", "4", "--dagger-epochs", "1", "--json", out)
		if control {
			args = append(args, "--dagger-control")
		}
		stdout.Reset()
		if err := benchBC(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("bench bc --dagger-rounds 1 (control %v): %v\n%s", control, err, stderr.String())
		}
		res = bcVLABenchResult{}
		if err := runstore.ReadJSON(out, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.DAgger) != 2 {
			t.Fatalf("control %v: %d DAgger entries, want round 0 and round 1", control, len(res.DAgger))
		}
		r0, r1 := res.DAgger[0], res.DAgger[1]
		if control {
			if !r1.Control || r1.Episodes != 0 || r1.Steps != 0 || r1.Samples != r0.Samples || !strings.Contains(stdout.String(), "DAgger control round 1") {
				t.Errorf("control round %+v after %+v, want no rollouts and the demonstrations' samples only", r1, r0)
			}
		} else if r1.Control || r1.Episodes != 10 || r1.Steps < 10 || r1.Steps > 40 || r1.Samples != r0.Samples+r1.Steps {
			t.Errorf("round %+v after %+v, want 10 episodes of 1..4 labelled steps added to the samples", r1, r0)
		}
		if len(r1.EpochLoss) != 1 || r1.EvalS <= 0 {
			t.Errorf("control %v: round 1 %+v, want one epoch and an evaluation", control, r1)
		}
	}
}

// TestBenchBCVLALoadClone starts `bench bc` from a clone as a run stores it (the engine
// policy's parameters, proprio standardisation folded in, in a bc/final checkpoint): unfolded
// onto this command's demonstrations it is the saved model itself, so its teacher-forced
// cross-entropy on the training demonstrations equals the --load-model run's; one control
// round then trains it further.
func TestBenchBCVLALoadClone(t *testing.T) {
	dir := t.TempDir()
	modelFile, run := filepath.Join(dir, "m.bin"), filepath.Join(dir, "run")
	toy := []string{"--policy", "vla", "--demos", "2", "--init-states", "1", "--dim", "16", "--layers", "1",
		"--chunk", "2", "--execute", "1", "--cameras", "wrist", "--image-size", "16", "--patch", "4", "--score-samples", "50"}
	var stdout, stderr bytes.Buffer
	if err := benchBC(context.Background(), append(toy, "--epochs", "1", "--save-model", modelFile), &stdout, &stderr); err != nil {
		t.Fatalf("bench bc: %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(modelFile)
	if err != nil {
		t.Fatal(err)
	}
	var m bc.VLAModel
	if err := m.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	folded, err := m.FoldedParams()
	if err != nil {
		t.Fatal(err)
	}
	policy, err := json.Marshal(map[string]any{"params": folded})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.Save(activities.BCPolicyDir(run), checkpoint.Manifest{SpecHash: "h"}, map[string][]byte{"policy.json": policy}); err != nil {
		t.Fatal(err)
	}
	score := func(args ...string) bcVLABenchResult {
		t.Helper()
		out := filepath.Join(dir, "bc.json")
		stdout.Reset()
		if err := benchBC(context.Background(), append(append(append([]string(nil), toy...), args...), "--json", out), &stdout, &stderr); err != nil {
			t.Fatalf("bench bc %v: %v\n%s", args, err, stderr.String())
		}
		var res bcVLABenchResult
		if err := runstore.ReadJSON(out, &res); err != nil {
			t.Fatal(err)
		}
		if res.TrainScore == nil {
			t.Fatalf("bench bc %v: no training score", args)
		}
		return res
	}
	exported := filepath.Join(dir, "exported.bin")
	saved, clone := score("--load-model", modelFile), score("--load-clone", run, "--save-model", exported)
	// The unfolded proprio layer differs from the saved one by float32 rounding only
	// (SetFoldedParams' test); over the 50 scored steps' mean that moves the cross-entropy
	// by far less than 1e-4 nats.
	if d := math.Abs(clone.TrainScore.CrossEntropy - saved.TrainScore.CrossEntropy); d > 1e-4 || clone.LoadedModel != run {
		t.Errorf("--load-clone: cross-entropy %v, --load-model's %v; loaded %q", clone.TrainScore.CrossEntropy, saved.TrainScore.CrossEntropy, clone.LoadedModel)
	}
	// --save-model with --load-clone writes the run's clone as a model file: loaded back,
	// it is the same network, so it scores the same cross-entropy (the file stores the
	// float32 parameters exactly; only the summation order could differ, far below 1e-6).
	if back := score("--load-model", exported); math.Abs(back.TrainScore.CrossEntropy-clone.TrainScore.CrossEntropy) > 1e-6 {
		t.Errorf("the exported clone scores %v, the clone %v", back.TrainScore.CrossEntropy, clone.TrainScore.CrossEntropy)
	}
	if err := benchBC(context.Background(), append(toy, "--load-model", modelFile, "--save-model", exported), &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "--save-model") {
		t.Errorf("--load-model with --save-model: err %v, want it named", err)
	}
	more := score("--load-clone", run, "--dagger-rounds", "1", "--dagger-control", "--dagger-epochs", "1")
	if len(more.DAgger) != 2 || len(more.DAgger[1].EpochLoss) != 1 {
		t.Errorf("--load-clone with a control round: rounds %+v, want round 0 and one epoch of round 1", more.DAgger)
	}
	if err := benchBC(context.Background(), append(toy, "--load-clone", run, "--load-model", modelFile), &stdout, &stderr); err == nil {
		t.Error("--load-clone with --load-model: no error")
	}
	if err := benchBC(context.Background(), append(toy, "--load-clone", dir), &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "--load-clone") {
		t.Errorf("--load-clone of a directory without a clone: err %v, want it named", err)
	}
}
