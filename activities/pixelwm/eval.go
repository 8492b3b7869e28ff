package pixelwm

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/reward"
	"github.com/accerl/accerl/testenv/tabletop"
)

// ImagineEval is M_obs's open-loop prediction error on held-out episodes.
type ImagineEval struct {
	Horizon int `json:"horizon"`
	// Start is the real step the rollouts start from (the last of the k
	// context frames); Rollouts counts the episodes long enough for it.
	Start    int `json:"start_step"`
	Rollouts int `json:"rollouts"`
	// MSE[h] is the mean squared error of imagined step h+1 against the
	// real frame, [−1, 1] pixel units, averaged over cameras and rollouts;
	// CopyLastMSE[h] that of the copy-last-frame baseline (the last real
	// context frame).
	MSE         []float64 `json:"per_step_mse"`
	CopyLastMSE []float64 `json:"copy_last_per_step_mse"`
	// SwappedMSE[h] is MSE[h] with each rollout imagined from the same context frames
	// but with the actions of another held-out episode (the next long enough one, from
	// the same step), and ActionEffectMSE[h] the mean squared difference between those
	// two imagined frames: a model that reads its actions predicts the real frames better
	// with the recorded ones (SwappedMSE above MSE) and imagines different frames for
	// different actions (ActionEffectMSE far from 0). Both imaginations of a rollout draw
	// the same sampling noise. Measured from 2 rollouts up.
	SwappedMSE      []float64 `json:"swapped_actions_per_step_mse,omitempty"`
	ActionEffectMSE []float64 `json:"action_effect_per_step_mse,omitempty"`
	Seconds         float64   `json:"seconds"`
}

// Strip is a real-vs-imagined rollout for a person to look at: for each
// camera, the real frames (the last context frame, then H real steps) and
// the imagined ones (the same context frame, then H imagined steps).
type Strip struct {
	Real, Imagined [][]edm.Frame // [camera][column]
}

// EvaluateImagination rolls net out open loop for horizon steps with the
// recorded actions from real step start of every held-out episode long
// enough (start ≥ History−1, start+horizon < its length) and compares the
// imagined frames with the real ones. The strip shows the first rollout.
func EvaluateImagination(net *edm.Net[float32], e edm.EDM, held []Episode, start, horizon int, rng *rand.Rand) (ImagineEval, Strip) {
	cfg := net.Config()
	ev := ImagineEval{Horizon: horizon, Start: start, MSE: make([]float64, horizon), CopyLastMSE: make([]float64, horizon)}
	var strip Strip
	var long []Episode
	for _, ep := range held {
		if start >= cfg.History-1 && start+horizon < ep.Len() {
			long = append(long, ep)
		}
	}
	if len(long) >= 2 {
		ev.SwappedMSE, ev.ActionEffectMSE = make([]float64, horizon), make([]float64, horizon)
	}
	for i, ep := range long {
		t := start
		ctx := ep.Frames[t-cfg.History+1 : t+1]
		// Both imaginations draw the same sampling noise, so that they differ by the
		// actions alone.
		noise := [2]uint64{rng.Uint64(), rng.Uint64()}
		imag := net.Imagine(e, ctx, ep.Actions[t:t+horizon], rand.New(rand.NewPCG(noise[0], noise[1])))
		var swapped [][]edm.Frame
		if len(long) >= 2 {
			other := long[(i+1)%len(long)]
			swapped = net.Imagine(e, ctx, other.Actions[t:t+horizon], rand.New(rand.NewPCG(noise[0], noise[1])))
		}
		for h := range horizon {
			ev.MSE[h] += edm.StepMSE(imag[h], ep.Frames[t+1+h])
			ev.CopyLastMSE[h] += edm.StepMSE(ep.Frames[t], ep.Frames[t+1+h])
			if swapped != nil {
				ev.SwappedMSE[h] += edm.StepMSE(swapped[h], ep.Frames[t+1+h])
				ev.ActionEffectMSE[h] += edm.StepMSE(swapped[h], imag[h])
			}
		}
		if ev.Rollouts == 0 {
			strip.Real, strip.Imagined = make([][]edm.Frame, cfg.Cameras), make([][]edm.Frame, cfg.Cameras)
			for c := range cfg.Cameras {
				strip.Real[c] = append(strip.Real[c], ep.Frames[t][c])
				strip.Imagined[c] = append(strip.Imagined[c], ep.Frames[t][c])
				for h := range horizon {
					strip.Real[c] = append(strip.Real[c], ep.Frames[t+1+h][c])
					strip.Imagined[c] = append(strip.Imagined[c], imag[h][c])
				}
			}
		}
		ev.Rollouts++
	}
	for h := range horizon {
		ev.MSE[h] /= float64(max(1, ev.Rollouts))
		ev.CopyLastMSE[h] /= float64(max(1, ev.Rollouts))
		if ev.SwappedMSE != nil {
			ev.SwappedMSE[h] /= float64(ev.Rollouts)
			ev.ActionEffectMSE[h] /= float64(ev.Rollouts)
		}
	}
	return ev, strip
}

