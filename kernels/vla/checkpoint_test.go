package vla

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// trainSteps runs BC steps on fixed batches (batch i of the list at step
// i): Forward, cross-entropy, Backward, clipping, Adam.
func trainSteps(m *Model, opt *Adam[float32], batches [][]Obs, tokens [][][]int) {
	var tape *Tape[float32]
	for i := range batches {
		tape = m.ForwardInto(tape, batches[i], tokens[i])
		_, _, dLogp := CrossEntropy(tape)
		m.ZeroGrads()
		m.Backward(tape, dLogp, nil, tape.Value) // a value term too, so its head trains
		ClipGradNorm(m.Grads(), 1)
		opt.Step(m.Params(), m.Grads())
	}
}

// TestCheckpointContinuesBitIdentical trains a model, saves model and
// optimizer, trains on, then restores the saved pair into fresh objects and
// trains on the same batches: the parameters must agree bit for bit (the
// computation is deterministic, and the encoding loses nothing).
func TestCheckpointContinuesBitIdentical(t *testing.T) {
	// The small preset at batch 8 runs its larger products split over the
	// backend's workers; the tiny full-head model covers the full head.
	for _, slim := range []bool{true, false} {
		rng := rand.New(rand.NewPCG(21, 22))
		c, nb := tinyConfig(false), 4
		if slim {
			c, nb = SmallConfig(), 8
		}
		m := New(c, rng)
		opt := NewAdam[float32](len(m.Grads()), 1e-2)
		const steps = 4
		var batches [][]Obs
		var tokens [][][]int
		for range 2 * steps {
			batches = append(batches, randObs(rng, c, nb))
			tokens = append(tokens, randTokens(rng, c, nb))
		}
		trainSteps(m, opt, batches[:steps], tokens[:steps])
		mb, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		ob, err := opt.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		trainSteps(m, opt, batches[steps:], tokens[steps:])

		var m2 Model
		var opt2 Adam[float32]
		if err := m2.UnmarshalBinary(mb); err != nil {
			t.Fatal(err)
		}
		if err := opt2.UnmarshalBinary(ob); err != nil {
			t.Fatal(err)
		}
		if m2.Config() != c || opt2.T != steps {
			t.Fatalf("restored config %+v, step %d; want %+v, %d", m2.Config(), opt2.T, c, steps)
		}
		// Deterministic encoding: the restored state encodes to the same bytes.
		if again, _ := m2.MarshalBinary(); !bytes.Equal(again, mb) {
			t.Fatal("model: re-encoding the restored state gives different bytes")
		}
		if again, _ := opt2.MarshalBinary(); !bytes.Equal(again, ob) {
			t.Fatal("Adam: re-encoding the restored state gives different bytes")
		}
		trainSteps(&m2, &opt2, batches[steps:], tokens[steps:])
		for i, v := range m.Params() {
			if m2.Params()[i] != v {
				t.Fatalf("slim=%v: parameter %d after resuming = %v, uninterrupted run %v", slim, i, m2.Params()[i], v)
			}
		}
		for i, v := range opt.M {
			if opt2.M[i] != v || opt2.V[i] != opt.V[i] {
				t.Fatalf("slim=%v: Adam moment %d differs after resuming", slim, i)
			}
		}
	}
}

func TestCheckpointRejectsBadRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	m := New(tinyConfig(true), rng)
	b, _ := m.MarshalBinary()
	flipped := append([]byte(nil), b...)
	flipped[len(flipped)/2] ^= 1
	var m64 Net[float64]
	var adam Adam[float32]
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"bit flip", new(Model).UnmarshalBinary(flipped), "checksum"},
		{"truncated", new(Model).UnmarshalBinary(b[:len(b)-9]), "checksum"},
		{"empty", new(Model).UnmarshalBinary(nil), "too short"},
		{"float64 model", m64.UnmarshalBinary(b), "4-byte elements"},
		{"model as Adam", adam.UnmarshalBinary(b), "magic"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, tc.err, tc.want)
		}
	}
}
