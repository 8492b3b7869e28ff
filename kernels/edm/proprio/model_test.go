package proprio

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestFeatures pins the feature vector to its definition on a hand-made
// window: k = 3 vectors (1, 2), (4, 0), (5, 5) and action 0.5 give the
// current vector, the last motion, the one before, then the action.
func TestFeatures(t *testing.T) {
	c := Config{History: 3, ProprioDim: 2, ActionDim: 1}
	got := c.Features([][]float64{{1, 2}, {4, 0}, {5, 5}}, []float64{0.5})
	if want := []float64{5, 5, 1, 5, 3, -2, 0.5}; !slices.Equal(got, want) {
		t.Errorf("features %v, want %v", got, want)
	}
	if c.In() != 7 {
		t.Errorf("In %d, want 7", c.In())
	}
}

// TestFitNorm checks the statistics on two hand-made samples (k = 1,
// D = 2, A = 1): features (p, a) = (0, 4, 1) and (2, 4, 3), changes (1, 0)
// and (3, 0). Means (1, 4, 2) and (2, 0); population standard deviations
// (1, 0 → MinStd, 1) and (1, 0 → MinStd).
func TestFitNorm(t *testing.T) {
	c := Config{History: 1, ProprioDim: 2, ActionDim: 1}
	nm := FitNorm(c, []Sample{
		{Past: [][]float64{{0, 4}}, Action: []float64{1}, Next: []float64{1, 4}},
		{Past: [][]float64{{2, 4}}, Action: []float64{3}, Next: []float64{5, 4}},
	})
	for _, v := range []struct {
		name      string
		got, want []float64
	}{
		{"input mean", nm.InMean, []float64{1, 4, 2}}, {"input std", nm.InStd, []float64{1, MinStd, 1}},
		{"change mean", nm.OutMean, []float64{2, 0}}, {"change std", nm.OutStd, []float64{1, MinStd}},
	} {
		if !slices.Equal(v.got, v.want) {
			t.Errorf("%s %v, want %v", v.name, v.got, v.want)
		}
	}
}

// randSamples returns n random transitions for c: vectors and actions
// N(0, 1), next = current + 0.1·(first D action values, padded) + noise.
func randSamples(rng *rand.Rand, c Config, n int) []Sample {
	out := make([]Sample, n)
	for i := range out {
		s := Sample{Action: randVec(rng, c.ActionDim, 1)}
		for range c.History {
			s.Past = append(s.Past, randVec(rng, c.ProprioDim, 1))
		}
		s.Next = slices.Clone(s.Past[c.History-1])
		for j := range s.Next {
			s.Next[j] += 0.1*s.Action[j%c.ActionDim] + 0.01*rng.NormFloat64()
		}
		out[i] = s
	}
	return out
}

// TestUntrainedHeadPredictsMeanChange: with its output layer at zero a
// fresh head predicts p_k + μ_Δ for every input, and on the data its Norm
// was fitted on its loss is exactly 1 (each standardised change has
// population variance 1; float64 sums of 50 terms round at ~1e-15).
func TestUntrainedHeadPredictsMeanChange(t *testing.T) {
	c := tinyConfig()
	data := randSamples(rand.New(rand.NewPCG(1, 1)), c, 50)
	nm := FitNorm(c, data)
	m := NewModel[float64](c, nm, rand.New(rand.NewPCG(2, 2)))
	for i, p := range m.Predict(data) {
		for j, v := range p {
			if want := data[i].Past[c.History-1][j] + nm.OutMean[j]; math.Abs(v-want) > 1e-15 {
				t.Fatalf("sample %d value %d: predicted %v, want p_k + μ_Δ = %v", i, j, v, want)
			}
		}
	}
	if l := m.EvalLoss(m.Batch(data)); math.Abs(l-1) > 1e-12 {
		t.Errorf("untrained loss on the fitted data %v, want 1", l)
	}
}

