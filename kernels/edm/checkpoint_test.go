package edm

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/accerl/accerl/kernels/internal/binrec/binrectest"
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
	for _, v := range []struct {
		residual bool
		noise    float64
		self     int
		from     int
	}{{false, 0, 0, 0}, {true, 0, 0, 0}, {true, 0.1, 1, 2}} {
		e := DefaultEDM()
		e.Residual, e.ContextNoise, e.SelfForcing, e.SelfForcingFrom = v.residual, v.noise, v.self, v.from
		tr, err := NewTrainer(c, e, TrainConfig{LR: 1e-3, BatchSize: 3, MaxGradNorm: 1, Seed: 4}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := tr.Step(data); err != nil {
				t.Fatal(err)
			}
		}
		binrectest.RoundTrip(t, tr, func() *Trainer { return new(Trainer) }, func(tr *Trainer) (float64, error) { return tr.Step(data) }, 3)
		rec, _ := tr.MarshalBinary()
		var back Trainer
		if err := back.UnmarshalBinary(rec); err != nil || back.EDM != e {
			t.Errorf("%+v: restored EDM settings %+v (%v), want %+v", v, back.EDM, err, e)
		}
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

// TestTrainerReadsFormat2: a record written before ContextNoise and SelfForcing existed
// (format 2: the same bytes without those three fields) still restores, with both 0 and
// everything else as saved, so that runs checkpointed by an older build resume.
func TestTrainerReadsFormat2(t *testing.T) {
	c := tinyConfig()
	e := DefaultEDM()
	e.Residual = true
	tr, err := NewTrainer(c, e, TrainConfig{LR: 1e-3, BatchSize: 2, MaxGradNorm: 1, Seed: 6}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := tr.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// magic | format | config (7 + len(Channels) int64s) | 6 float64s | Steps | Residual | ContextNoise | SelfForcing | SelfForcingFrom | …
	at := 8 + 4 + 8*(7+len(c.Channels)) + 8*6 + 8 + 8
	old := append(append([]byte(nil), rec[:at]...), rec[at+24:len(rec)-4]...)
	binary.LittleEndian.PutUint32(old[8:], 2)
	old = binary.LittleEndian.AppendUint32(old, crc32.Checksum(old, crc32.MakeTable(crc32.Castagnoli)))
	var back Trainer
	if err := back.UnmarshalBinary(old); err != nil {
		t.Fatalf("format 2 record: %v", err)
	}
	if back.EDM != e || back.Steps != tr.Steps || back.Train != tr.Train {
		t.Errorf("format 2 record restored EDM %+v, steps %d, train %+v; want %+v, %d, %+v", back.EDM, back.Steps, back.Train, e, tr.Steps, tr.Train)
	}
	again, err := back.MarshalBinary()
	if err != nil || !bytes.Equal(again, rec) {
		t.Errorf("re-encoding the format 2 trainer does not give the format 3 record (%v)", err)
	}
}
