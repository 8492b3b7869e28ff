package activities

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
	"go.temporal.io/sdk/testsuite"
)

func TestDiscardSegmentsRemovesRolledBackRows(t *testing.T) {
	dir := t.TempDir()
	for s := int32(1); s <= 4; s++ {
		rows := []runstore.MetricsRow{{Segment: s, Step: int64(s), EpisodeReturn: math.NaN()}}
		eps := []runstore.EpisodeRow{{Segment: s, EnvSteps: int64(10 * s)}}
		if err := runstore.WriteSegment(dir, s, rows, eps); err != nil {
			t.Fatal(err)
		}
	}
	// Segment 5 resumes from segment 2's checkpoint: segments 3 and 4 are rolled back.
	if err := discardSegments(dir, 3, 4); err != nil {
		t.Fatal(err)
	}
	rows, eps, err := runstore.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Step != 2 || len(eps) != 2 {
		t.Errorf("after discarding 3-4: %d rows (last step %d), %d episodes; want the 2 of segments 1-2", len(rows), rows[len(rows)-1].Step, len(eps))
	}
	if _, err := os.Stat(filepath.Join(dir, runstore.EpisodesDir, runstore.SegmentFile(3))); !os.IsNotExist(err) {
		t.Errorf("episodes of segment 3 still there: %v", err)
	}
	// Discarding what is already gone is not an error (a retried activity does it twice).
	if err := discardSegments(dir, 3, 4); err != nil {
		t.Error(err)
	}
}

// TestCorruptCheckpointFallsBack trains segments 1-3 of a small sync run, flips one byte of
// segment 3's checkpoint, then runs segment 4: it must resume from segment 2's checkpoint
// with a warning, redo segment 3's updates, and leave exactly one metrics row per update.
func TestCorruptCheckpointFallsBack(t *testing.T) {
	runner := newSegmentRunner(t)
	runDir := t.TempDir()
	c := tinyCartPole(specs.ModeSync, 4096)
	c.Checkpoint.Keep = 3
	segment := func(seg int32) TrainSegmentResult {
		t.Helper()
		return runner.run(TrainSegmentInput{
			RunDir: runDir, Experiment: "e", Arm: "base", Seed: 1, SpecHash: "h", Config: c,
			Plan: runstate.Plan{Segment: seg, Updates: 2, TotalUpdates: 32},
		})
	}
	for seg := int32(1); seg <= 3; seg++ {
		segment(seg)
	}
	p := filepath.Join(CheckpointDir(runDir, 3), engineStateFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}

	res := segment(4)
	// Segment 2 ended after 4 updates (512 steps); segment 4 redoes updates 5 and 6.
	if res.Updates != 6 || res.EnvSteps != 768 {
		t.Errorf("segment 4 ended at %d updates, %d steps; want 6 and 768 (resumed from segment 2)", res.Updates, res.EnvSteps)
	}
	if len(res.Warnings) < 2 || !strings.Contains(strings.Join(res.Warnings, "\n"), "corrupted") ||
		!strings.Contains(strings.Join(res.Warnings, "\n"), "resumed from the checkpoint of segment 2") {
		t.Errorf("warnings = %q; want the corruption and the fallback", res.Warnings)
	}
	rows, _, err := runstore.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if r.Step != int64(i+1) {
			t.Fatalf("row %d has step %d: rows are missing or duplicated after the fallback", i, r.Step)
		}
	}
	if len(rows) != 6 {
		t.Errorf("%d metrics rows, want 6", len(rows))
	}
	// The warnings stay in the run's summary after the segment (and the next ones) ends.
	segment(5)
	var sum runstore.RunSummary
	if err := runstore.ReadJSON(filepath.Join(runDir, summaryFileName), &sum); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sum.Warnings, res.Warnings) {
		t.Errorf("summary.json warnings after segment 5 = %q, want segment 4's %q", sum.Warnings, res.Warnings)
	}
}

// TestRetryResumesFromHeartbeatCheckpoint: a retried segment first tries the checkpoint its
// previous attempt named in its last heartbeat. Segment 2's checkpoint is moved out of the
// run's checkpoint directory (where a scan cannot find it) and named in the heartbeat
// details: segment 3 resumes from it without a warning, with the parameters an
// uninterrupted run has. Without the heartbeat, the scan falls back to segment 1.
func TestRetryResumesFromHeartbeatCheckpoint(t *testing.T) {
	runner := newSegmentRunner(t)
	c := tinyCartPole(specs.ModeSync, 4096)
	seg := func(runDir string, s int32) TrainSegmentInput {
		return TrainSegmentInput{RunDir: runDir, Experiment: "e", Arm: "base", Seed: 1, SpecHash: "h", Config: c,
			Plan: runstate.Plan{Segment: s, Updates: 2, TotalUpdates: 32}}
	}
	ref := t.TempDir()
	var want TrainSegmentResult
	for s := int32(1); s <= 3; s++ {
		want = runner.run(seg(ref, s))
	}

	runDir := t.TempDir()
	runner.run(seg(runDir, 1))
	runner.run(seg(runDir, 2))
	moved := filepath.Join(t.TempDir(), "seg-2-elsewhere")
	if err := os.Rename(CheckpointDir(runDir, 2), moved); err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&Trainer{})
	env.SetHeartbeatDetails(SegmentProgress{Segment: 3, Updates: 5, ResumedFrom: moved})
	v, err := env.ExecuteActivity((&Trainer{}).TrainSegment, seg(runDir, 3))
	if err != nil {
		t.Fatal(err)
	}
	var got TrainSegmentResult
	if err := v.Get(&got); err != nil {
		t.Fatal(err)
	}
	if len(got.Warnings) != 0 || got.ParamsSHA256 != want.ParamsSHA256 || got.Updates != want.Updates {
		t.Errorf("resumed from the heartbeat's checkpoint: warnings %v, params %.12s after %d updates; want no warning and %.12s after %d",
			got.Warnings, got.ParamsSHA256, got.Updates, want.ParamsSHA256, want.Updates)
	}
	// The same retry without the heartbeat cannot see the moved checkpoint.
	other := t.TempDir()
	runner.run(seg(other, 1))
	runner.run(seg(other, 2))
	if err := os.Rename(CheckpointDir(other, 2), filepath.Join(t.TempDir(), "gone")); err != nil {
		t.Fatal(err)
	}
	if res := runner.run(seg(other, 3)); len(res.Warnings) == 0 || !strings.Contains(strings.Join(res.Warnings, " "), "checkpoint of segment 1") {
		t.Errorf("without the heartbeat: warnings %v, want a fallback to segment 1", res.Warnings)
	}
}
