package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accerl/accerl/runstore"
)

// exportExperiment writes two runs of one segment each, the layout the engine leaves.
func exportExperiment(t *testing.T) string {
	t.Helper()
	exp := t.TempDir()
	for _, arm := range []string{"base", "sync"} {
		rows := []runstore.MetricsRow{{Step: 1, EnvSteps: 256, EpisodeReturn: 20}, {Step: 2, EnvSteps: 512, EpisodeReturn: 30}}
		if err := runstore.WriteSegment(runstore.RunDir(exp, arm, 7), 1, rows, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Hidden directories (a checkpoint staging area, say) are not searched.
	if err := runstore.WriteSegment(filepath.Join(exp, ".tmp", "seed-1"), 1, nil, nil); err != nil {
		t.Fatal(err)
	}
	return exp
}

func TestExportParquetEveryRun(t *testing.T) {
	exp := exportExperiment(t)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"export", exp, "--format", "parquet"}, &stdout, &stderr); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr.String())
	}
	for _, arm := range []string{"base", "sync"} {
		for _, f := range []string{runstore.MetricsParquet, runstore.EpisodesParquet} {
			path := filepath.Join(runstore.RunDir(exp, arm, 7), runstore.ParquetDir, f)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("missing %s: %v", path, err)
			}
			if !strings.Contains(stdout.String(), path) {
				t.Errorf("output does not name %s:\n%s", path, stdout.String())
			}
		}
	}
	if _, err := os.Stat(filepath.Join(exp, ".tmp", "seed-1", runstore.ParquetDir)); err == nil {
		t.Error("exported a run inside a hidden directory")
	}
}

func TestExportTensorBoardRebuilds(t *testing.T) {
	exp := exportExperiment(t)
	tb := filepath.Join(runstore.RunDir(exp, "base", 7), runstore.TensorBoardDir)
	if err := os.RemoveAll(tb); err != nil {
		t.Fatal(err)
	}
	// A run directory as the argument exports that run alone.
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"export", "--format=tensorboard", runstore.RunDir(exp, "base", 7)}, &stdout, &stderr); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(tb, runstore.TensorBoardFile(1))); err != nil {
		t.Fatal(err)
	}
}

func TestExportRejects(t *testing.T) {
	exp := exportExperiment(t)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"export", exp, "--format", "csv"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `--format must be "parquet" or "tensorboard"`) {
		t.Errorf("--format csv: %v", err)
	}
	err = run(context.Background(), []string{"export", t.TempDir()}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no run below") {
		t.Errorf("empty directory: %v", err)
	}
}
