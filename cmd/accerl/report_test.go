package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/accerl/accerl/runstore"
)

// finishedExperiment writes an experiment of one completed run (arm base, seed 1) with two
// segments, the layout the engine leaves, and returns its directory.
func finishedExperiment(t *testing.T) string {
	t.Helper()
	exp := filepath.Join(t.TempDir(), "tiny")
	m := runstore.ExperimentManifest{Name: "tiny", SpecHash: "f00d", Baseline: "base", Arms: []string{"base"}, Seeds: []uint64{1}}
	if err := runstore.WriteJSON(filepath.Join(exp, runstore.ExperimentFile), m); err != nil {
		t.Fatal(err)
	}
	dir := runstore.RunDir(exp, "base", 1)
	for seg := int32(1); seg <= 2; seg++ {
		steps := int64(256 * seg)
		rows := []runstore.MetricsRow{{Step: int64(seg), EnvSteps: steps, WallS: float64(seg), EpisodeReturn: 20}}
		eps := []runstore.EpisodeRow{{EnvSteps: steps, Return: 20, Length: 10}}
		if err := runstore.WriteSegment(dir, seg, rows, eps); err != nil {
			t.Fatal(err)
		}
	}
	s := runstore.RunSummary{Status: runstore.StatusCompleted, EnvSteps: 512, Episodes: 2, StepsPerS: 256, WallS: 2, Segments: 2}
	if err := runstore.WriteJSON(filepath.Join(dir, runstore.SummaryFile), s); err != nil {
		t.Fatal(err)
	}
	return exp
}

// A truncated metrics file of a finished experiment: accerl report names the file and what
// to do, and does not say the experiment is unfinished.
func TestReportNamesCorruptMetricsFile(t *testing.T) {
	exp := finishedExperiment(t)
	bad := filepath.Join(runstore.RunDir(exp, "base", 1), runstore.MetricsDir, runstore.SegmentFile(1))
	b, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	status, stdout, stderr := runArgs(t, "report", exp)
	if status != 0 {
		t.Fatalf("report: status %d\n%s", status, stderr)
	}
	if strings.Contains(stdout, "not finished") || !strings.Contains(stdout, bad+" is corrupt") || !strings.Contains(stdout, "delete it") {
		t.Errorf("report with %s truncated:\n%s\nwant the file named as corrupt and what to do, not that the experiment is unfinished", bad, stdout)
	}
}

// accerl report --watch regenerates the report every --every, one line each time, until
// Ctrl-C, which ends it without an error.
func TestReportWatchRegenerates(t *testing.T) {
	exp := finishedExperiment(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"report", "--watch", "--every", "100ms", exp}, &stdout, &stderr) }()
	line := "regenerated " + filepath.Join(exp, "report.md") + " (complete)"
	for deadline := time.Now().Add(20 * time.Second); strings.Count(stdout.String(), line) < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("report --watch did not regenerate twice in 20 s:\n%s\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel() // Ctrl-C
	if err := <-done; err != nil {
		t.Errorf("report --watch after Ctrl-C: %v", err)
	}
	if !strings.Contains(stdout.String(), "Report: ") || !strings.Contains(stdout.String(), "every 100ms; Ctrl-C to stop") {
		t.Errorf("report --watch output:\n%s", stdout.String())
	}
	if status, _, stderr := runArgs(t, "report", "--watch", "--every", "0s", exp); status != 2 || !strings.Contains(stderr, "--every must be a positive duration") {
		t.Errorf("--every 0s: status %d, stderr %q", status, stderr)
	}
}
