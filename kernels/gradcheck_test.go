package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/accerl/accerl/kernels/internal/gradcheck"
)

// Central finite differences: f'(x) ≈ (f(x+h) − f(x−h)) / 2h. The truncation
// error is h²·f⁽³⁾/6 and the rounding error about ε·|f|/h with ε = 2.2e-16.
// All test functions here have |f| and |f⁽³⁾| of order 1-10, so with
// h = 1e-5 truncation is ~1e-9 and rounding ~1e-10; a mismatch above
// gradTol = 1e-6 (relative to max(1, |analytic|)) is a real bug (a wrong
// term is off by O(1) or at least O(coefficient) ≥ 1e-3 in these tests).
const (
	fdStep  = 1e-5
	gradTol = 1e-6
)

// numGrad returns the central-difference derivative of f with respect to
// x[i], restoring x[i] afterwards.
func numGrad(f func() float64, x []float64, i int) float64 {
	orig := x[i]
	x[i] = orig + fdStep
	fp := f()
	x[i] = orig - fdStep
	fm := f()
	x[i] = orig
	return (fp - fm) / (2 * fdStep)
}

// checkGrad compares analytic[i] with the numerical derivative of f with
// respect to every x[i].
func checkGrad(t *testing.T, name string, f func() float64, x, analytic []float64) {
	t.Helper()
	for i := range x {
		num := numGrad(f, x, i)
		if d := math.Abs(num - analytic[i]); d > gradTol*math.Max(1, math.Abs(analytic[i])) {
			t.Errorf("%s[%d]: analytic %.10g, numeric %.10g (diff %.3g)", name, i, analytic[i], num, d)
		}
	}
}

var randSlice, dot = gradcheck.RandVec, gradcheck.Dot

func TestDenseGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const in, out, n = 3, 4, 5
	d := NewDense(in, out)
	params := randSlice(rng, d.NumParams(), 0.7)
	grads := make([]float64, d.NumParams())
	d.Bind(params, grads)
	x := randSlice(rng, n*in, 1)
	r := randSlice(rng, n*out, 1)
	y := make([]float64, n*out)
	loss := func() float64 { d.Forward(x, n, y); return dot(y, r) }

	loss()
	dx := make([]float64, n*in)
	d.Backward(x, r, n, dx)
	checkGrad(t, "dense params", loss, params, grads)
	checkGrad(t, "dense input", loss, x, dx)

	// Backward accumulates: a second call doubles the parameter gradients.
	before := append([]float64(nil), grads...)
	d.Backward(x, r, n, nil)
	for i := range grads {
		if math.Abs(grads[i]-2*before[i]) > 1e-12*math.Max(1, math.Abs(before[i])) {
			t.Fatalf("grad[%d] after two Backward calls = %v, want 2×%v", i, grads[i], before[i])
		}
	}
}

func TestDenseForwardByHand(t *testing.T) {
	// W = [[1, 2], [3, 4], [5, 6]] (3 outputs × 2 inputs), B = [0.5, −1, 0],
	// x = [1, −1]: y = [1−2+0.5, 3−4−1, 5−6+0] = [−0.5, −2, −1].
	d := NewDense(2, 3)
	d.Bind([]float64{1, 2, 3, 4, 5, 6, 0.5, -1, 0}, make([]float64, 9))
	y := make([]float64, 3)
	d.Forward([]float64{1, -1}, 1, y)
	want := []float64{-0.5, -2, -1}
	for i := range want {
		if y[i] != want[i] { // small integers and halves: exact in float64
			t.Errorf("y[%d] = %v, want %v", i, y[i], want[i])
		}
	}
}

func TestActivationGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range []string{ActTanh, ActReLU} {
		act, _ := lookupActivation(name)
		x := randSlice(rng, 12, 1.5)
		for i := range x {
			// Keep ReLU inputs away from the kink at 0 by more than the step.
			if math.Abs(x[i]) < 0.1 {
				x[i] += 0.2
			}
		}
		r := randSlice(rng, len(x), 1)
		y := make([]float64, len(x))
		loss := func() float64 { act.forward(x, y); return dot(y, r) }
		loss()
		dx := make([]float64, len(x))
		act.backward(y, r, dx)
		checkGrad(t, name, loss, x, dx)
	}
}

func TestMLPGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range []string{ActTanh, ActReLU} {
		m := NewMLP([]int{3, 5, 4, 2}, name)
		params := make([]float64, m.NumParams())
		grads := make([]float64, m.NumParams())
		m.Bind(params, grads)
		m.InitOrthogonal(math.Sqrt2, 1, rng)
		for i := range params {
			params[i] += 0.1 * rng.NormFloat64() // non-zero biases too
		}
		const n = 4
		x := randSlice(rng, n*3, 1)
		r := randSlice(rng, n*2, 1)
		loss := func() float64 { return dot(m.Forward(x, n), r) }
		loss()
		dx := make([]float64, len(x))
		m.Backward(r, dx)
		// A ReLU unit straddles its kink under a ±1e-5 perturbation only if
		// its pre-activation is within ~1e-5 of 0: probability ~1e-4 for
		// these 36 random pre-activations, and it would show as a failure,
		// never as a false pass.
		checkGrad(t, name+" params", loss, params, grads)
		checkGrad(t, name+" input", loss, x, dx)
	}
}

func TestCategoricalGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, k = 4, 3
	c := Categorical{K: k}
	logits := randSlice(rng, n*k, 2)
	actions := []int{0, 2, 1, 2}
	wlp := randSlice(rng, n, 1)  // ∂L/∂logπ(a_i)
	went := randSlice(rng, n, 1) // ∂L/∂H_i
	logp := make([]float64, n*k)
	lp, ent := make([]float64, n), make([]float64, n)
	loss := func() float64 {
		c.LogProbs(logits, n, logp)
		c.Eval(logp, n, actions, lp, ent)
		return dot(wlp, lp) + dot(went, ent)
	}
	loss()
	dlogits := make([]float64, n*k)
	c.Backward(logp, n, actions, ent, wlp, went, dlogits)
	checkGrad(t, "categorical logits", loss, logits, dlogits)
}

func TestCategoricalByHand(t *testing.T) {
	// Logits [0, ln 2, ln 5] give probabilities [1/8, 2/8, 5/8]; the entropy is
	// −(1/8 ln 1/8 + 1/4 ln 1/4 + 5/8 ln 5/8) = 0.2599 + 0.3466 + 0.2938 = 0.9003.
	c := Categorical{K: 3}
	logp := make([]float64, 3)
	c.LogProbs([]float64{0, math.Log(2), math.Log(5)}, 1, logp)
	lp, ent := make([]float64, 1), make([]float64, 1)
	c.Eval(logp, 1, []int{1}, lp, ent)
	wantEnt := -(1.0/8*math.Log(1.0/8) + 2.0/8*math.Log(2.0/8) + 5.0/8*math.Log(5.0/8))
	// A few roundings in log/exp of values of order 1: 1e-14.
	if math.Abs(lp[0]-math.Log(0.25)) > 1e-14 || math.Abs(ent[0]-wantEnt) > 1e-14 {
		t.Errorf("log p(1) = %v, entropy = %v; want %v, %v", lp[0], ent[0], math.Log(0.25), wantEnt)
	}
	// Huge logits must not overflow: [1000, 1000] is uniform.
	c2 := Categorical{K: 2}
	lp2 := make([]float64, 2)
	c2.LogProbs([]float64{1000, 1000}, 1, lp2)
	if math.Abs(lp2[0]-math.Log(0.5)) > 1e-14 {
		t.Errorf("log softmax of [1000, 1000] = %v, want ln 0.5", lp2)
	}
}

