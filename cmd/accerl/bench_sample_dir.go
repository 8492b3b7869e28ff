package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// sampleRunDir is an arm's run directory: under keep, <keep>/<arm>/seed-<n> (created, and
// refused when it already holds a run, so that nothing kept is overwritten); else a
// temporary one.
func sampleRunDir(keep string, worldModel bool, seed uint64) (string, error) {
	if keep == "" {
		return os.MkdirTemp("", "accerl-bench-sample-")
	}
	arm := "no-world-model"
	if worldModel {
		arm = "world-model"
	}
	dir := filepath.Join(keep, arm, fmt.Sprintf("seed-%d", seed))
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return "", fmt.Errorf("--keep %s: %s already holds a run; give another directory or move it away", keep, dir)
	}
	return dir, os.MkdirAll(dir, 0o755)
}
