package reports

import (
	"math"
	"strings"
	"testing"

	"github.com/accerl/accerl/runstore"
)

// TestPretrainViewSampled checks the sampled success rates of results.json and of the
// "Behaviour cloning, then RL" table: the cloned policy's from its pretrain summary, the
// final one from the latest metrics row that played sampled episodes (a later row without
// them does not hide it), the changes in percentage points, and no sampled columns for runs
// that never sampled.
func TestPretrainViewSampled(t *testing.T) {
	nan := math.NaN()
	row := func(success, sampled float64) runstore.MetricsRow {
		return runstore.MetricsRow{EvalSuccess: success, EvalSampledSuccess: sampled, WMValLoss: nan}
	}
	run := &runData{Arm: "base", Seed: 1,
		Summary:  &runstore.RunSummary{Status: runstore.StatusCompleted, EvalSuccess: 0.51, HasEvalSuccess: true},
		Pretrain: &runstore.PretrainSummary{Demos: 500, EpochLoss: []float64{2, 1}, Success: 0.43, HasSuccess: true, EvalEpisodes: 100, SampledSuccess: 0.42, HasSampledSuccess: true},
		Metrics:  []runstore.MetricsRow{row(0.45, 0.44), row(0.51, 0.45), row(nan, nan)},
	}
	e := &experimentData{Name: "x", Arms: []string{"base"}, Baseline: "base", Runs: []*runData{run}}
	res, _ := computeResults(e, Options{BootstrapReps: 10, Seed: 1})
	rr := res.Runs[0]
	if rr.FinalSuccess != 0.51 || rr.PretrainSuccess != 0.43 || rr.FinalSampledSuccess != 0.45 || rr.PretrainSampledSuccess != 0.42 {
		t.Errorf("results: final %v / %v sampled, pretrain %v / %v sampled; want 0.51 / 0.45 and 0.43 / 0.42",
			rr.FinalSuccess, rr.FinalSampledSuccess, rr.PretrainSuccess, rr.PretrainSampledSuccess)
	}
	v := buildPretrainView(e, res)
	if v == nil || len(v.Table.Rows) != 1 || len(v.Table.Header) != 11 {
		t.Fatalf("view %+v, want one row of 11 columns", v)
	}
	var got []string
	for _, c := range v.Table.Rows[0][5:] {
		got = append(got, c.Text)
	}
	if want := "43.0% (100 ep.)|51.0%|+8.0 pp|42.0%|45.0%|+3.0 pp"; strings.Join(got, "|") != want {
		t.Errorf("success cells %s, want %s", strings.Join(got, "|"), want)
	}

	// A run that never sampled: no sampled columns, nulls in results.json.
	run.Pretrain.HasSampledSuccess = false
	run.Metrics = []runstore.MetricsRow{row(0.5, nan)}
	res, _ = computeResults(e, Options{BootstrapReps: 10, Seed: 1})
	if !math.IsNaN(float64(res.Runs[0].FinalSampledSuccess)) || !math.IsNaN(float64(res.Runs[0].PretrainSampledSuccess)) {
		t.Errorf("unsampled run: %v / %v, want nulls", res.Runs[0].FinalSampledSuccess, res.Runs[0].PretrainSampledSuccess)
	}
	if v := buildPretrainView(e, res); len(v.Table.Header) != 8 {
		t.Errorf("unsampled runs' table has %d columns, want 8", len(v.Table.Header))
	}
}
