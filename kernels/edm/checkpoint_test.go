package edm

import (
	"bytes"
	"testing"
)

// TestTrainerCheckpointRoundTrip saves a trainer mid-run, restores it into
// a fresh Trainer and checks that both continue bit for bit (same losses,
// same parameters and moments, same bytes), and that damage is detected.
func TestTrainerCheckpointRoundTrip(t *testing.T) {
	c := tinyConfig()
	c.ImageSize, c.Cameras, c.ActionDim = 8, 1, 2
	data := movingSquares(Config{ImageSize: 16, History: c.History}, 2, 1)
	for i := range data { // shrink the 16×16 frames to 8×8 by taking every other pixel
		for j := range data[i].Past {
			data[i].Past[j][0] = half(data[i].Past[j][0])
		}
		data[i].Next[0] = half(data[i].Next[0])
	}
	tr, err := NewTrainer(c, DefaultEDM(), TrainConfig{LR: 1e-3, BatchSize: 3, MaxGradNorm: 1, Seed: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
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
	again, _ := back.MarshalBinary()
	if !bytes.Equal(saved, again) {
		t.Fatal("re-encoding a restored trainer changed its bytes")
	}
	for i := range 3 {
		l1, err1 := tr.Step(data)
		l2, err2 := back.Step(data)
		if err1 != nil || err2 != nil || l1 != l2 {
			t.Fatalf("step %d after restore: losses %v (%v) and %v (%v), want equal", i, l1, err1, l2, err2)
		}
	}
	b1, _ := tr.MarshalBinary()
	b2, _ := back.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		t.Error("original and restored trainer diverged after 3 more steps")
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

// half keeps every other pixel of a 16×16 HWC frame.
func half(f Frame) Frame {
	out := make(Frame, 8*8*3)
	for y := range 8 {
		for x := range 8 {
			copy(out[3*(y*8+x):3*(y*8+x)+3], f[3*(2*y*16+2*x):])
		}
	}
	return out
}
