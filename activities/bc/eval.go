package bc

import (
	"fmt"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/testenv/tabletop"
)

// Actor chooses actions for a batch of environments; [Evaluate] drives
// it. Act fills out (len(envs) × tabletop.ActionDim) for the environments
// whose index is in need.
type Actor interface {
	Act(envs []*tabletop.Env, obs [][]float64, need []int, out [][]float64)
}

// TaskSuccess is one task's evaluation.
type TaskSuccess struct {
	Task      int
	Successes int
	Episodes  int
	// EdgeFailures counts the failed episodes that ended with the fingertip
	// at the workspace's edge (tabletop.Env.AtEdge): runaways out of the
	// camera's view, into states no demonstration shows, rather than near
	// misses.
	EdgeFailures int
}

// Rate is Successes/Episodes.
func (t TaskSuccess) Rate() float64 { return float64(t.Successes) / float64(t.Episodes) }

// EvalResult is a suite's evaluation: per task and overall.
type EvalResult struct {
	Tasks       []TaskSuccess
	SuccessRate float64
}

// EdgeFailures is the tasks' EdgeFailures summed.
func (r EvalResult) EdgeFailures() int {
	n := 0
	for _, t := range r.Tasks {
		n += t.EdgeFailures
	}
	return n
}

// Evaluate plays actor from the first inits fixed initial states
// (tabletop.Env.ResetTo) of each task, every episode to success or the
// suite's step limit, all in lockstep.
func Evaluate(actor Actor, suite string, tasks []int, inits int) (EvalResult, error) {
	return EvaluateEnv(actor, tabletop.Config{Suite: suite}, tasks, inits)
}

// EvaluateEnv is Evaluate on environments of envCfg (its Tasks replaced by
// each task in turn): the image size and cameras a pixel policy reads.
func EvaluateEnv(actor Actor, envCfg tabletop.Config, tasks []int, inits int) (EvalResult, error) {
	var envs []*tabletop.Env
	var obs [][]float64
	for _, t := range tasks {
		for i := range inits {
			cfg := envCfg
			cfg.Tasks = []int{t}
			e, err := tabletop.New(cfg)
			if err != nil {
				return EvalResult{}, fmt.Errorf("bc evaluate: %w", err)
			}
			obs = append(obs, e.ResetTo(t, i))
			envs = append(envs, e)
		}
	}
	won, err := playLockstep(actor, envs, obs, nil)
	if err != nil {
		return EvalResult{}, err
	}
	res := EvalResult{}
	total := 0
	for k, t := range tasks {
		ts := TaskSuccess{Task: t, Episodes: inits}
		for i := range inits {
			switch {
			case won[k*inits+i]:
				ts.Successes++
			case envs[k*inits+i].AtEdge(): // an ended env keeps its last state
				ts.EdgeFailures++
			}
		}
		total += ts.Successes
		res.Tasks = append(res.Tasks, ts)
	}
	res.SuccessRate = float64(total) / float64(len(envs))
	return res, nil
}

// playLockstep plays actor in envs, all episodes in lockstep, until each
// terminates (won) or is truncated, and reports which were won. obs, when
// non-nil, holds each env's current observation and is kept current;
// before, when non-nil, runs for each live episode before its step, with
// the action the actor chose, and stops the play on an error.
func playLockstep(actor Actor, envs []*tabletop.Env, obs [][]float64, before func(i int, a []float64) error) ([]bool, error) {
	done := make([]bool, len(envs))
	won := make([]bool, len(envs))
	acts := make([][]float64, len(envs))
	for i := range acts {
		acts[i] = make([]float64, tabletop.ActionDim)
	}
	for {
		var live []int
		for i, d := range done {
			if !d {
				live = append(live, i)
			}
		}
		if len(live) == 0 {
			return won, nil
		}
		actor.Act(envs, obs, live, acts)
		for _, i := range live {
			if before != nil {
				if err := before(i, acts[i]); err != nil {
					return nil, err
				}
			}
			o, _, term, trunc := envs[i].Step(acts[i])
			if obs != nil {
				obs[i] = o
			}
			if term || trunc {
				done[i], won[i] = true, term
			}
		}
	}
}

