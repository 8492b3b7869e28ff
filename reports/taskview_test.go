package reports

import (
	"slices"
	"strings"
	"testing"

	"github.com/accerl/accerl/runstore"
)

// TestTaskView checks the per-task table against hand-computed means: two seeds of "base"
// (task 0: 8/10 and 10/10 → 90%, task 3: 6/10 and 7/10 → 65%, all: 14/20 and 17/20 → 77.5%; BC all: 10/20 and 11/20 → 52.5%)
// with bootstrap intervals over the seeds (two values: the interval runs from the smaller
// to the larger, each drawn twice in a quarter of the replicates), one seed of "other"
// (its rate and episodes, "—" where it has no split), and no sampled columns when no run
// played sampled episodes.
func TestTaskView(t *testing.T) {
	ts := func(task, succ int) runstore.TaskSuccess {
		return runstore.TaskSuccess{Task: task, Instruction: "do " + string(rune('a'+task)), Episodes: 10, Successes: succ}
	}
	run := func(arm string, seed uint64, final, bc []runstore.TaskSuccess) *runData {
		r := &runData{Arm: arm, Seed: seed, Summary: &runstore.RunSummary{Status: runstore.StatusCompleted, EvalTasks: final}}
		if bc != nil {
			r.Pretrain = &runstore.PretrainSummary{Tasks: bc}
		}
		return r
	}
	e := &experimentData{Name: "x", Arms: []string{"base", "other"}, Baseline: "base", Runs: []*runData{
		run("base", 1, []runstore.TaskSuccess{ts(0, 8), ts(3, 6)}, []runstore.TaskSuccess{ts(0, 5), ts(3, 5)}),
		run("base", 2, []runstore.TaskSuccess{ts(0, 10), ts(3, 7)}, []runstore.TaskSuccess{ts(0, 7), ts(3, 4)}),
		run("other", 1, []runstore.TaskSuccess{ts(0, 3)}, nil),
	}}
	opts := Options{BootstrapReps: 1000, Seed: 1}
	res, _ := computeResults(e, opts)
	if got := res.Runs[1].FinalTasks; !slices.Equal(got, e.Runs[1].Summary.EvalTasks) {
		t.Errorf("results.json final_task_success %+v, want the summary's", got)
	}
	v := buildTaskView(e, res, opts)
	if v == nil {
		t.Fatal("no per-task view")
	}
	if want := "Arm|Task|Instruction|BC success|Final success"; strings.Join(v.Table.Header, "|") != want {
		t.Errorf("header %q, want %q", strings.Join(v.Table.Header, "|"), want)
	}
	want := []string{
		"base|0|do a|60.0% [50.0%, 70.0%]|90.0% [80.0%, 100.0%]",
		"base|3|do d|45.0% [40.0%, 50.0%]|65.0% [60.0%, 70.0%]",
		"base|all|the arm's 2 tasks together|52.5% [50.0%, 55.0%]|77.5% [70.0%, 85.0%]",
		"other|0|do a|—|30.0% (10 ep.)",
		"other|all|the arm's 1 task|—|30.0% (10 ep.)",
	}
	var got []string
	for _, row := range v.Table.Rows {
		var cells []string
		for _, c := range row {
			cells = append(cells, c.Text)
		}
		got = append(got, strings.Join(cells, "|"))
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// No run split by task: no table.
	for _, r := range e.Runs {
		r.Summary.EvalTasks, r.Pretrain = nil, nil
	}
	res, _ = computeResults(e, opts)
	if v := buildTaskView(e, res, opts); v != nil {
		t.Errorf("runs without a split: view %+v, want nil", v)
	}
}
