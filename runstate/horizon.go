package runstate

import (
	"errors"
	"fmt"
	"math"
)

// HorizonSchedule maps the world model's validation loss on real data to
// the imagination horizon H:
//
//	target(L) = Start                                                        L ≥ LossHigh
//	          = End                                                          L ≤ LossLow
//	          = Start + ⌊(LossHigh − L)/(LossHigh − LossLow) · (End − Start)⌋   otherwise
//
// Next applies it to the best (lowest) loss seen so far, not the latest, so
// H never decreases: a loss that rises again (a harder region of the state
// space reached by a better policy, a noisy validation batch) does not take
// back horizon the model has earned, and a policy is never trained on
// chunks whose length jumps up and down. The result is also clamped to
// [Start, End].
//
// The loss is the observation model's normalised-delta MSE on validation
// data (see kernels.ObsModel): 1 is as good as predicting the average
// change, 0 is perfect.
type HorizonSchedule struct {
	Start    int     `json:"start"`     // H while the model is poor, >= 1
	End      int     `json:"end"`       // H once the model is good, >= Start
	LossHigh float64 `json:"loss_high"` // at or above: Start
	LossLow  float64 `json:"loss_low"`  // at or below: End; < LossHigh
}

// HorizonState is the schedule's state, kept by the Run workflow (it must
// survive crashes and continue-as-new, so it is plain JSON data).
type HorizonState struct {
	H        int     `json:"h"`         // current horizon
	BestLoss float64 `json:"best_loss"` // lowest loss seen; meaningful once Updates > 0
	Updates  int     `json:"updates"`   // finite losses seen
}

// Validate reports a schedule Next cannot follow.
func (s HorizonSchedule) Validate() error {
	var errs []error
	if s.Start < 1 || s.End < s.Start {
		errs = append(errs, fmt.Errorf("need 1 <= start <= end, got start %d and end %d", s.Start, s.End))
	}
	if !(s.LossLow < s.LossHigh) || math.IsInf(s.LossHigh, 0) || math.IsInf(s.LossLow, 0) {
		errs = append(errs, fmt.Errorf("need finite loss_low < loss_high, got %v and %v", s.LossLow, s.LossHigh))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("horizon schedule: %w", err)
	}
	return nil
}

// Init returns the state before any loss was seen: H = Start.
func (s HorizonSchedule) Init() HorizonState { return HorizonState{H: s.Start} }

// Target returns target(loss), clamped to [Start, End]; a NaN loss gives
// Start.
func (s HorizonSchedule) Target(loss float64) int {
	switch {
	case math.IsNaN(loss) || loss >= s.LossHigh:
		return s.Start
	case loss <= s.LossLow:
		return s.End
	}
	frac := (s.LossHigh - loss) / (s.LossHigh - s.LossLow)
	h := s.Start + int(math.Floor(frac*float64(s.End-s.Start)))
	return min(max(h, s.Start), s.End)
}

// Next returns the state after observing valLoss. It is a pure function of
// its arguments. A NaN or infinite loss (no validation data, a diverged
// model) changes nothing. Otherwise BestLoss becomes min(BestLoss,
// valLoss), Updates grows by one, and H = max(H, target(BestLoss)),
// clamped to [Start, End].
func (s HorizonSchedule) Next(st HorizonState, valLoss float64) HorizonState {
	if !math.IsNaN(valLoss) && !math.IsInf(valLoss, 0) {
		if st.Updates == 0 || valLoss < st.BestLoss {
			st.BestLoss = valLoss
		}
		st.Updates++
	}
	h := st.H
	if st.Updates > 0 {
		h = max(h, s.Target(st.BestLoss))
	}
	st.H = min(max(h, s.Start), s.End)
	return st
}
