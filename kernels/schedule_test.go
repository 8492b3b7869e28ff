package kernels

import (
	"math"
	"strings"
	"testing"
)

func TestLRSchedule(t *testing.T) {
	// Base 1e-3, warmup 10, total 110: warmup rates (u+1)/10·1e-3, then
	// p = (u − 10)/100.
	const base = 1e-3
	for _, c := range []struct {
		kind string
		u    int
		want float64
	}{
		{LRConstant, 0, base / 10}, {LRConstant, 4, base / 2}, {LRConstant, 9, base}, {LRConstant, 500, base},
		{"", 60, base},
		{LRLinear, 0, base / 10}, {LRLinear, 10, base}, {LRLinear, 60, base / 2}, // p = ½
		{LRLinear, 85, base / 4}, {LRLinear, 110, 0}, {LRLinear, 200, 0}, // p = ¾, 1, clamped
		{LRCosine, 10, base}, {LRCosine, 60, base / 2}, // ½(1 + cos π/2) = ½
		{LRCosine, 35, base * 0.5 * (1 + math.Sqrt2/2)}, // p = ¼: ½(1 + cos π/4) = 0.8535534
		{LRCosine, 110, 0}, {LRCosine, -3, base / 10},
	} {
		s := LRSchedule{Base: base, Warmup: 10, Total: 110, Kind: c.kind}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		// A few roundings of 1e-3-sized values; cos(π) = −1 + 1.2e-16·½: 1e-18 absolute.
		if got := s.At(c.u); math.Abs(got-c.want) > 1e-18 {
			t.Errorf("%s At(%d) = %.17g, want %.17g", c.kind, c.u, got, c.want)
		}
	}
	// Without warmup, linear is CleanRL's anneal: 1 − u/Total.
	s := LRSchedule{Base: 2.5e-4, Total: 100, Kind: LRLinear}
	if got := s.At(25); math.Abs(got-2.5e-4*0.75) > 1e-19 {
		t.Errorf("anneal At(25) = %v, want %v", got, 2.5e-4*0.75)
	}
	for _, c := range []struct {
		s    LRSchedule
		want string
	}{
		{LRSchedule{Base: 0}, "base"},
		{LRSchedule{Base: 1, Warmup: -1}, "warmup"},
		{LRSchedule{Base: 1, Warmup: 5, Total: 5, Kind: LRCosine}, "total updates (5) must exceed warmup (5)"},
		{LRSchedule{Base: 1, Kind: "exp"}, `"exp"`},
	} {
		if err := c.s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want it to mention %s", c.s, err, c.want)
		}
	}
}
