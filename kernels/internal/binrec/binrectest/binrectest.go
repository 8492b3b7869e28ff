// Package binrectest checks the trainer checkpoints of the kernels' models (package binrec's
// records): that a restored trainer continues bit for bit and that damage is detected. Only
// tests import it.
package binrectest

import (
	"bytes"
	"testing"
)

// Trainer is a trainer whose complete state round-trips through a binary record.
type Trainer interface {
	MarshalBinary() ([]byte, error)
	UnmarshalBinary(data []byte) error
}

// RoundTrip saves tr (already some steps into its run), restores the record into fresh(),
// and checks that re-encoding the restored trainer gives the same bytes, that both then
// take `more` steps with equal losses and end in equal bytes that differ from the saved
// ones, and that a record with one flipped bit or cut short is refused.
func RoundTrip[T Trainer](t testing.TB, tr T, fresh func() T, step func(T) (float64, error), more int) {
	t.Helper()
	saved, err := tr.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back := fresh()
	if err := back.UnmarshalBinary(saved); err != nil {
		t.Fatal(err)
	}
	if again, _ := back.MarshalBinary(); !bytes.Equal(saved, again) {
		t.Fatal("re-encoding a restored trainer changed its bytes")
	}
	for i := range more {
		l1, err1 := step(tr)
		l2, err2 := step(back)
		if err1 != nil || err2 != nil || l1 != l2 {
			t.Fatalf("step %d after restore: losses %v (%v) and %v (%v), want equal", i, l1, err1, l2, err2)
		}
	}
	b1, _ := tr.MarshalBinary()
	b2, _ := back.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		t.Errorf("original and restored trainer diverged after %d more steps", more)
	}
	if bytes.Equal(b1, saved) {
		t.Errorf("%d more steps left the state unchanged", more)
	}
	bad := append([]byte(nil), saved...)
	bad[len(bad)/2] ^= 1
	if err := fresh().UnmarshalBinary(bad); err == nil {
		t.Error("a flipped bit was not detected")
	}
	if err := fresh().UnmarshalBinary(saved[:len(saved)-9]); err == nil {
		t.Error("a truncated record was not detected")
	}
}
