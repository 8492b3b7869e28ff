package pixelwm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/accerl/accerl/testenv/tabletop"
)

// Behaviour policies of [CollectInput].
const (
	// BehaviourRandom draws every action uniformly from [−1, 1]⁷: the arm
	// wanders and the episodes end by the time limit, failed.
	BehaviourRandom = "random"
	// BehaviourExpertNoisy is the scripted expert executed with Gaussian
	// noise on its six motion dimensions (DART, as activities/bc's
	// demonstrations): most episodes succeed, the noisier the fewer, and
	// the failures are kept.
	BehaviourExpertNoisy = "expert_noisy"
)

// Behaviours lists the accepted behaviour policies.
func Behaviours() []string { return []string{BehaviourRandom, BehaviourExpertNoisy} }

// CollectInput describes an offline pixel dataset.
type CollectInput struct {
	// Suite is the tabletop suite ("spatial", "object", "goal", "long").
	Suite string `json:"suite"`
	// Episodes is the number of trajectories; episode e plays task e mod
	// 10, so every task gets its share. The paper uses 1,000.
	Episodes int `json:"episodes"`
	// Behaviour is BehaviourRandom or BehaviourExpertNoisy.
	Behaviour string `json:"behaviour"`
	// Noise is the expert's execution noise σ in action units (activities/bc's
	// DART default is 0.1; larger makes more of the episodes fail).
	Noise float64 `json:"noise"`
	// ImageSize is the camera side in pixels, a power of two 16…256
	// (kernels/edm's working resolution is 32).
	ImageSize int `json:"image_size"`
	// Cameras are the tabletop cameras recorded, in order; empty: agentview,
	// wrist.
	Cameras []string `json:"cameras"`
	// MaxSteps is the time limit per episode; 0 is the suite's (spatial
	// 220).
	MaxSteps int `json:"max_steps"`
	// Linger keeps stepping a finished episode for this many more steps
	// with the behaviour policy (tabletop keeps simulating after the end)
	// and records those frames too, labelled by the simulator as frames
	// at or after the end. A successful episode otherwise has exactly one
	// success frame, its last; imagined rollouts run past success, so the
	// reward model should see what comes after it. 0 records none.
	Linger int `json:"linger"`
	// Seed selects the episodes: episode e resets from
	// rand.New(rand.NewPCG(Seed, e)) and its noise and random actions come
	// from the same generator.
	Seed uint64 `json:"seed"`
}

// Validate reports every field Collect cannot run with and how to fix it.
func (in CollectInput) Validate() error {
	var errs []error
	if err := tabletop.ValidateSuite(in.Suite); err != nil {
		errs = append(errs, err)
	}
	if in.Episodes < 1 {
		errs = append(errs, fmt.Errorf("episodes must be at least 1, got %d", in.Episodes))
	}
	switch in.Behaviour {
	case BehaviourRandom, BehaviourExpertNoisy:
	default:
		errs = append(errs, fmt.Errorf("unknown behaviour policy %q; choose %s", in.Behaviour, strings.Join(Behaviours(), " or ")))
	}
	if !(in.Noise >= 0) || math.IsInf(in.Noise, 0) {
		errs = append(errs, fmt.Errorf("noise must be a finite σ ≥ 0 in action units, got %v", in.Noise))
	}
	if err := tabletop.ValidateImageSize(in.ImageSize); err != nil {
		errs = append(errs, err)
	}
	for _, c := range in.Cameras {
		if err := tabletop.ValidateCamera(c); err != nil {
			errs = append(errs, err)
		}
	}
	if in.MaxSteps < 0 || in.Linger < 0 {
		errs = append(errs, fmt.Errorf("max steps (%d) and linger (%d) must not be negative", in.MaxSteps, in.Linger))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("pixel offline data: %w", err)
	}
	return nil
}

// Episode is one recorded trajectory. Frames[t] is what the cameras saw
// at step t, from the reset (t = 0) to the observation after the last
// action; Actions[t] is the action executed between Frames[t] and
// Frames[t+1], so len(Actions) = len(Frames) − 1.
type Episode struct {
	Task  int
	Instr []int // tabletop word ids
	// Frames holds one ImageSize×ImageSize×3 RGB frame per camera per step.
	Frames [][][]uint8
	// State is the simulator's 46-D state vector and Proprio the 8-D
	// proprioception at each frame.
	State, Proprio [][]float64
	// Actions are the executed (noisy) actions and Rewards the simulator's
	// reward for each (1 at the step that reaches the goal).
	Actions [][]float64
	Rewards []float64
	// Success[t]: the episode succeeded at frame t or earlier (tabletop
	// ends an episode at the step its goal first holds).
	Success []bool
	// End[t]: the episode had ended (terminated or truncated) at or before
	// frame t.
	End []bool
	// Steps is the number of steps until the episode ended (without the
	// lingering ones); Succeeded says whether it ended by success.
	Steps     int
	Succeeded bool
}

