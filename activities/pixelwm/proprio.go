package pixelwm

import (
	"github.com/accerl/accerl/kernels/edm/proprio"
)

// ProprioTransitions turns a trajectory's proprioception into the
// proprio head's samples (k = c.History past vectors, the action after
// the last of them, the next vector), from the first step that has k
// vectors of history, as [Transitions] does for frames: sample t of both
// predicts step t+1 from the same context. vecs[t] is the vector at frame
// t; actions[t] the action between frames t and t+1.
func ProprioTransitions(c proprio.Config, vecs, actions [][]float64) []proprio.Sample {
	var out []proprio.Sample
	for t := c.History - 1; t+1 < len(vecs) && t < len(actions); t++ {
		out = append(out, proprio.Sample{Past: vecs[t-c.History+1 : t+1 : t+1], Action: actions[t], Next: vecs[t+1]})
	}
	return out
}

// ProprioSamples is ProprioTransitions over every episode's recorded
// proprioception (Episode.Proprio, stored with the frames by Save).
func ProprioSamples(c proprio.Config, eps []Episode) []proprio.Sample {
	var out []proprio.Sample
	for _, e := range eps {
		out = append(out, ProprioTransitions(c, e.Proprio, e.Actions)...)
	}
	return out
}

// ProprioEval is the proprio head's prediction error on held-out
// episodes, next to the copy-last-vector baseline. Two units: MSE is the
// squared error in the simulator's units (metres, radians) averaged over
// the D values, which the orientation dominates (a step turns the gripper
// by up to 0.1 rad but moves it by at most 1.5 cm); NMSE divides each
// value's squared error by the variance σ_Δ² of its one-step change in the
// head's training data (its Norm) before averaging, so that every value
// counts alike and a head that predicts the mean change scores about 1.
type ProprioEval struct {
	Horizon int `json:"horizon"`
	// Start is the real step the rollouts start from, as ImagineEval's;
	// Rollouts counts the episodes long enough for it.
	Start    int `json:"start_step"`
	Rollouts int `json:"rollouts"`
	// MSE[h] and NMSE[h] are the errors of imagined step h+1 (open loop,
	// the recorded actions), CopyLastMSE[h] and CopyLastNMSE[h] those of
	// the last real vector, averaged over rollouts.
	MSE          []float64 `json:"per_step_mse"`
	CopyLastMSE  []float64 `json:"copy_last_per_step_mse"`
	NMSE         []float64 `json:"per_step_nmse"`
	CopyLastNMSE []float64 `json:"copy_last_per_step_nmse"`
	// The one-step errors are over every held-out transition from step
	// History−1 on (Transitions of them), each predicted from real
	// context.
	Transitions         int     `json:"transitions"`
	OneStepMSE          float64 `json:"one_step_mse"`
	OneStepCopyLastMSE  float64 `json:"one_step_copy_last_mse"`
	OneStepNMSE         float64 `json:"one_step_nmse"`
	OneStepCopyLastNMSE float64 `json:"one_step_copy_last_nmse"`
	Seconds             float64 `json:"seconds"`
}

// EvaluateProprio rolls m out open loop for horizon steps with the
// recorded actions from real step start of every held-out episode long
// enough (start ≥ History−1, start+horizon < its length), the rollouts of
// [EvaluateImagination], and scores every held-out transition one step
// ahead.
func EvaluateProprio(m *proprio.Model[float32], held []Episode, start, horizon int) ProprioEval {
	c, std := m.Config(), m.Norm().OutStd
	ev := ProprioEval{Horizon: horizon, Start: start, MSE: make([]float64, horizon), CopyLastMSE: make([]float64, horizon),
		NMSE: make([]float64, horizon), CopyLastNMSE: make([]float64, horizon)}
	for _, ep := range held {
		t := start
		if t < c.History-1 || t+horizon >= len(ep.Proprio) {
			continue
		}
		imag := m.Rollout(ep.Proprio[t-c.History+1:t+1], ep.Actions[t:t+horizon])
		for h := range horizon {
			truth := ep.Proprio[t+1+h]
			ev.MSE[h] += vecMSE(imag[h], truth, nil)
			ev.NMSE[h] += vecMSE(imag[h], truth, std)
			ev.CopyLastMSE[h] += vecMSE(ep.Proprio[t], truth, nil)
			ev.CopyLastNMSE[h] += vecMSE(ep.Proprio[t], truth, std)
		}
		ev.Rollouts++
	}
	for _, s := range [][]float64{ev.MSE, ev.NMSE, ev.CopyLastMSE, ev.CopyLastNMSE} {
		for h := range s {
			s[h] /= float64(max(1, ev.Rollouts))
		}
	}
	samples := ProprioSamples(c, held)
	for i, p := range m.Predict(samples) {
		s := samples[i]
		cur := s.Past[len(s.Past)-1]
		ev.OneStepMSE += vecMSE(p, s.Next, nil)
		ev.OneStepNMSE += vecMSE(p, s.Next, std)
		ev.OneStepCopyLastMSE += vecMSE(cur, s.Next, nil)
		ev.OneStepCopyLastNMSE += vecMSE(cur, s.Next, std)
	}
	ev.Transitions = len(samples)
	n := float64(max(1, len(samples)))
	ev.OneStepMSE, ev.OneStepNMSE, ev.OneStepCopyLastMSE, ev.OneStepCopyLastNMSE =
		ev.OneStepMSE/n, ev.OneStepNMSE/n, ev.OneStepCopyLastMSE/n, ev.OneStepCopyLastNMSE/n
	return ev
}

// vecMSE is the mean over the values of (a − b)², each divided by std²
// when std is not nil.
func vecMSE(a, b, std []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		if std != nil {
			d /= std[i]
		}
		s += d * d
	}
	return s / float64(len(a))
}
