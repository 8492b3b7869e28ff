package reports

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/accerl/accerl/runstore"
)

// Columns of the per-task table, in order: each picks one of a run's four per-task splits.
var taskColumns = []struct {
	name string
	of   func(RunResult) []runstore.TaskSuccess
}{
	{"BC success", func(r RunResult) []runstore.TaskSuccess { return r.PretrainTasks }},
	{"Final success", func(r RunResult) []runstore.TaskSuccess { return r.FinalTasks }},
	{"BC sampled", func(r RunResult) []runstore.TaskSuccess { return r.PretrainSampledTasks }},
	{"Final sampled", func(r RunResult) []runstore.TaskSuccess { return r.FinalSampledTasks }},
}

// allTasks is the row key of an arm's whole suite in the per-task table.
const allTasks = -1

// buildTaskView tabulates success per task (the tabletop suites, whose evaluations play
// the arm's tasks in a fixed order from fixed initial states): for every arm, one row per
// task and one for all its tasks, each column the mean over the arm's seeds of a success
// rate (the cloned policy's and the latest evaluation's, greedy and, when played,
// sampled) with a 95% percentile-bootstrap interval over seeds when there are two or more
// (one seed: its rate and episode count). Columns no run has are left out; it returns nil
// when no run split an evaluation by task.
func buildTaskView(e *experimentData, res Results, opts Options) *targetsView {
	byArm := map[string][]RunResult{}
	for _, r := range res.Runs {
		byArm[r.Arm] = append(byArm[r.Arm], r)
	}
	var cols []int // indices into taskColumns that some run has
	for c, col := range taskColumns {
		for _, r := range res.Runs {
			if len(col.of(r)) > 0 {
				cols = append(cols, c)
				break
			}
		}
	}
	if len(cols) == 0 {
		return nil
	}
	t := tableView{Header: []string{"Arm", "Task", "Instruction"}}
	for _, c := range cols {
		t.Header = append(t.Header, taskColumns[c].name)
	}
	for _, arm := range e.Arms {
		runs := byArm[arm]
		tasks, instr := taskOrder(runs, cols)
		for _, task := range append(tasks, allTasks) {
			label, text := fmt.Sprint(task), instr[task]
			if task == allTasks {
				label, text = "all", fmt.Sprintf("the arm's %d tasks together", len(tasks))
				if len(tasks) == 1 {
					text = "the arm's 1 task"
				}
			}
			row := []cell{{Text: arm}, {Text: label, Num: true}, {Text: text}}
			for _, c := range cols {
				rates, episodes := seedRates(runs, taskColumns[c].of, task)
				rng := rand.New(rand.NewPCG(opts.Seed^armKey(arm)^uint64(task+2)*0x9e3779b97f4a7c15, streamTaskSuccess+uint64(c)))
				row = append(row, cell{Text: fmtTaskRate(rates, episodes, opts.BootstrapReps, rng), Num: true})
			}
			t.Rows = append(t.Rows, row)
		}
	}
	intro := []string{
		"Success per task: every evaluation plays the arm's tasks in turn from the suite's fixed initial states (episode n is task n mod T from initial state n div T), so each task gets an equal share of the episodes.",
		"BC is the behaviour-cloned policy before RL, final the latest evaluation; sampled columns play the same episodes drawing the actions as in training.",
		"With two or more seeds a cell is the mean over seeds with a 95% percentile-bootstrap interval over seeds; with one, the seed's rate and its episodes.",
	}
	return &targetsView{Heading: "Success per task", Intro: strings.Join(intro, " "), Table: t}
}

// taskOrder lists the tasks the runs' splits name, in the order they first appear, with
// their instructions.
func taskOrder(runs []RunResult, cols []int) ([]int, map[int]string) {
	var tasks []int
	instr := map[int]string{}
	for _, r := range runs {
		for _, c := range cols {
			for _, ts := range taskColumns[c].of(r) {
				if _, ok := instr[ts.Task]; !ok {
					tasks = append(tasks, ts.Task)
					instr[ts.Task] = ts.Instruction
				}
			}
		}
	}
	return tasks, instr
}

// seedRates is the success rate of task (allTasks: all tasks pooled) in the split of of for
// every run that has it, and the episodes behind them.
func seedRates(runs []RunResult, of func(RunResult) []runstore.TaskSuccess, task int) (rates []float64, episodes int) {
	for _, r := range runs {
		var n, s int
		for _, ts := range of(r) {
			if task == allTasks || ts.Task == task {
				n, s = n+ts.Episodes, s+ts.Successes
			}
		}
		if n > 0 {
			rates = append(rates, float64(s)/float64(n))
			episodes += n
		}
	}
	return rates, episodes
}

// fmtTaskRate writes the mean of rates as a percentage, with its bootstrap interval over
// seeds when there are two or more (withCI: the point alone when the seeds agree), the
// episodes when there is one, "—" when none.
func fmtTaskRate(rates []float64, episodes, reps int, rng *rand.Rand) string {
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	switch len(rates) {
	case 0:
		return "—"
	case 1:
		return fmtRate(rates[0], episodes)
	}
	iv := meanInterval(rates, reps, rng)
	return withCI(plainCells, iv.Point, iv.Low, iv.High, pct)
}
