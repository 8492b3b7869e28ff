package edm

import "testing"

// TestFrameMSE checks the pixel error against hand-computed values: bytes 0 and 255 are
// −1 and 1, so {0, 255} against {255, 255} is ((−2)² + 0)/2 = 2, and a step averages its
// cameras' errors.
func TestFrameMSE(t *testing.T) {
	a, b := Frame{0, 255}, Frame{255, 255}
	if got := FrameMSE(a, b); got != 2 {
		t.Errorf("FrameMSE = %v, want 2", got)
	}
	if got := StepMSE([]Frame{a, b}, []Frame{b, b}); got != 1 {
		t.Errorf("StepMSE = %v, want (2 + 0)/2 = 1", got)
	}
}
