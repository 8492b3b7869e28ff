package bc

import (
	"encoding/json"
	"os"
	"testing"
	"time"
)

// TestExperiment runs one BC experiment described by the JSON in BC_EXP
// (Tasks, PerTask, Noise, Inits, Cfg) and logs its losses and per-task
// successes; BC_EXPERT=1 also plays the expert through the same loop.
func TestExperiment(t *testing.T) {
	spec := os.Getenv("BC_EXP")
	if spec == "" {
		t.Skip("set BC_EXP")
	}
	var e struct {
		Tasks   []int
		PerTask int
		Noise   float64
		Inits   int
		Cfg     Config
	}
	e.Cfg = DefaultConfig()
	if err := json.Unmarshal([]byte(spec), &e); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if os.Getenv("BC_EXPERT") != "" {
		r, _ := Evaluate(&ExpertActor{}, "spatial", e.Tasks, e.Inits)
		t.Logf("expert: %.3f %+v", r.SuccessRate, r.Tasks)
	}
	demos, err := Collect(CollectInput{Suite: "spatial", Tasks: e.Tasks, PerTask: e.PerTask, Noise: e.Noise, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	m, tr, err := Train(e.Cfg, demos)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("samples %d params %d loss first %.4f last %.4f train %v", tr.Samples, tr.NumParams, tr.EpochLoss[0], tr.FinalLoss, time.Since(t0))
	r, err := Evaluate(m.Actor(), "spatial", e.Tasks, e.Inits)
	if err != nil {
		t.Fatal(err)
	}
	s := ""
	for _, ts := range r.Tasks {
		s += " " + string(rune('0'+ts.Task)) + ":" + string(rune('0'+ts.Successes/10)) + string(rune('0'+ts.Successes%10))
	}
	t.Logf("success %.3f [%s ] total %v", r.SuccessRate, s, time.Since(t0))
}
