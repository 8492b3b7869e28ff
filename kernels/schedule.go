package kernels

import (
	"errors"
	"fmt"
	"math"
)

// Learning-rate schedule kinds accepted by [LRSchedule].Kind.
const (
	LRConstant = "constant" // Base after warmup
	LRLinear   = "linear"   // linear decay from Base to 0 over [Warmup, Total]
	LRCosine   = "cosine"   // half-cosine decay from Base to 0 over [Warmup, Total]
)

// LRSchedule is the learning rate as a pure function of the update index
// u = 0, 1, 2, … (the number of completed updates before this one):
//
//	u < Warmup:          Base · (u + 1)/Warmup                 (linear warmup, never 0)
//	constant:            Base
//	linear:              Base · (1 − p)                         p = (u − Warmup)/(Total − Warmup), clamped to [0, 1]
//	cosine:              Base · ½ (1 + cos(π p))
//
// With Warmup = 0 the linear kind is CleanRL's anneal_lr, lr = Base·(1 −
// u/Total). An empty Kind means constant. It holds no state, so a resumed
// run that restores its update counter gets the same rates.
type LRSchedule struct {
	Base   float64 // peak learning rate
	Warmup int     // updates of linear warmup
	Total  int     // updates at which linear and cosine reach 0; unused by constant
	Kind   string  // LRConstant, LRLinear or LRCosine
}

// Validate reports a schedule At cannot evaluate.
func (s LRSchedule) Validate() error {
	var errs []error
	if !(s.Base > 0) || math.IsInf(s.Base, 0) {
		errs = append(errs, fmt.Errorf("base learning rate must be positive and finite, got %v", s.Base))
	}
	if s.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup must not be negative, got %d", s.Warmup))
	}
	switch s.Kind {
	case "", LRConstant:
	case LRLinear, LRCosine:
		if s.Total <= s.Warmup {
			errs = append(errs, fmt.Errorf("%s schedule: total updates (%d) must exceed warmup (%d)", s.Kind, s.Total, s.Warmup))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown schedule kind %q (want %q, %q or %q)", s.Kind, LRConstant, LRLinear, LRCosine))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("learning-rate schedule: %w", err)
	}
	return nil
}

// At returns the learning rate for update u (u < 0 counts as 0). Call
// Validate first; an invalid schedule gives meaningless values.
func (s LRSchedule) At(u int) float64 {
	u = max(u, 0)
	if u < s.Warmup {
		return s.Base * float64(u+1) / float64(s.Warmup)
	}
	if s.Kind == LRLinear || s.Kind == LRCosine {
		p := float64(u-s.Warmup) / float64(s.Total-s.Warmup)
		p = clamp(p, 0, 1)
		if s.Kind == LRLinear {
			return s.Base * (1 - p)
		}
		return s.Base * 0.5 * (1 + math.Cos(math.Pi*p))
	}
	return s.Base
}
