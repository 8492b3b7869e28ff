package testenv

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func startedCar(pos, vel float64) *MountainCarContinuous {
	c := NewMountainCarContinuous(Options{})
	c.pos, c.vel, c.started = pos, vel, true
	return c
}

func TestMountainCarContinuousStepByHand(t *testing.T) {
	// ẋ' = clip(ẋ + 0.0015 clip(a) − 0.0025 cos 3x, ±0.07), x' = clip(x + ẋ', [−1.2, 0.6]).
	cases := []struct {
		name             string
		pos, vel, a      float64
		wantPos, wantVel float64
		wantReward       float64
		wantTerm         bool
	}{
		{
			// From the valley, full throttle: cos(−1.5) = 0.0707372017,
			// ẋ' = 0.0015 − 0.0025·0.0707372017 = 0.0015 − 0.0001768430 = 0.0013231570,
			// x' = −0.5 + 0.0013231570 = −0.4986768430; reward −0.1·1².
			"valley", -0.5, 0, 1, -0.49867684300416926, 0.0013231569958307428, -0.1, false,
		},
		{
			// Reaching the goal coasting: cos(1.32) = 0.2481754517,
			// ẋ' = 0.02 − 0.0006204386 = 0.0193795614, x' = 0.4593795614 ≥ 0.45: reward 100.
			"goal", 0.44, 0.02, 0, 0.45937956137086905, 0.019379561370869068, 100, true,
		},
		{
			// a = 2 pushes as 1 but is charged as 2: ẋ' = 0.0208795614,
			// x' = 0.4608795614; reward 100 − 0.1·4 = 99.6.
			"goal clipped push", 0.44, 0.02, 2, 0.46087956137086905, 0.02087956137086907, 99.6, true,
		},
		{
			// Past the goal line but rolling back: ẋ' = −0.01 − 0.0015 − 0.000176843
			// = −0.0116768430, x' = 0.4883231570; ẋ' < 0, so no termination.
			"goal moving left", 0.5, -0.01, -1, 0.48832315699583073, -0.011676843004169258, -0.1, false,
		},
		{
			// Left wall: cos(−3.57) = −0.9096285274, ẋ' = −0.05 − 0.0015 + 0.0022740713
			// = −0.0492259287, x' = −1.2392259287 → −1.2, and the inelastic wall sets ẋ' = 0.
			"left wall", -1.19, -0.05, -1, -1.2, 0, -0.1, false,
		},
		{
			// Speed limit: 3x = −π/2 makes the slope term 0 (6e-17),
			// ẋ' = 0.0695 + 0.0015 = 0.071 → 0.07, x' = −π/6 + 0.07 = −0.4535987756.
			"speed limit", -math.Pi / 6, 0.0695, 1, -math.Pi/6 + 0.07, 0.07, -0.1, false,
		},
		{
			// Right wall: x' = 0.59 + 0.05 − 0.0025 cos(1.77) → clipped to 0.6 with
			// the velocity kept (only the left wall is inelastic), terminated.
			"right wall", 0.59, 0.05, 0, 0.6, 0.05 - 0.0025*math.Cos(1.77), 100, true,
		},
	}
	for _, tc := range cases {
		c := startedCar(tc.pos, tc.vel)
		obs, reward, term, trunc := c.Step([]float64{tc.a})
		// The stored state is rounded to float32 as Gymnasium stores it.
		wantPos, wantVel := float64(float32(tc.wantPos)), float64(float32(tc.wantVel))
		if c.pos != wantPos || c.vel != wantVel {
			t.Errorf("%s: state (%.9g, %.9g), want float32 of (%.17g, %.17g)", tc.name, c.pos, c.vel, tc.wantPos, tc.wantVel)
		}
		if obs[0] != wantPos || obs[1] != wantVel {
			t.Errorf("%s: obs %v, want the stored state", tc.name, obs)
		}
		// The reward is 100 and/or 0.1·a² with a exact: 1e-13 covers rounding.
		if math.Abs(reward-tc.wantReward) > 1e-13 || term != tc.wantTerm || trunc {
			t.Errorf("%s: reward %.17g terminated %v truncated %v; want %v %v false",
				tc.name, reward, term, trunc, tc.wantReward, tc.wantTerm)
		}
	}
}

