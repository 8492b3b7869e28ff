package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res bcVLABenchResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Policy != "vla" || len(res.EpochLoss) != 1 || len(res.Tasks) != 10 || res.Model.ActionDims != 14 ||
		res.Model.Cameras != 1 || res.Params == 0 || res.TrainSamplesPerS <= 0 || res.ActCalls == 0 {
		t.Errorf("result %+v", res)
	}
}

func TestBenchBCUnknownPolicy(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := benchBC(context.Background(), []string{"--policy", "cnn"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `unknown --policy "cnn"`) {
		t.Errorf("err %v, want the unknown policy named", err)
	}
}