// Len is the number of frames.
func (e *Episode) Len() int { return len(e.Frames) }

// Collect plays in.Episodes episodes of the behaviour policy and records
// them. Episode e depends only on in and e.
func Collect(ctx context.Context, in CollectInput) ([]Episode, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	tasks := tabletop.TaskCount(in.Suite)
	envs := make([]*tabletop.Env, tasks)
	out := make([]Episode, 0, in.Episodes)
	for e := range in.Episodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		task := e % tasks
		if envs[task] == nil {
			env, err := in.newEnv(task)
			if err != nil {
				return nil, fmt.Errorf("pixel offline data: %w", err)
			}
			envs[task] = env
		}
		out = append(out, playEpisode(envs[task], in, uint64(e)))
	}
	return out, nil
}

// newEnv returns a rendering simulator of in's suite that plays task only, as Collect
// records it (and a replay of its episodes must play it).
func (in CollectInput) newEnv(task int) (*tabletop.Env, error) {
	return tabletop.New(tabletop.Config{Suite: in.Suite, Tasks: []int{task}, ImageSize: in.ImageSize,
		Cameras: in.Cameras, Render: true, MaxEpisodeSteps: in.MaxSteps})
}

// episodeRand is the random stream of Collect's episode e: its reset, then its noise.
func episodeRand(in CollectInput, e uint64) *rand.Rand { return rand.New(rand.NewPCG(in.Seed, e)) }

// playEpisode records one episode of env with the behaviour policy.
func playEpisode(env *tabletop.Env, in CollectInput, e uint64) Episode {
	rng := episodeRand(in, e)
	var x *tabletop.Expert
	if in.Behaviour == BehaviourExpertNoisy {
		x = tabletop.NewExpert(in.Seed*1000003 + e)
		x.Noise = 0 // the noise is added below from rng, so that it is the executed action's
	}
	obs := env.Reset(rng)
	ep := Episode{Task: env.Task(), Instr: env.InstructionTokens()}
	record := func() {
		ep.Frames = append(ep.Frames, copyFrames(env.Images()))
		ep.State = append(ep.State, obs)
		ep.Proprio = append(ep.Proprio, env.Proprio())
	}
	record()
	ended := false
	for linger := 0; linger < in.Linger || !ended; {
		a := make([]float64, tabletop.ActionDim)
		if x != nil {
			copy(a, x.Act(env))
			for i := range 6 {
				a[i] = math.Max(-1, math.Min(1, a[i]+in.Noise*rng.NormFloat64()))
			}
		} else {
			for i := range a {
				a[i] = 2*rng.Float64() - 1
			}
		}
		var r float64
		var term, trunc bool
		obs, r, term, trunc = env.Step(a)
		ep.Actions, ep.Rewards = append(ep.Actions, a), append(ep.Rewards, r)
		if ended {
			linger++
		} else if term || trunc {
			ended, ep.Steps, ep.Succeeded = true, env.Steps(), term
		}
		record()
	}
	ep.label()
	return ep
}

// label sets the per-frame labels from Steps and Succeeded: tabletop
// terminates an episode at the step its goal first holds, so frame Steps
// is the first success frame of a successful episode, and every frame
// from Steps on is at or after the end.
func (e *Episode) label() {
	e.Success, e.End = make([]bool, e.Len()), make([]bool, e.Len())
	for t := e.Steps; t < e.Len(); t++ {
		e.Success[t], e.End[t] = e.Succeeded, true
	}
}

// copyFrames copies the environment's reused image buffers into one
// allocation.
func copyFrames(ims [][]uint8) [][]uint8 {
	buf := make([]uint8, 0, len(ims)*len(ims[0]))
	out := make([][]uint8, len(ims))
	for c, im := range ims {
		buf = append(buf, im...)
		out[c] = buf[len(buf)-len(im):]
	}
	return out
}
