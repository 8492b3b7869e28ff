package bc

import (
	"math"
	"slices"
	"testing"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/testenv/tabletop"
)

func smallDemos(t *testing.T) []Demo {
	t.Helper()
	demos, err := Collect(CollectInput{Suite: tabletop.SuiteSpatial, Tasks: []int{0, 1}, PerTask: 2, Noise: 0.1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return demos
}

func smallConfig() Config {
	cfg := DefaultConfig()
	cfg.Hidden, cfg.Epochs, cfg.Batch = []int{16}, 4, 32
	return cfg
}

// TestTrainerResume: a trainer restored from another's State after epoch 2 ends its last
// epochs with exactly the parameters and losses of one that never stopped, because every
// epoch shuffles from its own stream and the state holds everything else.
func TestTrainerResume(t *testing.T) {
	demos, cfg := smallDemos(t), smallConfig()
	_, whole, err := Train(cfg, demos)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewTrainer(cfg, demos)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := a.Epoch(); err != nil {
			t.Fatal(err)
		}
	}
	st := a.State()
	b, err := NewTrainer(cfg, demos)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Restore(st); err != nil {
		t.Fatal(err)
	}
	for !b.Done() {
		if _, err := b.Epoch(); err != nil {
			t.Fatal(err)
		}
	}
	for !a.Done() {
		if _, err := a.Epoch(); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(a.Model().Policy.Params(), b.Model().Policy.Params()) {
		t.Error("resumed trainer's parameters differ from the uninterrupted one's")
	}
	if !slices.Equal(b.Result().EpochLoss, whole.EpochLoss) {
		t.Errorf("losses %v, uninterrupted %v", b.Result().EpochLoss, whole.EpochLoss)
	}
	bad := st
	bad.Params = bad.Params[1:]
	if err := b.Restore(bad); err == nil {
		t.Error("Restore accepted a state with a parameter missing")
	}
}

// TestFoldedParams: the folded policy reads raw features and must give the model's mean
// action on standardised ones, and the requested log-std.
func TestFoldedParams(t *testing.T) {
	demos, cfg := smallDemos(t), smallConfig()
	m, _, err := Train(cfg, demos)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.FoldedParams(-2)
	if err != nil {
		t.Fatal(err)
	}
	folded := m.Policy.Clone()
	folded.SetParams(p)
	ad := m.Policy.Config().ActionDims
	for _, d := range demos[:2] {
		raw := Features(d.Obs[len(d.Obs)/2], nil)
		norm := m.features(d.Obs[len(d.Obs)/2], nil)
		want := kernels.Actions{Continuous: make([]float64, ad)}
		got := kernels.Actions{Continuous: make([]float64, ad)}
		m.Policy.Greedy(norm, 1, want)
		folded.Greedy(raw, 1, got)
		for i := range want.Continuous {
			// Folding reorders a sum of ~60 products of O(10) terms: float64 rounding,
			// about 1e-13 relative; 1e-9 leaves a wide margin and still catches a wrong
			// feature or sign.
			if math.Abs(got.Continuous[i]-want.Continuous[i]) > 1e-9*(1+math.Abs(want.Continuous[i])) {
				t.Fatalf("action[%d] = %v folded, %v unfolded", i, got.Continuous[i], want.Continuous[i])
			}
		}
		v1, v2 := make([]float64, 1), make([]float64, 1)
		m.Policy.Values(norm, 1, v1)
		folded.Values(raw, 1, v2)
		if math.Abs(v1[0]-v2[0]) > 1e-9*(1+math.Abs(v1[0])) {
			t.Errorf("value %v folded, %v unfolded", v2[0], v1[0])
		}
	}
	for _, s := range folded.Layout() {
		if s.Name == "actor_logstd" {
			for _, v := range p[s.Offset : s.Offset+s.Size()] {
				if v != -2 {
					t.Fatalf("log std %v, want -2", v)
				}
			}
		}
	}
	if _, err := m.FoldedParams(math.NaN()); err == nil {
		t.Error("FoldedParams accepted a NaN log std")
	}
}
