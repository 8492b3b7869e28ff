package binrec

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestTailRoundTrip writes a record with a tail and reads it back equal,
// the random state included (the restored generator draws the same
// numbers), and refuses damaged records.
func TestTailRoundTrip(t *testing.T) {
	src := rand.NewPCG(3, 4)
	rand.New(src).Uint64() // move it off its seed
	in := Tail{LR: 1e-3, BatchSize: 7, MaxGradNorm: 0.5, Seed: 9, Steps: 12, Rand: src,
		Params: []float32{1, -2.5, 3}, M: []float32{0.1, 0.2, 0.3}, V: []float32{4, 5, 6}}
	w := NewWriter("TEST\x00\x00\x00\x00", 0)
	w.I64(-5)
	if err := w.Tail(in); err != nil {
		t.Fatal(err)
	}
	data := w.Seal()
	r, err := Open(data, "TEST\x00\x00\x00\x00", "test")
	if err != nil {
		t.Fatal(err)
	}
	if v := r.I64(); v != -5 {
		t.Errorf("field %d, want -5", v)
	}
	out, err := r.Tail()
	if err != nil {
		t.Fatal(err)
	}
	if a, b := rand.New(in.Rand).Uint64(), rand.New(out.Rand).Uint64(); a != b {
		t.Errorf("restored generator draws %d, the original %d", b, a)
	}
	in.Rand, out.Rand = nil, nil
	if !reflect.DeepEqual(in, out) {
		t.Errorf("tail %+v, want %+v", out, in)
	}
	if _, err := Open(data, "OTHER\x00\x00\x00", "test"); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("a wrong magic: %v", err)
	}
	bad := append([]byte(nil), data...)
	bad[10] ^= 1
	if _, err := Open(bad, "TEST\x00\x00\x00\x00", "test"); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("a flipped bit: %v", err)
	}
	// A tail whose arrays do not fill the rest of the record is refused.
	var tw Writer
	in.Rand = rand.NewPCG(1, 1)
	if err := tw.Tail(in); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Reader{B: append(tw, 0)}).Tail(); err == nil || !strings.Contains(err.Error(), "3 parameters in 37 bytes") {
		t.Errorf("a byte too many: %v", err)
	}
}
