package activities

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/accerl/accerl/activities/checkpoint"
	"github.com/accerl/accerl/activities/pixelwm"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
)

// pixelWMSpec is a small tabletop arm with the pixel world model: 10 offline episodes of the
// noisy expert at 16×16 (40 steps), 2 context frames, and step counts that cross one
// mid-phase checkpoint of each model.
func pixelWMSpec() specs.Config {
	c := specs.DefaultConfig()
	c.Env.Kind, c.Env.Suite, c.Env.ImageSize, c.Env.Pixels, c.Env.MaxEpisodeSteps = specs.EnvTabletop, "spatial", 16, true, 40
	w := &c.WorldModel
	w.Enabled, w.OfflineTrajectories, w.Behaviour, w.History, w.ImaginationRatio = true, 10, specs.WorldModelBehaviourExpertNoisy, 2, 0
	px := specs.DefaultPixelWorldModel()
	px.ObsSteps, px.RewSteps, px.ProprioSteps = 30, 260, 1010
	w.Pixels = &px
	return c
}

// TestPixelWorldModelActivities runs CollectOffline and PretrainWorldModel with a pixels
// block: the dataset is the pixel store (frames, read back by an independent Load), the
// result scores the held-out episode and names a strip PNG of the expected size; a repeat
// returns at once; and with the final checkpoint removed (a crash before it was written)
// the retry resumes from the one before and ends in the same bytes.
func TestPixelWorldModelActivities(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&WorldModel{})
	runDir := t.TempDir()
	cfg := pixelWMSpec()

	v, err := env.ExecuteActivity((&WorldModel{}).CollectOffline, CollectOfflineInput{RunDir: runDir, Config: cfg, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var col CollectOfflineResult
	if err := v.Get(&col); err != nil {
		t.Fatal(err)
	}
	in, eps, err := pixelwm.Load(col.Dir)
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, e := range eps {
		steps += len(e.Actions)
		if len(e.Frames[0]) != 2 || len(e.Frames[0][0]) != 16*16*3 {
			t.Fatalf("a frame holds %d cameras of %d bytes, want 2 of %d", len(e.Frames[0]), len(e.Frames[0][0]), 16*16*3)
		}
	}
	if col.Episodes != 10 || len(eps) != 10 || col.Rows != steps || in.Behaviour != pixelwm.BehaviourExpertNoisy || in.Noise != 0.3 {
		t.Fatalf("collect = %+v (stored input %+v, %d episodes of %d steps), want 10 noisy-expert episodes", col, in, len(eps), steps)
	}

	pretrain := func() PretrainWorldModelResult {
		t.Helper()
		v, err := env.ExecuteActivity((&WorldModel{}).PretrainWorldModel, PretrainWorldModelInput{RunDir: runDir, SpecHash: "h", Config: cfg, Seed: 3, DatasetDir: col.Dir})
		if err != nil {
			t.Fatal(err)
		}
		var res PretrainWorldModelResult
		if err := v.Get(&res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := pretrain()
	const total = 30 + 260 + 1010
	px := res.Pixels
	if res.Steps != total || res.ResumedFrom != 0 || px == nil || px.Rollouts != 1 || len(px.ImaginedMSE) != pixelHorizon || !res.HasValLoss {
		t.Fatalf("pretrain = %+v (pixels %+v), want %d steps from scratch and one scored rollout of %d steps", res, px, total, pixelHorizon)
	}
	if want := px.ImaginedMSE[0] / px.CopyLastMSE[0]; res.ValObsLoss != want || res.ValObsNoChange != 1 {
		t.Errorf("val obs loss %v (no change %v), want the first step's MSE over copy-last's, %v (1)", res.ValObsLoss, res.ValObsNoChange, want)
	}
	f, err := os.Open(px.Strip)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// WriteStrip: 9 columns (context + 8 steps) and 4 rows (real, imagined × 2 cameras) of
	// 16·4-pixel frames with 4-pixel gutters.
	if b := img.Bounds(); b.Dx() != 9*(16*4+4)+4 || b.Dy() != 4*(16*4+4)+4 {
		t.Errorf("strip is %v, want %d×%d", b, 9*68+4, 4*68+4)
	}
	if runstore.PixelWorldModelFile != worldModelDir+"/"+PixelScoresFile || runstore.PixelWorldModelStrip != worldModelDir+"/"+PixelStripFile {
		t.Errorf("runstore names %s and %s, the activity writes %s and %s under %s", runstore.PixelWorldModelFile, runstore.PixelWorldModelStrip, PixelScoresFile, PixelStripFile, worldModelDir)
	}
	var scores struct {
		Phase  string               `json:"phase"`
		Scores pixelwm.PretrainEval `json:"scores"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(runDir, "worldmodel", PixelScoresFile)), &scores); err != nil {
		t.Fatal(err)
	}
	if scores.Phase != pixelwm.PhaseDone || !reflect.DeepEqual(scores.Scores.Imagination.MSE, px.ImaginedMSE) {
		t.Errorf("%s: phase %q, MSE %v; want done and the result's %v", PixelScoresFile, scores.Phase, scores.Scores.Imagination.MSE, px.ImaginedMSE)
	}
	finalObs := readFile(t, filepath.Join(res.Checkpoint, pixelObsFile))

	if again := pretrain(); again.Checkpoint != res.Checkpoint || again.ResumedFrom != total || !reflect.DeepEqual(again.Pixels, px) {
		t.Errorf("repeat = %+v, want the same checkpoint, resumed from %d (done)", again, total)
	}

	// A crash before the final checkpoint: the retry resumes from the one before it.
	if err := os.RemoveAll(res.Checkpoint); err != nil {
		t.Fatal(err)
	}
	dirs, err := checkpoint.List(filepath.Join(runDir, "worldmodel", "pretrain"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("checkpoints left: %v (%v), want the one before the last", dirs, err)
	}
	resumed := pretrain()
	if resumed.ResumedFrom != 290+1000 || resumed.Checkpoint != res.Checkpoint || !reflect.DeepEqual(resumed.Pixels, px) {
		t.Errorf("resumed = %+v, want from step %d to the same checkpoint and scores", resumed, 290+1000)
	}
	if !bytes.Equal(readFile(t, filepath.Join(resumed.Checkpoint, pixelObsFile)), finalObs) {
		t.Error("the resumed pretraining's M_obs differs from the uninterrupted one's")
	}
}
