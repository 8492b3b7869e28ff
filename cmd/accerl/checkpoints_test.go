package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/activities/checkpoint"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
)

// assertCheckpointsFinite loads every checkpoint under root and rebuilds an engine from it.
// Loading verifies each file's SHA-256; the engine refuses a snapshot whose parameters or
// optimizer state are not finite, so a NaN in any checkpoint fails here.
func assertCheckpointsFinite(t *testing.T, root string) {
	t.Helper()
	runDir := filepath.Dir(root)
	var man runstore.RunManifest
	if err := runstore.ReadJSON(filepath.Join(runDir, "manifest.json"), &man); err != nil {
		t.Fatal(err)
	}
	var cfg specs.Config
	if err := json.Unmarshal(man.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	dirs, err := checkpoint.List(root)
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no checkpoints under %s (%v)", root, err)
	}
	for _, d := range dirs {
		_, files, err := checkpoint.Load(d)
		if err != nil {
			t.Errorf("checkpoint %s: %v", d, err)
			continue
		}
		snap, err := activities.LoadSnapshot(files)
		if err != nil {
			t.Errorf("checkpoint %s: %v", d, err)
			continue
		}
		if _, err := activities.NewEngine(cfg, man.Seed, 100, snap); err != nil {
			t.Errorf("checkpoint %s does not restore: %v", d, err)
		}
	}
}
