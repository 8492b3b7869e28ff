package worldmodel

import (
	"math"
	"strings"
	"testing"
)

// handModel builds a world model with linear networks (no hidden layers)
// whose weights the test sets: ObsDim 1, two discrete actions, history k.
func handModel(t *testing.T, k int, mode string, obsW, rewW []float64) *WorldModel {
	t.Helper()
	wm, err := NewWorldModel(ModelConfig{ObsDim: 1, NumActions: 2, History: k, Activation: "tanh", RewardMode: mode}, 1e-3, 1e-3, 1)
	if err != nil {
		t.Fatal(err)
	}
	wm.Obs().SetParams(obsW)
	wm.Rew().SetParams(rewW)
	return wm
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// alwaysOne is a policy that always takes action 1, with log-probability
// −0.1·o and value 10·o so the test can check which observation each
// entry came from.
func alwaysOne(calls *int) ActFunc {
	return func(obs []float64, n int) ([]float64, []float64, []float64) {
		*calls++
		a, lp, v := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := 0; i < n; i++ {
			a[i] = 1
			lp[i] = -0.1 * obs[i]
			v[i] = 10 * obs[i]
		}
		return a, lp, v
	}
}

func TestImagineSuccessDeltaRewards(t *testing.T) {
	// M_obs (k = 1): input [o_t, onehot(a)], ŷ = −[a=0] + [a=1], so the
	// observation moves by ±1 (identity normalisation: the delta is ŷ).
	// M_rew: success logit z_0 = o (p = σ(o)), termination logit
	// z_1 = 10·o − 25 (p_term ≥ ½ once o ≥ 2.5).
	wm := handModel(t, 1, RewardSuccessDelta,
		[]float64{0, -1, 1, 0},
		[]float64{1, 10, 0, -25})
	calls := 0
	chunks, err := Imagine(wm, []StartState{{Hist: []float64{0}, Tag: 7}, {Hist: []float64{-3}, Tag: 9}},
		alwaysOne(&calls), 3, ImagineConfig{})
	if err != nil {
		t.Fatal(err)
	}

	// Start 0 (tag 7): ô = 0 → 1 → 2 → 3; after step 2, ô_3 = 3 ≥ 2.5 ends
	// it: 3 steps, r̂_t = σ(t+1) − σ(t), bootstrap 0.
	a := chunks[0]
	if a.Tag != 7 || a.Len() != 3 || !a.Terminated || a.Bootstrap || a.NextObs != nil || a.BootstrapValue != 0 {
		t.Fatalf("chunk 0 = %+v, want tag 7, 3 steps, terminated, no bootstrap", a)
	}
	for i := 0; i < 3; i++ {
		o := float64(i)
		want := sigmoid(o+1) - sigmoid(o)
		// σ evaluated twice (1/(1+e^−x) vs the kernel's form): 1e-15.
		if math.Abs(a.Rewards[i]-want) > 1e-15 {
			t.Errorf("chunk 0 r̂_%d = %.17g, want σ(%v) − σ(%v) = %.17g", i, a.Rewards[i], o+1, o, want)
		}
		if a.Obs[i] != o || a.Actions[i] != 1 || a.LogProbs[i] != -0.1*o || a.Values[i] != 10*o {
			t.Errorf("chunk 0 step %d: obs %v action %v logp %v value %v, want %v 1 %v %v",
				i, a.Obs[i], a.Actions[i], a.LogProbs[i], a.Values[i], o, -0.1*o, 10*o)
		}
	}
	if a.TermProbs[2] < 0.5 || a.TermProbs[1] >= 0.5 {
		t.Errorf("chunk 0 termination probabilities %v, want only the last ≥ ½", a.TermProbs)
	}

	// Start −3 (tag 9): ô = −3 → −2 → −1 → 0 within H = 3, no
	// termination: bootstrap from ô_3 = 0 with V = 10·0.
	b := chunks[1]
	if b.Tag != 9 || b.Len() != 3 || b.Terminated || !b.Bootstrap || len(b.NextObs) != 1 || b.NextObs[0] != 0 || b.BootstrapValue != 0 {
		t.Fatalf("chunk 1 = %+v, want tag 9, 3 steps, bootstrap from ô_3 = 0", b)
	}
	// The rewards telescope: Σ r̂ = σ(0) − σ(−3).
	sum := b.Rewards[0] + b.Rewards[1] + b.Rewards[2]
	if want := sigmoid(0) - sigmoid(-3); math.Abs(sum-want) > 1e-15 {
		t.Errorf("chunk 1 Σ r̂ = %.17g, want σ(0) − σ(−3) = %.17g", sum, want)
	}
	// 3 steps with at least one chunk alive, plus one bootstrap call.
	if calls != 4 {
		t.Errorf("act called %d times, want 4", calls)
	}
}

func TestImagineDirectRewardsZeroDelta(t *testing.T) {
	// A zero-delta observation model (all weights 0: ô_{t+1} = o_t) and a
	// direct reward model r̂ = 2·o + 1, never terminating (z_1 = −50).
	wm := handModel(t, 1, RewardDirect,
		[]float64{0, 0, 0, 0},
		[]float64{2, 0, 1, -50})
	calls := 0
	chunks, err := Imagine(wm, []StartState{{Hist: []float64{0.5}}}, alwaysOne(&calls), 4, ImagineConfig{})
	if err != nil {
		t.Fatal(err)
	}
	c := chunks[0]
	if c.Len() != 4 || c.Terminated || !c.Bootstrap || c.NextObs[0] != 0.5 || c.BootstrapValue != 5 {
		t.Fatalf("chunk = %+v, want 4 steps and a bootstrap from 0.5 with V = 5", c)
	}
	for i, r := range c.Rewards {
		if r != 2 || c.Obs[i] != 0.5 { // 2·0.5 + 1, exact
			t.Errorf("step %d: obs %v reward %v, want 0.5 and 2", i, c.Obs[i], r)
		}
	}
}

func TestImagineSlidesHistoryAcrossCompaction(t *testing.T) {
	// k = 2, input [o_{t−1}, o_t, onehot(a)], ŷ = o_{t−1}: the Fibonacci
	// recursion ô_{t+1} = ô_t + ô_{t−1}. Direct rewards r̂ = ô_{t+1};
	// termination z_1 = 10·o − 45 (once o ≥ 4.5).
	wm := handModel(t, 2, RewardDirect,
		[]float64{1, 0, 0, 0, 0},
		[]float64{1, 10, 0, -45})
	calls := 0
	// Start A = [1, 2] → 3, 5 (ends: 5 ≥ 4.5). Start B = [0, 1] → 1, 2, 3, 5 (ends).
	// Start C = [−1, 1] → 0, 1, 1, 2, 3 within H = 5. A leaves the batch
	// after step 1, B after step 3: rows are compacted twice.
	chunks, err := Imagine(wm, []StartState{{Hist: []float64{1, 2}}, {Hist: []float64{0, 1}}, {Hist: []float64{-1, 1}}},
		alwaysOne(&calls), 5, ImagineConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		rewards []float64
		term    bool
		next    float64
	}{
		{[]float64{3, 5}, true, 0},
		{[]float64{1, 2, 3, 5}, true, 0},
		{[]float64{0, 1, 1, 2, 3}, false, 3},
	} {
		c := chunks[i]
		if !equal(c.Rewards, want.rewards) || c.Terminated != want.term {
			t.Errorf("chunk %d: rewards %v terminated %v, want %v %v", i, c.Rewards, c.Terminated, want.rewards, want.term)
		}
		// Obs[t] is ô_t: the start's newest value, then the previous rewards.
		if c.Obs[0] != chunksStart(i) || (c.Len() > 1 && c.Obs[1] != want.rewards[0]) {
			t.Errorf("chunk %d: observations %v", i, c.Obs)
		}
		if !want.term && c.NextObs[0] != want.next {
			t.Errorf("chunk %d: next obs %v, want %v", i, c.NextObs, want.next)
		}
	}
}

func chunksStart(i int) float64 { return []float64{2, 1, 1}[i] }

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestImagineTermThreshold(t *testing.T) {
	// Termination logit 0 everywhere: p_term = ½. The default threshold ½
	// ends every chunk after one step; a threshold of 0.6 never does.
	wm := handModel(t, 1, RewardDirect, []float64{0, 0, 0, 0}, []float64{0, 0, 0, 0})
	calls := 0
	for _, tc := range []struct {
		thr  float64
		want int
	}{{0, 1}, {0.6, 3}} {
		chunks, err := Imagine(wm, []StartState{{Hist: []float64{0}}}, alwaysOne(&calls), 3, ImagineConfig{TermThreshold: tc.thr})
		if err != nil {
			t.Fatal(err)
		}
		if chunks[0].Len() != tc.want {
			t.Errorf("threshold %v: %d steps, want %d", tc.thr, chunks[0].Len(), tc.want)
		}
	}
}

func TestImagineRefusesNonFinitePredictions(t *testing.T) {
	wm := handModel(t, 1, RewardDirect, []float64{0, 0, 0, math.NaN()}, []float64{0, 0, 0, 0})
	calls := 0
	_, err := Imagine(wm, []StartState{{Hist: []float64{0}}}, alwaysOne(&calls), 3, ImagineConfig{})
	if err == nil || !strings.Contains(err.Error(), "predicted observation of start 0 is NaN") {
		t.Errorf("err = %v, want a non-finite prediction error", err)
	}
}
