package activities

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/accerl/accerl/activities/checkpoint"
	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
)

// wmSpec is a small CartPole arm with the world model on: 12 offline episodes, 3 pretraining
// epochs, sync mode with 2 envs and 64-step batches (half imagined), a 2000-step budget.
func wmSpec() specs.Config {
	c := specs.DefaultConfig()
	c.Env.Kind = specs.EnvCartPole
	c.Env.MaxEpisodeSteps = 500
	c.Budget.EnvSteps = 2000
	c.Pipeline.Mode = specs.ModeSync
	c.Pipeline.Workers, c.Pipeline.EnvsPerWorker = 2, 1
	c.Pipeline.ChunkSteps = 32
	c.Pipeline.ReplayCapacity = 256
	c.Algorithm.BatchSteps = 64
	c.Algorithm.Minibatches = 2
	c.Algorithm.Epochs = 2
	c.Policy.Hidden = []int{16}
	w := &c.WorldModel
	w.Enabled = true
	w.OfflineTrajectories = 12
	w.History = 2
	w.ObsHidden, w.RewHidden = []int{16}, []int{8}
	w.PretrainEpochs = 3
	w.ObsEvery, w.RewEvery = 1, 1
	w.ImaginationRatio = 0.5
	return c
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWorldModelActivities runs CollectOffline and PretrainWorldModel, repeats them (both
// return at once), kills pretraining's last checkpoint as a crash before it would have been
// written and checks that the retry resumes from the previous epoch to the same bytes, then
// runs a first training segment from the pretrained model at a given horizon.
func TestWorldModelActivities(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&WorldModel{})
	env.RegisterActivity(&Trainer{})
	runDir := t.TempDir()
	cfg := wmSpec()

	collect := func() CollectOfflineResult {
		v, err := env.ExecuteActivity((&WorldModel{}).CollectOffline, CollectOfflineInput{RunDir: runDir, Config: cfg, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		var res CollectOfflineResult
		if err := v.Get(&res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	col := collect()
	if col.Episodes != 12 || col.Rows < 12*8 || col.Dir != filepath.Join(runDir, "worldmodel", "dataset") {
		// A random CartPole episode lasts at least 8 steps (the pole falls from near upright).
		t.Fatalf("collect = %+v, want 12 episodes of at least 8 steps under <run>/worldmodel/dataset", col)
	}
	if again := collect(); again != col {
		t.Errorf("second collect = %+v, want %+v", again, col)
	}

	pretrain := func() PretrainWorldModelResult {
		v, err := env.ExecuteActivity((&WorldModel{}).PretrainWorldModel, PretrainWorldModelInput{
			RunDir: runDir, SpecHash: "h", Config: cfg, Seed: 3, DatasetDir: col.Dir})
		if err != nil {
			t.Fatal(err)
		}
		var res PretrainWorldModelResult
		if err := v.Get(&res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := pretrain()
	// 12 episodes, round(0.1·12) = 1 held out: 11 train.
	if first.ResumedFrom != 0 || first.TrainEpisodes != 11 || first.ValEpisodes != 1 || !first.HasValLoss || first.Steps%3 != 0 {
		t.Fatalf("pretrain = %+v", first)
	}
	perEpoch := first.Steps / 3
	final := readFile(t, filepath.Join(first.Checkpoint, wmStateFile))
	dirs, err := checkpoint.List(filepath.Join(runDir, "worldmodel", "pretrain"))
	if err != nil || len(dirs) != 2 {
		t.Fatalf("pretrain checkpoints %v (%v), want the last 2 epochs", dirs, err)
	}
	if again := pretrain(); again.ResumedFrom != first.Steps || again.Checkpoint != first.Checkpoint {
		t.Errorf("repeated pretrain = %+v, want it to return the finished state at once", again)
	}
	// Crash during the last epoch: its checkpoint was never written.
	if err := os.RemoveAll(first.Checkpoint); err != nil {
		t.Fatal(err)
	}
	retry := pretrain()
	if retry.ResumedFrom != 2*perEpoch || retry.Steps != first.Steps || retry.ValObsLoss != first.ValObsLoss {
		t.Errorf("retry = %+v, want resumed from step %d to %+v", retry, 2*perEpoch, first)
	}
	if string(readFile(t, filepath.Join(retry.Checkpoint, wmStateFile))) != string(final) {
		t.Error("resumed pretraining ended in a different state")
	}

	v, err := env.ExecuteActivity((&Trainer{}).TrainSegment, TrainSegmentInput{
		RunDir: runDir, Experiment: "e", Arm: "base", Seed: 3, SpecHash: "h", Config: cfg,
		Plan: runstate.Plan{Segment: 1, Updates: 4, TotalUpdates: 62, Horizon: 7, WorldModelState: retry.Checkpoint}})
	if err != nil {
		t.Fatal(err)
	}
	var seg TrainSegmentResult
	if err := v.Get(&seg); err != nil {
		t.Fatal(err)
	}
	// 4 updates of 32 real steps each (2 envs × 16); pretrained, so imagination starts after
	// the first update: 3 updates of at least round(0.5·64) = 32 imagined steps.
	if seg.EnvSteps != 128 || seg.Horizon != 7 || !seg.HasWMValLoss || seg.ImaginedSteps < 96 {
		t.Errorf("segment = %+v, want 128 env steps, horizon 7, a val loss and >= 96 imagined steps", seg)
	}
	rows, _, err := runstore.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d metrics rows, want 4", len(rows))
	}
	for _, r := range rows {
		if r.Horizon != 7 || math.IsNaN(r.WMValLoss) {
			t.Errorf("metrics row %d: horizon %v, wm_val_loss %v; want 7 and a number", r.Step, r.Horizon, r.WMValLoss)
		}
	}
}