func TestMountainCarContinuousResetAndTruncation(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	env, err := Make(KindMountainCarContinuous, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp := env.ActionSpace()
	if env.ObsDim() != 2 || sp.N != 0 || sp.Dims() != 1 || sp.Low[0] != -1 || sp.High[0] != 1 {
		t.Fatalf("ObsDim %d, action space %+v; want 2 and one continuous dimension in [−1, 1]", env.ObsDim(), sp)
	}
	c := env.(*MountainCarContinuous)
	for ep := 0; ep < 50; ep++ {
		obs := env.Reset(rng)
		if c.pos < -0.6 || c.pos >= -0.4 || c.vel != 0 || obs[0] != float64(float32(c.pos)) || obs[1] != 0 {
			t.Fatalf("reset state (%v, %v), obs %v; want x in [−0.6, −0.4), ẋ = 0", c.pos, c.vel, obs)
		}
	}
	// Doing nothing from the valley floor never reaches the goal: 999 steps
	// of reward 0, truncated at the last.
	total := 0.0
	for step := 1; step <= 999; step++ {
		_, r, term, trunc := env.Step([]float64{0})
		total += r
		if term || trunc != (step == 999) {
			t.Fatalf("step %d: terminated %v truncated %v", step, term, trunc)
		}
	}
	if total != 0 {
		t.Errorf("return of zero actions %v, want 0", total)
	}
}

func TestMountainCarContinuousBangBangReachesGoal(t *testing.T) {
	// Pushing in the direction of motion (a = +1 when ẋ ≥ 0, −1 otherwise)
	// pumps energy into the car and is the textbook solution: it must reach
	// the goal well within the limit and earn 100 − 0.1·steps.
	env := NewMountainCarContinuous(Options{})
	env.Reset(rand.New(rand.NewPCG(33, 34)))
	total := 0.0
	for step := 1; step <= 999; step++ {
		a := 1.0
		if env.vel < 0 {
			a = -1
		}
		_, r, term, _ := env.Step([]float64{a})
		total += r
		if term {
			// Each step costs exactly 0.1; summing them rounds at 1e-13.
			if want := 100 - 0.1*float64(step); math.Abs(total-want) > 1e-10 || step > 300 {
				t.Errorf("reached the goal at step %d with return %v, want ≤ 300 steps and %v", step, total, want)
			}
			return
		}
	}
	t.Fatal("bang-bang policy never reached the goal")
}

func TestMountainCarContinuousMarshalRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	env := NewMountainCarContinuous(Options{})
	env.Reset(rng)
	record(env, continuousActions[:3])
	state, _ := env.MarshalBinary()
	want := record(env, continuousActions)
	restored := NewMountainCarContinuous(Options{})
	if err := restored.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	sameRecords(t, record(restored, continuousActions), want)

	// A state saved right after Reset keeps the float64 initial position.
	env.Reset(rng)
	fresh, _ := env.MarshalBinary()
	if err := restored.UnmarshalBinary(fresh); err != nil || restored.pos != env.pos {
		t.Fatalf("restored reset position %v (err %v), want %v", restored.pos, err, env.pos)
	}

	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"trailing", append(append([]byte(nil), state...), 7), "trailing"},
		{"other limit", mustMarshal(t, NewMountainCarContinuous(Options{MaxEpisodeSteps: 5})), "step limit 5"},
		{"other kind", mustMarshal(t, NewPendulum(Options{})), `"pendulum"`},
	} {
		err := NewMountainCarContinuous(Options{}).UnmarshalBinary(tc.data)
		if err == nil || !strings.HasPrefix(err.Error(), "mountaincar_continuous: unmarshal state: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want a mountaincar_continuous unmarshal error mentioning %s", tc.name, err, tc.want)
		}
	}
}
