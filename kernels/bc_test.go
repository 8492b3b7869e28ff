package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// On a one-step toy task where the expert's action is a function of the observation (the
// sign of o_0 picks token 0 or 1 of a 2-action categorical head), behaviour cloning drives
// the cross-entropy from log 2 towards 0 and the greedy policy to the expert's action.
func TestBehaviourCloningLearnsTheExpert(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	p := NewPolicy(PolicyConfig{ObsDim: 2, Head: HeadCategorical, NumActions: 2, Hidden: []int{16}, Activation: ActTanh}, rng)
	const n = 64
	obs := make([]float64, 2*n)
	tok := make([]int, n)
	for i := range n {
		obs[2*i], obs[2*i+1] = 2*rng.Float64()-1, 2*rng.Float64()-1
		if obs[2*i] > 0 {
			tok[i] = 1
		}
	}
	opt := NewAdam(p.NumParams(), 1e-2)
	var s BCScratch
	first := BehaviourCloningStep(p, opt, obs, n, Actions{Tokens: tok}, 0.5, &s)
	// The policy head starts near uniform (gain 0.01), so the first loss is about log 2.
	if math.Abs(first-math.Ln2) > 0.05 {
		t.Errorf("first BC loss %.4f, want about log 2 = %.4f", first, math.Ln2)
	}
	var last float64
	for range 300 {
		last = BehaviourCloningStep(p, opt, obs, n, Actions{Tokens: tok}, 0.5, &s)
	}
	if !(last < 0.1) {
		t.Errorf("BC loss after 300 steps %.4f, want < 0.1 (a separable task)", last)
	}
	a := Actions{Tokens: make([]int, n)}
	p.Greedy(obs, n, a)
	wrong := 0
	for i := range n {
		if a.Tokens[i] != tok[i] {
			wrong++
		}
	}
	if wrong > 2 {
		t.Errorf("greedy policy disagrees with the expert on %d of %d observations", wrong, n)
	}
}

// The BC loss is the mean negative log-probability of the expert's tokens, as the policy
// scores them (Evaluate) before the step.
func TestBehaviourCloningLossIsTheNLL(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	low, high := []float64{-1, -1}, []float64{1, 1}
	p := NewPolicy(PolicyConfig{ObsDim: 3, Head: HeadTokens, ActionDims: 2, Bins: 5, Low: low, High: high, Hidden: []int{8}, Activation: ActTanh}, rng)
	obs := []float64{0.1, -0.2, 0.3, 0.5, 0.5, -0.5}
	tok := []int{0, 4, 2, 3}
	logp, ent, val := make([]float64, 4), make([]float64, 4), make([]float64, 2)
	p.Clone().Evaluate(obs, 2, Actions{Tokens: tok}, logp, ent, val)
	want := -(logp[0] + logp[1] + logp[2] + logp[3]) / 4
	var s BCScratch
	got := BehaviourCloningStep(p, NewAdam(p.NumParams(), 1e-3), obs, 2, Actions{Tokens: tok}, 0, &s)
	if math.Abs(got-want) > 1e-12 { // the same float64 operations in another order
		t.Errorf("BC loss %.15f, want the mean NLL %.15f", got, want)
	}
}