// clipFixture builds a small categorical policy, its learner, a batch and a
// minibatch index whose old log-probs and values put each sample's
// probability ratio and value difference at chosen places relative to the
// clip range. The learner has prepared the batch, so lossAndGrad can run.
func clipFixture(t *testing.T, ratios, advs, dOldV, dRet []float64, cfg LearnerConfig) (*PolicyLearner, *Batch, []int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 10))
	model := NewPolicy(PolicyConfig{ObsDim: 3, Head: HeadCategorical, NumActions: 3, Hidden: []int{8, 8}, Activation: ActTanh}, rng)
	// Larger output weights than the 0.01 init so the policy is not flat
	// and the actor gradients are not tiny.
	perturb(model.Params(), 0.3, rng)
	n := len(ratios)
	b := &Batch{N: n, Obs: randSlice(rng, n*3, 1), Actions: make([]int, n),
		LogProbs: make([]float64, n), Advantages: advs, Returns: make([]float64, n), Values: make([]float64, n)}
	for i := range b.Actions {
		b.Actions[i] = i % 3
	}
	lp, ent, v := make([]float64, n), make([]float64, n), make([]float64, n)
	model.Evaluate(b.Obs, n, Actions{Tokens: b.Actions}, lp, ent, v)
	for i := range lp {
		b.LogProbs[i] = lp[i] - math.Log(ratios[i]) // so exp(lp − old) = ratio
		b.Values[i] = v[i] + dOldV[i]
		b.Returns[i] = v[i] + dRet[i]
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	l := NewPolicyLearner(model, cfg)
	l.prepare(b)
	return l, b, idx
}

func TestPPOLossGradientsClipInactive(t *testing.T) {
	// Ratios within [0.8, 1.2] by ≥ 0.05 and old values within ±0.2 of V by
	// ≥ 0.1: no clip is active, and a step of 1e-5 cannot reach a kink.
	l, b, idx := clipFixture(t,
		[]float64{0.9, 1.05, 1.1, 0.95, 1.0, 0.85},
		[]float64{1.0, -0.5, 2.0, -1.5, 0.3, 0.7},
		[]float64{0.05, -0.1, 0.0, 0.08, -0.05, 0.1},
		[]float64{1.0, -2.0, 0.5, 3.0, -0.7, 1.2},
		DefaultLearnerConfig(AlgoPPO))
	terms := l.lossAndGrad(b, idx)
	if terms.ClipFrac != 0 {
		t.Fatalf("clip fraction %v, want 0 for ratios inside the clip range", terms.ClipFrac)
	}
	grads := append([]float64(nil), l.Model.Grads()...)
	loss := func() float64 { return l.lossAndGrad(b, idx).Total }
	checkGrad(t, "ppo loss (no clip)", loss, l.Model.Params(), grads)
}

func TestPPOLossGradientsClipActive(t *testing.T) {
	// Ratios 1.5 / 0.5 are 0.3 outside [0.8, 1.2]; the signs of the
	// advantages pick the clipped branch (zero gradient) for samples 0 and 2
	// and the unclipped branch for 1 and 3. Old values 0.5 away from V
	// activate the value clip (V_clip = V ± 0.3): with R = V ± 2 the squared
	// errors are 4 (plain) against 2.89 or 5.29 (clipped), so samples 0 and 3
	// take the plain branch and 1 and 2 the clipped, constant one; samples 4
	// and 5 (R = V ± 0.1: 0.01 against 0.04) take the clipped one too.
	// Advantage normalisation is off so the advantage signs stay as chosen.
	cfg := DefaultLearnerConfig(AlgoPPO)
	cfg.AdvNorm = AdvNormNone
	l, b, idx := clipFixture(t,
		[]float64{1.5, 1.5, 0.5, 0.5, 1.02, 0.97},
		[]float64{1.0, -1.0, -1.0, 1.0, 0.5, -0.4},
		[]float64{0.5, 0.5, -0.5, -0.5, 0.5, -0.5},
		[]float64{2.0, -2.0, 2.0, -2.0, 0.1, -0.1},
		cfg)
	terms := l.lossAndGrad(b, idx)
	if want := 4.0 / 6; math.Abs(terms.ClipFrac-want) > 1e-15 {
		t.Fatalf("clip fraction %v, want %v", terms.ClipFrac, want)
	}
	grads := append([]float64(nil), l.Model.Grads()...)
	loss := func() float64 { return l.lossAndGrad(b, idx).Total }
	checkGrad(t, "ppo loss (clipped)", loss, l.Model.Params(), grads)
}