// Rows returns the strip's rows in display order: per camera, real over
// imagined.
func (s Strip) Rows() [][]edm.Frame {
	var rows [][]edm.Frame
	for c := range s.Real {
		rows = append(rows, s.Real[c], s.Imagined[c])
	}
	return rows
}

// WriteStrip writes rows of side×side frames as one PNG, each frame scaled
// 4× with a 4-pixel white gutter.
func WriteStrip(path string, side int, rows ...[]edm.Frame) error {
	const zoom, gap = 4, 4
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	cell := side*zoom + gap
	img := image.NewRGBA(image.Rect(0, 0, cols*cell+gap, len(rows)*cell+gap))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for r, row := range rows {
		for c, f := range row {
			for y := 0; y < side*zoom; y++ {
				for x := 0; x < side*zoom; x++ {
					p := 3 * ((y/zoom)*side + x/zoom)
					img.Set(gap+c*cell+x, gap+r*cell+y, color.RGBA{f[p], f[p+1], f[p+2], 255})
				}
			}
		}
	}
	return tabletop.WritePNG(path, img)
}

// RewardEval is M_rew on held-out frames.
type RewardEval struct {
	Frames int `json:"frames"`
	// Success and End score p_success and p_end at threshold ½.
	Success reward.Scores `json:"success"`
	End     reward.Scores `json:"end"`
	// The reward error compares r̂_t = p_success(o_{t+1}) − p_success(o_t)
	// with the true increment r_t = success_{t+1} − success_t (1 at the
	// step that first reaches the goal, 0 elsewhere) over every held-out
	// transition: mean absolute and root-mean-square error.
	Transitions int     `json:"transitions"`
	RewardMAE   float64 `json:"reward_mae"`
	RewardRMSE  float64 `json:"reward_rmse"`
	// AtSuccess is the mean r̂ at the success transitions (ideal 1) and
	// SuccessSteps their number; Elsewhere the mean |r̂| at the others
	// (ideal 0).
	SuccessSteps int     `json:"success_transitions"`
	AtSuccess    float64 `json:"mean_reward_at_success"`
	Elsewhere    float64 `json:"mean_abs_reward_elsewhere"`
	// ReturnMAE is the mean over held-out episodes of |Σ_t r̂_t − Σ_t r_t| =
	// |(p_success(o_T) − p_success(o_0)) − (success_T − success_0)|, the
	// error of an episode's imagined return (what RL sums).
	ReturnMAE float64 `json:"episode_return_mae"`
}

// EvaluateReward scores m on every frame of the held-out episodes.
func EvaluateReward(m *reward.Model, held []Episode) RewardEval {
	var ev RewardEval
	var ps, pe []float64
	var ys, ye []bool
	absSum, sqSum, atSum, elseSum := 0.0, 0.0, 0.0, 0.0
	for _, ep := range held {
		p, q := m.Predict(ep.Frames)
		if n := len(p) - 1; n > 0 {
			ev.ReturnMAE += math.Abs((p[n] - p[0]) - (b2f(ep.Success[n]) - b2f(ep.Success[0])))
		}
		ps, pe = append(ps, p...), append(pe, q...)
		ys, ye = append(ys, ep.Success...), append(ye, ep.End...)
		for t, r := range reward.Increments(p) {
			truth := 0.0
			if ep.Success[t+1] && !ep.Success[t] {
				truth = 1
				ev.SuccessSteps++
				atSum += r
			} else {
				elseSum += math.Abs(r)
			}
			absSum += math.Abs(r - truth)
			sqSum += (r - truth) * (r - truth)
			ev.Transitions++
		}
	}
	ev.Frames = len(ps)
	ev.Success, ev.End = reward.Score(ps, ys, 0.5), reward.Score(pe, ye, 0.5)
	if ev.Transitions > 0 {
		ev.RewardMAE, ev.RewardRMSE = absSum/float64(ev.Transitions), math.Sqrt(sqSum/float64(ev.Transitions))
	}
	ev.ReturnMAE /= float64(max(1, len(held)))
	if ev.SuccessSteps > 0 {
		ev.AtSuccess = atSum / float64(ev.SuccessSteps)
	}
	if n := ev.Transitions - ev.SuccessSteps; n > 0 {
		ev.Elsewhere = elseSum / float64(n)
	}
	return ev
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
