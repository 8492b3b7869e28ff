package kernels

import (
	"fmt"
	"math"
)

// Activation names accepted by [PolicyConfig] and [NewMLP].
const (
	ActTanh = "tanh" // y = tanh(x), CleanRL's default for classic control
	ActReLU = "relu" // y = max(x, 0)
)

// Tanh sets y[i] = tanh(x[i]). x and y may be the same slice.
func Tanh(x, y []float64) {
	checkSameLen("Tanh", len(x), len(y))
	for i, v := range x {
		y[i] = math.Tanh(v)
	}
}

// TanhBackward sets dx[i] = dy[i] * (1 - y[i]²), the derivative of tanh
// written in terms of its output y. dy and dx may be the same slice.
func TanhBackward(y, dy, dx []float64) {
	checkSameLen("TanhBackward", len(y), len(dy))
	checkSameLen("TanhBackward", len(y), len(dx))
	for i, v := range y {
		dx[i] = dy[i] * (1 - v*v)
	}
}

// ReLU sets y[i] = max(x[i], 0). x and y may be the same slice.
func ReLU(x, y []float64) {
	checkSameLen("ReLU", len(x), len(y))
	for i, v := range x {
		if v > 0 {
			y[i] = v
		} else {
			y[i] = 0
		}
	}
}

// ReLUBackward sets dx[i] = dy[i] where the output y[i] > 0 and 0 elsewhere
// (the subgradient 0 at the kink, as PyTorch uses). dy and dx may be the same
// slice.
func ReLUBackward(y, dy, dx []float64) {
	checkSameLen("ReLUBackward", len(y), len(dy))
	checkSameLen("ReLUBackward", len(y), len(dx))
	for i, v := range y {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
}

// activation is a forward/backward pair selected by name.
type activation struct {
	forward  func(x, y []float64)
	backward func(y, dy, dx []float64)
}

// lookupActivation returns the pair for name, and false for an unknown name.
func lookupActivation(name string) (activation, bool) {
	switch name {
	case ActTanh:
		return activation{Tanh, TanhBackward}, true
	case ActReLU:
		return activation{ReLU, ReLUBackward}, true
	}
	return activation{}, false
}

func checkSameLen(op string, a, b int) {
	if a != b {
		panic(fmt.Sprintf("kernels: %s: slice lengths differ (%d and %d)", op, a, b))
	}
}
