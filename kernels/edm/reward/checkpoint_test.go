package reward

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
	rng := rand.New(rand.NewPCG(1, 2))
	steps := randSteps(rng, c, 30)
	data := make([]Example, len(steps))
	for i, f := range steps {
		data[i] = Example{Frames: f, Success: i%3 == 0, End: i%5 == 0}
	}
	tr, err := NewTrainer(c, TrainConfig{LR: 1e-2, BatchSize: 6, Focal: Focal{Gamma: 2, Alpha: 0.25}, MaxGradNorm: 1, Seed: 4})
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