// ExpertActor plays one tabletop.Expert per environment, noise-free unless
// Noise is set: the check that the evaluation loop itself is sound.
type ExpertActor struct {
	// Follow plays [tabletop.Expert.Follow] experts: how a DAgger labeller
	// acts, so a test can let it label its own episodes.
	Follow bool
	// Noise is the experts' execution noise (tabletop.Expert.Noise); 0
	// plays them noise-free.
	Noise   float64
	experts map[*tabletop.Env]*tabletop.Expert
}

// Act implements Actor.
func (x *ExpertActor) Act(envs []*tabletop.Env, obs [][]float64, need []int, out [][]float64) {
	if x.experts == nil {
		x.experts = map[*tabletop.Env]*tabletop.Expert{}
	}
	for _, i := range need {
		ex := x.experts[envs[i]]
		if ex == nil {
			ex = tabletop.NewExpert(uint64(i))
			ex.Noise, ex.Follow = x.Noise, x.Follow
			x.experts[envs[i]] = ex
		}
		copy(out[i], ex.Act(envs[i]))
	}
}

// Actor returns an Actor that plays m greedily (the gaussian mean),
// querying it every m.Execute steps per environment and running the
// chunk's actions in order in between.
func (m *Model) Actor() Actor { return &modelActor{m: m} }

type modelActor struct {
	m     *Model
	queue chunkQueue
	feat  []float64
	row   []float64
	mean  []float64
	env   []float64
}

func (a *modelActor) Act(envs []*tabletop.Env, obs [][]float64, need []int, out [][]float64) {
	if ask := a.queue.empty(envs, need); len(ask) > 0 {
		p := a.m.Policy
		ad := p.EnvActionDims()
		a.feat = a.feat[:0]
		for _, i := range ask {
			a.row = a.m.features(obs[i], a.row)
			a.feat = append(a.feat, a.row...)
		}
		a.mean = grow(a.mean, len(ask)*ad)
		a.env = grow(a.env, len(ask)*ad)
		p.Greedy(a.feat, len(ask), kernels.Actions{Continuous: a.mean})
		p.EnvActions(kernels.Actions{Continuous: a.mean}, len(ask), a.env)
		for r, i := range ask {
			var q [][]float64
			for k := range a.m.Execute {
				off := r*ad + k*tabletop.ActionDim
				q = append(q, append([]float64(nil), a.env[off:off+tabletop.ActionDim]...))
			}
			a.queue.set(envs[i], q)
		}
	}
	a.queue.pop(envs, need, out)
}

// chunkQueue holds each environment's actions still to run of its last
// predicted chunk.
type chunkQueue map[*tabletop.Env][][]float64

// empty drops the queues of environments that started a new episode and
// returns the indices in need whose queue is empty: those to query.
func (q *chunkQueue) empty(envs []*tabletop.Env, need []int) []int {
	if *q == nil {
		*q = chunkQueue{}
	}
	var ask []int
	for _, i := range need {
		if envs[i].Steps() == 0 {
			delete(*q, envs[i]) // a new episode
		}
		if len((*q)[envs[i]]) == 0 {
			ask = append(ask, i)
		}
	}
	return ask
}

// set queues actions for env.
func (q chunkQueue) set(env *tabletop.Env, actions [][]float64) { q[env] = actions }

// pop writes the next queued action of every environment in need to out.
func (q chunkQueue) pop(envs []*tabletop.Env, need []int, out [][]float64) {
	for _, i := range need {
		a := q[envs[i]]
		copy(out[i], a[0])
		q[envs[i]] = a[1:]
	}
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}
