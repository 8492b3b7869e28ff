package proprio

import (
	"math/rand/v2"
	"testing"

	"github.com/accerl/accerl/kernels/internal/binrec/binrectest"
)

// TestTrainerCheckpointRoundTrip saves a trainer mid-run, restores it into
// a fresh Trainer and checks that both continue bit for bit (same losses,
// same bytes after more steps), and that damage is detected.
func TestTrainerCheckpointRoundTrip(t *testing.T) {
	c := tinyConfig()
	data := randSamples(rand.New(rand.NewPCG(1, 2)), c, 40)
	tr, err := NewTrainer(c, FitNorm(c, data), TrainConfig{LR: 1e-2, BatchSize: 5, MaxGradNorm: 1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := tr.Step(data); err != nil {
			t.Fatal(err)
		}
	}
	binrectest.RoundTrip(t, tr, func() *Trainer { return new(Trainer) }, func(tr *Trainer) (float64, error) { return tr.Step(data) }, 5)
}
