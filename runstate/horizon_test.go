package runstate

import (
	"encoding/json"
	"math"
	"testing"
)

// The schedule of the spec's defaults: H from 5 to 50 as the loss falls
// from 0.5 to 0.05.
var testSchedule = HorizonSchedule{Start: 5, End: 50, LossHigh: 0.5, LossLow: 0.05}

func TestHorizonTargetByHand(t *testing.T) {
	for _, tc := range []struct {
		loss float64
		want int
	}{
		{10, 5}, {0.5, 5}, // at or above loss_high: Start
		{0.05, 50}, {0, 50}, {-1, 50}, // at or below loss_low: End
		// (0.5 − 0.275)/0.45 = 0.5 → 5 + ⌊0.5·45⌋ = 5 + 22 = 27.
		{0.275, 27},
		// (0.5 − 0.123)/0.45 · 45 = 37.7 → 5 + 37 = 42. (Integer points
		// sit at losses that are multiples of 0.01; these tests stay away
		// from them, where float64 rounding could go either way.)
		{0.123, 42},
		// (0.5 − 0.455)/0.45 = 0.1 → 5 + ⌊4.5⌋ = 9.
		{0.455, 9},
		{math.NaN(), 5},
	} {
		if got := testSchedule.Target(tc.loss); got != tc.want {
			t.Errorf("Target(%v) = %d, want %d", tc.loss, got, tc.want)
		}
	}
}

func TestHorizonStartsAtStartAndReachesEnd(t *testing.T) {
	st := testSchedule.Init()
	if st.H != 5 || st.Updates != 0 {
		t.Fatalf("Init = %+v, want H 5 and no updates", st)
	}
	st = testSchedule.Next(st, 3.0) // a poor model
	if st.H != 5 || st.BestLoss != 3 || st.Updates != 1 {
		t.Errorf("after loss 3: %+v, want H 5, best 3, 1 update", st)
	}
	st = testSchedule.Next(st, 0.01)
	if st.H != 50 || st.BestLoss != 0.01 {
		t.Errorf("after loss 0.01: %+v, want H 50", st)
	}
}

func TestHorizonMonotoneUnderFallingLoss(t *testing.T) {
	st := testSchedule.Init()
	prev := st.H
	for i := 0; i <= 100; i++ {
		loss := 0.6 - 0.006*float64(i) // 0.6 down to 0
		st = testSchedule.Next(st, loss)
		if st.H < prev {
			t.Fatalf("loss %v: H fell from %d to %d", loss, prev, st.H)
		}
		if st.H != testSchedule.Target(loss) {
			t.Fatalf("loss %v: H = %d, want target %d (the loss is the best so far)", loss, st.H, testSchedule.Target(loss))
		}
		prev = st.H
	}
	if st.H != 50 || st.Updates != 101 {
		t.Errorf("final %+v, want H 50 after 101 updates", st)
	}
}

func TestHorizonNeverDecreasesWhenLossRises(t *testing.T) {
	st := testSchedule.Next(testSchedule.Init(), 0.275) // H 27
	for _, loss := range []float64{0.4, 1.0, 100, 0.3} {
		st = testSchedule.Next(st, loss)
		if st.H != 27 || st.BestLoss != 0.275 {
			t.Errorf("after rising loss %v: %+v, want H 27 and best loss 0.275 kept", loss, st)
		}
	}
	// Non-finite losses change nothing, not even the update count.
	before := st
	for _, loss := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if st = testSchedule.Next(st, loss); st != before {
			t.Errorf("loss %v changed the state to %+v", loss, st)
		}
	}
}

func TestHorizonClamped(t *testing.T) {
	// A state from elsewhere (zero value, or an older schedule with other
	// bounds) is pulled into [Start, End].
	if st := testSchedule.Next(HorizonState{}, math.NaN()); st.H != 5 {
		t.Errorf("zero state → H %d, want Start 5", st.H)
	}
	if st := testSchedule.Next(HorizonState{H: 80, BestLoss: 0.01, Updates: 3}, 0.02); st.H != 50 {
		t.Errorf("H 80 → %d, want End 50", st.H)
	}
	// Start == End: a fixed horizon.
	fixed := HorizonSchedule{Start: 7, End: 7, LossHigh: 1, LossLow: 0}
	for _, loss := range []float64{5, 0.5, 0} {
		if st := fixed.Next(fixed.Init(), loss); st.H != 7 {
			t.Errorf("fixed schedule, loss %v: H %d, want 7", loss, st.H)
		}
	}
}

func TestHorizonStateJSON(t *testing.T) {
	st := testSchedule.Next(testSchedule.Init(), 0.123456789)
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back HorizonState
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back != st {
		t.Errorf("JSON round trip: %+v, want %+v (%s)", back, st, data)
	}
}

func TestHorizonScheduleValidate(t *testing.T) {
	if err := testSchedule.Validate(); err != nil {
		t.Errorf("default schedule: %v", err)
	}
	for _, bad := range []HorizonSchedule{
		{Start: 0, End: 5, LossHigh: 1, LossLow: 0},
		{Start: 6, End: 5, LossHigh: 1, LossLow: 0},
		{Start: 5, End: 50, LossHigh: 0.1, LossLow: 0.1},
		{Start: 5, End: 50, LossHigh: math.NaN(), LossLow: 0},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", bad)
		}
	}
}
