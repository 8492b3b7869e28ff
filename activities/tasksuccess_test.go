package activities

import (
	"testing"

	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv/tabletop"
)

// taskSuccess splits an evaluation by the task each episode played on the fixed initial
// states (episode n: task tasks[n mod T]), hand-counted here for tasks 2, 5, 7 over 8
// episodes; other environments and evaluations without success get nil.
func TestTaskSuccess(t *testing.T) {
	env := specs.Env{Kind: specs.EnvTabletop, Suite: "spatial", Tasks: []int{2, 5, 7}}
	//                episode:  0     1      2     3     4      5      6     7
	//                task:     2     5      7     2     5      7      2     5
	r := engine.EvalResult{HasSuccess: true, Successes: 4, Succeeded: []bool{true, false, true, true, false, false, false, true}}
	got := taskSuccess(env, r)
	want := []runstore.TaskSuccess{
		{Task: 2, Episodes: 3, Successes: 2},
		{Task: 5, Episodes: 3, Successes: 1},
		{Task: 7, Episodes: 2, Successes: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d tasks, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		w.Instruction = tabletop.Instruction("spatial", w.Task)
		if got[i] != w {
			t.Errorf("task %d: got %+v, want %+v", i, got[i], w)
		}
	}
	if g := got[0].Rate(); g != 2.0/3 {
		t.Errorf("task 2's rate %v, want 2/3", g)
	}
	for n := range 8 {
		if j, init := fixedStart(len(env.Tasks), n); j != n%3 || init != n/3 {
			t.Errorf("episode %d: fixedStart gives task index %d from state %d, want %d from %d", n, j, init, n%3, n/3)
		}
	}
	if got := taskSuccess(specs.Env{Kind: specs.EnvCartPole}, r); got != nil {
		t.Errorf("CartPole: %+v, want nil", got)
	}
	if got := taskSuccess(env, engine.EvalResult{Succeeded: make([]bool, 3)}); got != nil {
		t.Errorf("no notion of success: %+v, want nil", got)
	}
}

func countTrue(xs []bool) int {
	n := 0
	for _, x := range xs {
		if x {
			n++
		}
	}
	return n
}
