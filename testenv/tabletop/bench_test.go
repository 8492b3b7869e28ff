package tabletop

import "testing"

var sinkObs []float64

// benchmarkStep measures Env.Step under the expert's actions (the expert
// is timed too), with or without rendering both cameras at size.
func benchmarkStep(b *testing.B, suite string, render bool, size int) {
	e, err := New(Config{Suite: suite, Render: render, ImageSize: size})
	if err != nil {
		b.Fatal(err)
	}
	x := NewExpert(1)
	task, init := 0, 0
	e.ResetTo(task, init)
	b.ReportAllocs()
	for b.Loop() {
		obs, _, term, trunc := e.Step(x.Act(e))
		sinkObs = obs
		if term || trunc {
			task, init = (task+1)%TasksPerSuite, (init+1)%InitStates
			e.ResetTo(task, init)
		}
	}
}

func BenchmarkStepSpatial(b *testing.B)         { benchmarkStep(b, SuiteSpatial, false, 64) }
func BenchmarkStepLong(b *testing.B)            { benchmarkStep(b, SuiteLong, false, 64) }
func BenchmarkStepRenderSpatial64(b *testing.B) { benchmarkStep(b, SuiteSpatial, true, 64) }
func BenchmarkStepRenderGoal64(b *testing.B)    { benchmarkStep(b, SuiteGoal, true, 64) }
func BenchmarkStepRenderGoal128(b *testing.B)   { benchmarkStep(b, SuiteGoal, true, 128) }
