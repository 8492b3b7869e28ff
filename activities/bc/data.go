package bc

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/accerl/accerl/testenv/tabletop"
)

// Demo is one successful expert episode: the observation before each step
// and the expert's noise-free action at it.
type Demo struct {
	Task    int
	Obs     [][]float64 // len T, each tabletop.ObsDim
	Actions [][]float64 // len T, each tabletop.ActionDim
}

// CollectInput sizes a demonstration set.
type CollectInput struct {
	Suite   string
	Tasks   []int   // tasks to demonstrate
	PerTask int     // successful demonstrations per task (LIBERO: 50)
	Noise   float64 // execution noise σ on the motion dimensions (action units); 0 replays the expert exactly
	Seed    uint64
}

// Collect plays the expert (noise-free) from randomised resets of each task,
// executing its action plus N(0, Noise²) on the six motion dimensions, and
// keeps PerTask successful episodes per task. Unsuccessful episodes are
// dropped; more than 4·PerTask attempts for a task is an error.
func Collect(in CollectInput) ([]Demo, error) {
	var out []Demo
	var d Demo
	err := playExpert(in, tabletop.Config{Suite: in.Suite}, demoRecorder{
		begin: func(env *tabletop.Env) { d = Demo{Task: env.Task()} },
		step: func(_ *tabletop.Env, obs, a []float64) {
			d.Obs = append(d.Obs, obs)
			d.Actions = append(d.Actions, a)
		},
		keep: func() { out = append(out, d) },
	})
	return out, err
}

// demoRecorder receives playExpert's episodes: begin after each reset, step
// with the observation before each step and the expert's noise-free action
// at it, keep when the episode succeeded (a failed one is just dropped).
type demoRecorder struct {
	begin func(env *tabletop.Env)
	step  func(env *tabletop.Env, obs, action []float64)
	keep  func()
}

// playExpert is Collect's loop on environments built from envCfg (its Suite
// and Tasks are in's), reporting every episode to rec. The environments'
// rendering does not touch the random streams, so the episodes are the same
// whatever envCfg's cameras and image size.
func playExpert(in CollectInput, envCfg tabletop.Config, rec demoRecorder) error {
	for _, task := range in.Tasks {
		cfg := envCfg
		cfg.Suite, cfg.Tasks = in.Suite, []int{task}
		env, err := tabletop.New(cfg)
		if err != nil {
			return fmt.Errorf("collect demos: %w", err)
		}
		rng := rand.New(rand.NewPCG(in.Seed, uint64(task)))
		x := tabletop.NewExpert(in.Seed ^ uint64(task)<<32)
		x.Noise = 0
		got := 0
		for attempt := 0; got < in.PerTask; attempt++ {
			if attempt >= 4*in.PerTask {
				return fmt.Errorf("collect demos: task %d: %d successes in %d attempts", task, got, attempt)
			}
			obs := env.Reset(rng)
			rec.begin(env)
			for {
				a := x.Act(env)
				rec.step(env, obs, a)
				exec := append([]float64(nil), a...)
				for i := range 6 {
					exec[i] = math.Max(-1, math.Min(1, exec[i]+in.Noise*rng.NormFloat64()))
				}
				var term, trunc bool
				obs, _, term, trunc = env.Step(exec)
				if term || trunc {
					if term {
						rec.keep()
						got++
					}
					break
				}
			}
		}
	}
	return nil
}

// FeatureDim is the width of [Features]: the observation and one
// fingertip-relative offset per object slot.
const FeatureDim = tabletop.ObsDim + 3*tabletop.ObjectSlots

// posUnit is the action's translation per unit (1.5 cm): offsets are
// expressed in it so that the expert's proportional law is the identity
// on them before clamping.
const posUnit = 0.015

// Features appends to obs each object slot's centre minus the fingertip,
// in action units (empty slots give zeros). The expert acts on such
// offsets, so a network given them needs no subtraction of nearly equal
// absolute positions, which it learns poorly to the millimetre.
func Features(obs []float64, out []float64) []float64 {
	out = append(out[:0], obs...)
	tip := obs[0:3]
	for s := range tabletop.ObjectSlots {
		c := obs[tabletop.ProprioDim+3*s : tabletop.ProprioDim+3*s+3]
		empty := c[0] == 0 && c[1] == 0 && c[2] == 0
		for k := range 3 {
			v := 0.0
			if !empty {
				v = (c[k] - tip[k]) / posUnit
			}
			out = append(out, v)
		}
	}
	return out
}

// Normaliser standardises features: (x − Mean)/Std.
type Normaliser struct {
	Mean, Std []float64
}

// minStd floors the standard deviation of near-constant features (the
// one-hot task index within one task, empty slots) so that they stay
// near zero rather than blowing up.
const minStd = 1e-2

// fitNormaliser computes the per-feature mean and standard deviation of
// the rows of x (row-major, dim wide).
func fitNormaliser(x []float64, dim int) Normaliser {
	n := len(x) / dim
	nm := Normaliser{Mean: make([]float64, dim), Std: make([]float64, dim)}
	for i := range n {
		for j := range dim {
			nm.Mean[j] += x[i*dim+j]
		}
	}
	for j := range dim {
		nm.Mean[j] /= float64(n)
	}
	for i := range n {
		for j := range dim {
			d := x[i*dim+j] - nm.Mean[j]
			nm.Std[j] += d * d
		}
	}
	for j := range dim {
		nm.Std[j] = math.Max(minStd, math.Sqrt(nm.Std[j]/float64(n)))
	}
	return nm
}

// apply standardises x in place (rows of len(Mean)).
func (nm Normaliser) apply(x []float64) {
	dim := len(nm.Mean)
	for i := range x {
		j := i % dim
		x[i] = (x[i] - nm.Mean[j]) / nm.Std[j]
	}
}
