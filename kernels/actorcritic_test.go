package kernels

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func cartpoleConfig() ActorCriticConfig {
	return ActorCriticConfig{ObsDim: 4, NumActions: 2, Hidden: []int{64, 64}, Activation: ActTanh}
}

func TestActorCriticLayout(t *testing.T) {
	// CleanRL's CartPole agent: actor 4·64+64 + 64·64+64 + 2·64+2 = 320 + 4160 + 130
	// = 4610, critic 320 + 4160 + 64+1 = 4545, total 9155.
	m := NewActorCritic(cartpoleConfig(), rand.New(rand.NewPCG(1, 1)))
	if m.NumParams() != 9155 || len(m.Grads()) != 9155 {
		t.Fatalf("NumParams = %d, len(Grads) = %d, want 9155", m.NumParams(), len(m.Grads()))
	}
	want := []struct {
		name   string
		offset int
		shape  []int
	}{
		{"actor.0.weight", 0, []int{64, 4}}, {"actor.0.bias", 256, []int{64}},
		{"actor.2.weight", 320, []int{64, 64}}, {"actor.2.bias", 4416, []int{64}},
		{"actor.4.weight", 4480, []int{2, 64}}, {"actor.4.bias", 4608, []int{2}},
		{"critic.0.weight", 4610, []int{64, 4}}, {"critic.0.bias", 4866, []int{64}},
		{"critic.2.weight", 4930, []int{64, 64}}, {"critic.2.bias", 9026, []int{64}},
		{"critic.4.weight", 9090, []int{1, 64}}, {"critic.4.bias", 9154, []int{1}},
	}
	got := m.Layout()
	if len(got) != len(want) {
		t.Fatalf("layout has %d tensors, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name || g.Offset != w.offset || len(g.Shape) != len(w.shape) || g.Shape[0] != w.shape[0] {
			t.Errorf("span %d = %+v, want %s at %d shape %v", i, g, w.name, w.offset, w.shape)
		}
	}
	if name := m.paramName(9090 + 3); name != "critic.4.weight[3]" {
		t.Errorf("paramName(9093) = %q, want critic.4.weight[3]", name)
	}
}

func TestActorCriticInit(t *testing.T) {
	m := NewActorCritic(cartpoleConfig(), rand.New(rand.NewPCG(2, 2)))
	p := m.Params()
	for _, s := range m.Layout() {
		vals := p[s.Offset : s.Offset+s.Size()]
		if strings.HasSuffix(s.Name, "bias") {
			for _, v := range vals {
				if v != 0 {
					t.Fatalf("%s has non-zero bias %v", s.Name, v)
				}
			}
			continue
		}
		gain := math.Sqrt2
		switch s.Name {
		case "actor.4.weight":
			gain = 0.01
		case "critic.4.weight":
			gain = 1
		}
		// The smaller side is orthonormal·gain: WWᵀ = gain²I when rows ≤
		// cols, WᵀW = gain²I otherwise. Householder QR is backward stable:
		// entries are exact to a few hundred ulps for 64-wide matrices, so
		// 1e-12·gain² is a safe bound.
		rows, cols := s.Shape[0], s.Shape[1]
		small, large := rows, cols
		at := func(i, k int) float64 { return vals[i*cols+k] } // row i, col k
		if rows > cols {
			small, large = cols, rows
			at = func(i, k int) float64 { return vals[k*cols+i] } // col i, row k
		}
		for i := 0; i < small; i++ {
			for j := 0; j < small; j++ {
				dotij := 0.0
				for k := 0; k < large; k++ {
					dotij += at(i, k) * at(j, k)
				}
				want := 0.0
				if i == j {
					want = gain * gain
				}
				if math.Abs(dotij-want) > 1e-12*gain*gain {
					t.Fatalf("%s: Gram[%d][%d] = %v, want %v", s.Name, i, j, dotij, want)
				}
			}
		}
	}
}

func TestActEmpiricalFrequencies(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	cfg := ActorCriticConfig{ObsDim: 4, NumActions: 3, Hidden: []int{16}, Activation: ActReLU}
	m := NewActorCritic(cfg, rng)
	// Spread the policy so the three probabilities differ clearly.
	for i := range m.Params() {
		m.Params()[i] = 0.3 * rng.NormFloat64()
	}
	obs := []float64{0.3, -1.2, 0.8, 0.1}
	probs := make([]float64, 3)
	m.Probs(obs, 1, probs)
	const n = 20000
	batch := make([]float64, 0, n*4)
	for i := 0; i < n; i++ {
		batch = append(batch, obs...)
	}
	actions, logp, values := make([]int, n), make([]float64, n), make([]float64, n)
	m.Act(batch, n, rand.New(rand.NewPCG(4, 4)), actions, logp, values)
	v := make([]float64, 1)
	m.Values(obs, 1, v)
	counts := make([]int, 3)
	for i, a := range actions {
		counts[a]++
		// Probs exponentiates the same log-probabilities; exp then log
		// loses a few ulps of numbers of order 1: 1e-13.
		if math.Abs(logp[i]-math.Log(probs[a])) > 1e-13 {
			t.Fatalf("logp[%d] = %v, want log %v", i, logp[i], probs[a])
		}
		if values[i] != v[0] {
			t.Fatalf("values[%d] = %v, want V(obs) = %v", i, values[i], v[0])
		}
	}
	for j, p := range probs {
		if p < 0.05 {
			t.Fatalf("probs %v: want every action reasonably likely for this test", probs)
		}
		// Count ~ Binomial(n, p): std sqrt(n p (1−p)); 4.5 std has a
		// two-sided false-alarm rate below 1e-5 per action.
		std := math.Sqrt(n * p * (1 - p))
		if d := math.Abs(float64(counts[j]) - n*p); d > 4.5*std {
			t.Errorf("action %d: %d draws, want %.0f ± %.0f (p = %.4f)", j, counts[j], n*p, 4.5*std, p)
		}
	}
}

func TestCloneAndSetParams(t *testing.T) {
	m := NewActorCritic(cartpoleConfig(), rand.New(rand.NewPCG(5, 5)))
	c := m.Clone()
	obs := []float64{0.01, -0.02, 0.03, 0.04, 0.1, 0.2, -0.1, 0.0}
	vm, vc := make([]float64, 2), make([]float64, 2)
	m.Values(obs, 2, vm)
	c.Values(obs, 2, vc)
	if vm[0] != vc[0] || vm[1] != vc[1] {
		t.Fatalf("clone values %v differ from original %v", vc, vm)
	}
	m.Params()[m.NumParams()-1] += 1 // critic output bias: V shifts by exactly 1
	c.Values(obs, 2, vc)
	m.Values(obs, 2, vm)
	if vc[0] == vm[0] {
		t.Fatalf("clone shares parameters with the original")
	}
	c.SetParams(m.Params())
	c.Values(obs, 2, vc)
	if vc[0] != vm[0] || vc[1] != vm[1] {
		t.Fatalf("after SetParams clone values %v, want %v", vc, vm)
	}
	defer func() {
		if r := recover(); r == nil || !strings.HasPrefix(r.(string), "kernels: ") {
			t.Errorf("SetParams with the wrong length: recovered %v, want a kernels: panic", r)
		}
	}()
	c.SetParams(make([]float64, 3))
}

func TestConfigValidate(t *testing.T) {
	if err := cartpoleConfig().Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	bad := ActorCriticConfig{ObsDim: 0, NumActions: 1, Hidden: []int{-3}, Activation: "gelu"}
	err := bad.Validate()
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	for _, want := range []string{"obs dim", "num actions", "hidden layer 0", `"gelu"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}
