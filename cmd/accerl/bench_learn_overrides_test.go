package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --pretrain-from starts a VLA check's cloning from a given clone: no more epochs unless
// --pretrain-epochs says so, at --pretrain-lr; each seed's path has {seed} filled in and a
// glob resolved to exactly one match; a check without a VLA clone, a pattern matching none
// or several paths are errors that say what to change.
func TestPretrainFromOverride(t *testing.T) {
	c := tabletopVLAConfig("spatial")
	ov := learnOverrides{given: map[string]bool{}, pretrainFrom: "cache/x-seed{seed}-*", pretrainLR: 1e-3}
	if err := ov.apply("tabletop-spatial-vla", &c); err != nil || c.Pretrain.From != "cache/x-seed{seed}-*" || c.Pretrain.Epochs != 0 || c.Pretrain.LearningRate != 1e-3 {
		t.Fatalf("--pretrain-from: %v, pretrain %+v", err, c.Pretrain)
	}
	if s := learnSettingsOf(c); s.PretrainFrom != c.Pretrain.From || !strings.Contains(s.String(), "cloned from cache/x-seed{seed}-* for 0 more epochs at 0.001") {
		t.Errorf("settings %+v, %q", s, s)
	}
	c = tabletopVLAConfig("spatial")
	ov.pretrainEpochs = 20
	if err := ov.apply("tabletop-spatial-vla", &c); err != nil || c.Pretrain.Epochs != 20 {
		t.Errorf("--pretrain-from with --pretrain-epochs 20: %v, pretrain %+v", err, c.Pretrain)
	}
	mlp := tabletopBCConfig("spatial")
	if err := ov.apply("tabletop-spatial-bc", &mlp); err == nil || !strings.Contains(err.Error(), "no VLA") {
		t.Errorf("--pretrain-from on an MLP check: err %v, want it refused", err)
	}

	dir := t.TempDir()
	for _, name := range []string{"x-seed1-abc", "x-seed2-def", "x-seed2-0ff"} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c.Pretrain.From = filepath.Join(dir, "x-seed{seed}-*")
	if got, err := withPretrainFrom(c, 1); err != nil || got.Pretrain.From != filepath.Join(dir, "x-seed1-abc") {
		t.Errorf("seed 1: %q, %v; want the one match", got.Pretrain.From, err)
	}
	if _, err := withPretrainFrom(c, 2); err == nil || !strings.Contains(err.Error(), "matches 2 paths") {
		t.Errorf("seed 2: err %v, want the two matches named", err)
	}
	if _, err := withPretrainFrom(c, 3); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("seed 3: err %v, want no match reported", err)
	}
	if got, err := withPretrainFrom(tabletopVLAConfig("spatial"), 3); err != nil || got.Pretrain.From != "" {
		t.Errorf("no --pretrain-from: %q, %v", got.Pretrain.From, err)
	}
}
