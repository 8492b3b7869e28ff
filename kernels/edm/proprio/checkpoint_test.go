package proprio

import (
	"bytes"
	"math/rand/v2"
	"testing"
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
	saved, err := tr.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Trainer
	if err := back.UnmarshalBinary(saved); err != nil {
		t.Fatal(err)
	}
	if again, _ := back.MarshalBinary(); !bytes.Equal(saved, again) {
		t.Fatal("re-encoding a restored trainer changed its bytes")
	}
	for i := range 5 {
		l1, err1 := tr.Step(data)
		l2, err2 := back.Step(data)
		if err1 != nil || err2 != nil || l1 != l2 {
			t.Fatalf("step %d after restore: losses %v (%v) and %v (%v), want equal", i, l1, err1, l2, err2)
		}
	}
	b1, _ := tr.MarshalBinary()
	b2, _ := back.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		t.Error("original and restored trainer diverged after 5 more steps")
	}
	if bytes.Equal(b1, saved) {
		t.Error("5 more steps left the state unchanged")
	}
	bad := append([]byte(nil), saved...)
	bad[len(bad)/2] ^= 1
	if err := new(Trainer).UnmarshalBinary(bad); err == nil {
		t.Error("a flipped bit was not detected")
	}
	if err := new(Trainer).UnmarshalBinary(saved[:len(saved)-9]); err == nil {
		t.Error("a truncated record was not detected")
	}
}
