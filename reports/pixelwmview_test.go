package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accerl/accerl/runstore"
)

// TestPixelWMView reads a run's pixel world-model scores as PretrainWorldModel writes them
// (the keys of activities/pixelwm's PretrainState and PretrainEval; the reward scores'
// fields untagged) and tabulates them: the first and last imagined step against copying the
// last frame, M_rew against the majority label, and a link to the run's strip.
func TestPixelWMView(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "base", "seed-2")
	if err := os.MkdirAll(filepath.Join(run, "worldmodel"), 0o755); err != nil {
		t.Fatal(err)
	}
	const scores = `{"config": {"ObsSteps": 400, "RewSteps": 1500, "ProprioSteps": 3000},
  "phase": "done", "step": 4900, "rew_counterfactual": {"endings": 360, "succeeded": 252, "frames": 2880},
  "scores": {"train_episodes": 180, "held_out_episodes": 20, "rew_train_imagined_frames": 640,
    "imagination": {"rollouts": 20, "per_step_mse": [0.03, 0.05, 0.07], "copy_last_per_step_mse": [0.025, 0.04, 0.06],
      "action_effect_per_step_mse": [0.0059, 0.01, 0.02]},
    "reward": {"success": {"Accuracy": 0.963, "Majority": 0.955, "Precision": 0.72, "Recall": 0.29}},
    "imagined_endings": {"horizon": 8, "succeeded": {"episodes": 18, "real_end_judged_success": 16, "imagined_end_judged_success": 2,
      "swapped_end_judged_success": 1}}}}`
	if err := os.WriteFile(filepath.Join(run, filepath.FromSlash(runstore.PixelWorldModelFile)), []byte(scores), 0o644); err != nil {
		t.Fatal(err)
	}
	r := readRunData("base", 2, run)
	if r.Problem != "" || r.PixelWM == nil {
		t.Fatalf("read: problem %q, scores %+v", r.Problem, r.PixelWM)
	}
	v := buildPixelWMView(&experimentData{Dir: dir, Runs: []*runData{r, readRunData("base", 3, filepath.Join(dir, "base", "seed-3"))}})
	if v == nil || len(v.Table.Rows) != 1 {
		t.Fatalf("view = %+v, want one row (the run without scores has none)", v)
	}
	var got []string
	for _, c := range v.Table.Rows[0] {
		got = append(got, c.Text)
	}
	want := "base/seed-2|180 / 20|400|0.0300 (0.0250)|0.0700 (0.0600)|0.963 (0.955)|0.72 / 0.29|0.0059|2 / 16 of 18 (another's actions: 1)|640 own endings; 2880 counterfactual (252 of 360 endings reached the goal)|PNG"
	if strings.Join(got, "|") != want {
		t.Errorf("row = %s\nwant  %s", strings.Join(got, "|"), want)
	}
	if l := v.Table.Rows[0][10].Link; l != "base/seed-2/"+runstore.PixelWorldModelStrip {
		t.Errorf("strip link %q", l)
	}
	// Scores from before the action effect and the endings were measured: dashes.
	old := filepath.Join(dir, "base", "seed-4")
	if err := os.MkdirAll(filepath.Join(old, "worldmodel"), 0o755); err != nil {
		t.Fatal(err)
	}
	oldScores := strings.NewReplacer(`"action_effect_per_step_mse"`, `"x"`, `"imagined_endings"`, `"y"`,
		`"rew_counterfactual"`, `"w"`, `"rew_train_imagined_frames"`, `"v"`).Replace(scores)
	if err := os.WriteFile(filepath.Join(old, filepath.FromSlash(runstore.PixelWorldModelFile)), []byte(oldScores), 0o644); err != nil {
		t.Fatal(err)
	}
	ov := buildPixelWMView(&experimentData{Dir: dir, Runs: []*runData{readRunData("base", 4, old)}})
	if ov == nil || len(ov.Table.Rows) != 1 || ov.Table.Rows[0][7].Text != "—" || ov.Table.Rows[0][8].Text != "—" || ov.Table.Rows[0][9].Text != "—" {
		t.Errorf("older scores: view %+v, want one row with dashes for the action effect, the endings and M_rew's imagined frames", ov)
	}
	// Scores with the endings from before the swapped-action verdicts: no brackets.
	mid := filepath.Join(dir, "base", "seed-5")
	if err := os.MkdirAll(filepath.Join(mid, "worldmodel"), 0o755); err != nil {
		t.Fatal(err)
	}
	midScores := strings.Replace(scores, `"swapped_end_judged_success"`, `"z"`, 1)
	if err := os.WriteFile(filepath.Join(mid, filepath.FromSlash(runstore.PixelWorldModelFile)), []byte(midScores), 0o644); err != nil {
		t.Fatal(err)
	}
	if mv := buildPixelWMView(&experimentData{Dir: dir, Runs: []*runData{readRunData("base", 5, mid)}}); mv == nil || mv.Table.Rows[0][8].Text != "2 / 16 of 18" {
		t.Errorf("scores without swapped verdicts: view %+v, want the endings without brackets", mv)
	}
	if buildPixelWMView(&experimentData{Dir: dir}) != nil {
		t.Error("a view without pixel world models")
	}
	if len(v.Images) != 1 || v.Images[0][1] != "base/seed-2/"+runstore.PixelWorldModelStrip {
		t.Errorf("images under the table %v, want the run's strip", v.Images)
	}

	// The per-step figure: drawn for the run with scores, left out silently without any.
	e := &experimentData{Name: "x", Dir: dir, Arms: []string{"base"}, Runs: []*runData{r}}
	f, skipped, err := pixelWorldModelFigure(&figureInput{e: e})
	if err != nil || f == nil || skipped != "" || len(f.PNG) == 0 || !strings.Contains(f.Caption, "copying the last real frame") {
		t.Fatalf("figure %v, skipped %q, err %v", f, skipped, err)
	}
	if f, skipped, err := pixelWorldModelFigure(&figureInput{e: &experimentData{Name: "x", Arms: []string{"base"}}}); f != nil || skipped != "" || err != nil {
		t.Errorf("without scores: figure %v, skipped %q, err %v; want it left out without a word", f, skipped, err)
	}
}
