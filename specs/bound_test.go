package specs

import (
	"math"
	"testing"
)

func TestBound(t *testing.T) {
	cases := []struct {
		b    bound
		desc string
		in   []float64
		out  []float64
	}{
		{atLeast(1), "at least 1", []float64{1, 2, 1e9}, []float64{0.999, 0, -1, math.Inf(1), math.NaN()}},
		{greaterThan(0), "greater than 0", []float64{1e-12, 3}, []float64{0, -1e-12, math.Inf(1)}},
		{between(0, 1), "between 0 and 1", []float64{0, 0.5, 1}, []float64{-0.001, 1.001}},
		{aboveUpTo(0, 1), "greater than 0 and at most 1", []float64{1e-9, 1}, []float64{0, 1.0000001}},
	}
	for _, c := range cases {
		if got := c.b.String(); got != c.desc {
			t.Errorf("String() = %q, want %q", got, c.desc)
		}
		for _, x := range c.in {
			if !c.b.contains(x) {
				t.Errorf("%s: %v rejected", c.desc, x)
			}
		}
		for _, x := range c.out {
			if c.b.contains(x) {
				t.Errorf("%s: %v accepted", c.desc, x)
			}
		}
	}
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"base", "sync", "big_net", "lr-3e-4", "v1.2", "0seed"} {
		if !validName(ok) {
			t.Errorf("validName(%q) = false", ok)
		}
	}
	for _, bad := range []string{"", "a/b", "has space", ".hidden", "-flag", "_x", "ünï"} {
		if validName(bad) {
			t.Errorf("validName(%q) = true", bad)
		}
	}
}