// TestPredictUndoesStandardisation sets the output bias to b and checks
// p̂ = p_k + μ_Δ + σ_Δ ⊙ b on hand-picked statistics.
func TestPredictUndoesStandardisation(t *testing.T) {
	c := Config{History: 1, ProprioDim: 2, ActionDim: 1, Hidden: []int{3}}
	nm := Norm{InMean: []float64{0, 0, 0}, InStd: []float64{1, 1, 1}, OutMean: []float64{0.5, -1}, OutStd: []float64{2, 0.1}}
	m := NewModel[float64](c, nm, rand.New(rand.NewPCG(3, 3)))
	bias := m.Spans()[len(m.Spans())-1]
	copy(m.Params()[bias.Offset:], []float64{1, -3})
	got := m.Predict([]Sample{{Past: [][]float64{{10, 20}}, Action: []float64{7}}})[0]
	// 10 + 0.5 + 2·1 = 12.5 and 20 − 1 + 0.1·(−3) = 18.7.
	if want := []float64{12.5, 18.7}; math.Abs(got[0]-want[0]) > 1e-12 || math.Abs(got[1]-want[1]) > 1e-12 {
		t.Errorf("prediction %v, want %v", got, want)
	}
}

// TestRollout checks the open loop two ways: a head whose output is a
// constant change c walks p_k + h·c, and a random head's rollout equals
// calling Predict step by step on the window the rollout must build.
func TestRollout(t *testing.T) {
	c := Config{History: 2, ProprioDim: 2, ActionDim: 1, Hidden: []int{4}}
	m := NewModel[float64](c, identityNorm(c), rand.New(rand.NewPCG(4, 4)))
	bias := m.Spans()[len(m.Spans())-1]
	copy(m.Params()[bias.Offset:], []float64{0.25, -1})
	past := [][]float64{{0, 0}, {1, 2}}
	acts := [][]float64{{1}, {-1}, {0.5}}
	for h, p := range m.Rollout(past, acts) {
		if want := []float64{1 + 0.25*float64(h+1), 2 - float64(h+1)}; !slices.Equal(p, want) {
			t.Errorf("constant-change rollout step %d: %v, want %v", h+1, p, want)
		}
	}

	r := newTestModel(7)
	rc := r.Config()
	rng := rand.New(rand.NewPCG(7, 8))
	window := [][]float64{randVec(rng, rc.ProprioDim, 1), randVec(rng, rc.ProprioDim, 1), randVec(rng, rc.ProprioDim, 1)}
	acts = [][]float64{randVec(rng, rc.ActionDim, 1), randVec(rng, rc.ActionDim, 1), randVec(rng, rc.ActionDim, 1), randVec(rng, rc.ActionDim, 1)}
	got := r.Rollout(window, acts)
	for h, a := range acts {
		want := r.Predict([]Sample{{Past: window[len(window)-rc.History:], Action: a}})[0]
		if !slices.Equal(got[h], want) {
			t.Fatalf("rollout step %d: %v, want step-by-step %v", h+1, got[h], want)
		}
		window = append(window, want)
	}
}

// TestFloat32MatchesFloat64 runs the same weights and inputs through both
// instantiations: float32 rounding (~6e-8 relative per operation, over
// sums of ≤ 14 products of order 1 in three layers) keeps the outputs
// within ~1e-6 of each other; 1e-5 absolute leaves a margin.
func TestFloat32MatchesFloat64(t *testing.T) {
	m64 := newTestModel(9)
	c := m64.Config()
	m32 := NewModel[float32](c, m64.Norm(), nil)
	for i, v := range m64.Params() {
		m32.Params()[i] = float32(v)
	}
	data := randSamples(rand.New(rand.NewPCG(9, 10)), c, 8)
	p64, p32 := m64.Predict(data), m32.Predict(data)
	worst := 0.0
	for i := range p64 {
		for j := range p64[i] {
			worst = math.Max(worst, math.Abs(p64[i][j]-p32[i][j]))
		}
	}
	t.Logf("float32 vs float64 predictions: worst absolute difference %.3g", worst)
	if worst > 1e-5 {
		t.Errorf("float32 and float64 predictions differ by %g, want ≤ 1e-5", worst)
	}
}

func TestConfigErrors(t *testing.T) {
	err := Config{History: 0, ProprioDim: 8, ActionDim: 0, Hidden: []int{4, 0}}.Validate()
	for _, want := range []string{"history must be at least 1", "action dim (0)", "hidden widths must be positive"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
	if err := DefaultConfig(8, 7).Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
	if err := (TrainConfig{LR: 0, BatchSize: 8}).Validate(); err == nil {
		t.Error("a zero learning rate was accepted")
	}
}
