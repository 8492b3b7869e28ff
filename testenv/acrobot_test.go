package testenv

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func startedAcrobot(s [4]float64) *Acrobot {
	a := NewAcrobot(Options{})
	a.state, a.started = s, true
	return a
}

// cos(±π/2) in float64 is 6.1e-17, not 0, so terms like φ1 = 14.7·cos(θ1 − π/2)
// at θ1 = 0 leave residues of ~1e-15. The hand values below treat them as
// 0, so comparisons allow derivTol = 1e-13.
const derivTol = 1e-13

func TestAcrobotDerivativesByHand(t *testing.T) {
	cases := []struct {
		name  string
		state [4]float64
		tau   float64
		want  [4]float64
	}{
		{
			// At rest hanging down, torque +1:
			//   d1 = 0.25 + (1 + 0.25 + 1·cos 0) + 1 + 1 = 4.5,  d2 = (0.25 + 0.5) + 1 = 1.75
			//   φ2 = 4.9·cos(−π/2) = 0,  φ1 = 14.7·cos(−π/2) + φ2 = 0
			//   θ̈2 = (1 + 0 − 0 − 0)/(0.25 + 1 − 1.75²/4.5) = 1/(1.25 − 0.680556) = 1/(41/72) = 72/41
			//   θ̈1 = −(1.75·72/41 + 0)/4.5 = −28/41
			"rest, torque +1", [4]float64{0, 0, 0, 0}, 1, [4]float64{0, 0, -28.0 / 41, 72.0 / 41},
		},
		{
			// Link 1 horizontal (θ1 = π/2), θ2 = 0, at rest, no torque:
			//   d1 = 4.5, d2 = 1.75, φ2 = 4.9·cos(0) = 4.9, φ1 = 14.7·cos(0) + 4.9 = 19.6
			//   θ̈2 = (1.75/4.5·19.6 − 4.9)/(41/72) = (7.62222 − 4.9)·72/41 = (49/18)(72/41) = 196/41
			//   θ̈1 = −(1.75·196/41 + 19.6)/4.5 = −(343/41 + 803.6/41)/4.5 = −254.8/41
			"horizontal", [4]float64{math.Pi / 2, 0, 0, 0}, 0, [4]float64{0, 0, -254.8 / 41, 196.0 / 41},
		},
		{
			// θ1 = 0, θ2 = π/2 (link 2 horizontal), θ̇1 = 1, θ̇2 = 0, no torque;
			// exercises the velocity terms (sin θ2 = 1, cos θ2 = 0):
			//   d1 = 0.25 + 1.25 + 2 = 3.5,  d2 = 0.25 + 1 = 1.25
			//   φ2 = 4.9·cos(0) = 4.9,  φ1 = −0.5·0 − 1·0·1 + 14.7·cos(−π/2) + 4.9 = 4.9
			//   θ̈2 = (1.25/3.5·4.9 − 0.5·1²·1 − 4.9)/(1.25 − 1.5625/3.5)
			//       = (1.75 − 0.5 − 4.9)/(45/56) = −3.65·56/45 = −204.4/45
			//   θ̈1 = −(1.25·(−204.4/45) + 4.9)/3.5 = −(−5.677778 + 4.9)/3.5 = (7/9)/3.5 = 2/9
			"velocity terms", [4]float64{0, math.Pi / 2, 1, 0}, 0, [4]float64{1, 0, 2.0 / 9, -204.4 / 45},
		},
	}
	for _, tc := range cases {
		got := acrobotDerivs(tc.state, tc.tau)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > derivTol*math.Max(1, math.Abs(tc.want[i])) {
				t.Errorf("%s: deriv[%d] = %.17g, want %.17g", tc.name, i, got[i], tc.want[i])
			}
		}
	}
}

func TestRK4MatchesTaylorOnLinearODE(t *testing.T) {
	// For y' = y one RK4 step of size h multiplies y by the 4th-order Taylor
	// polynomial of e^h: 1 + h + h²/2 + h³/6 + h⁴/24; h = 0.2 gives
	// 1 + 0.2 + 0.02 + 0.0013333… + 0.0000666… = 1.2214.
	y := [4]float64{1, 2, -1, 0.5}
	got := rk4(func(s [4]float64) [4]float64 { return s }, y, 0.2)
	for i := range y {
		// A dozen roundings of values ≤ 2.5: 1e-15.
		if want := 1.2214 * y[i]; math.Abs(got[i]-want) > 1e-15 {
			t.Errorf("rk4 y[%d] = %.17g, want %.17g", i, got[i], want)
		}
	}
}

func TestWrapAndBound(t *testing.T) {
	// wrap adds or subtracts 2π until inside [−π, π]: 4 − 2π = −2.2831853,
	// −7 + 2π = −0.7168147, 10 − 4π = −2.5663706.
	for _, c := range []struct{ x, want float64 }{
		{4, 4 - 2*math.Pi}, {-7, -7 + 2*math.Pi}, {10, 10 - 4*math.Pi}, {1, 1}, {math.Pi, math.Pi},
	} {
		if got := wrap(c.x, -math.Pi, math.Pi); math.Abs(got-c.want) > 1e-15*math.Max(1, math.Abs(c.x)) {
			t.Errorf("wrap(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if bound(20, -4*math.Pi, 4*math.Pi) != 4*math.Pi || bound(-1, 0, 2) != 0 || bound(1, 0, 2) != 1 {
		t.Error("bound does not clip to [lo, hi]")
	}
}

func TestAcrobotStepFromRest(t *testing.T) {
	// From rest with torque +1 the accelerations are θ̈ = (−28/41, 72/41).
	// At rest the jerk is 0 (every term of θ̈ that changes at first order
	// is multiplied by a velocity), so over h = 0.2
	//   θ ≈ ½ θ̈ h² = (−0.0136585, 0.0351220),  θ̇ ≈ θ̈ h = (−0.136585, 0.351220)
	// with remainders of order snap·h⁴/24 ≈ 17·0.0016/24 ≈ 1.2e-3 for angles and
	// snap·h³/6 ≈ 17·0.008/6 ≈ 0.023 for velocities (snap ≈ gravity
	// stiffness ~10 times θ̈). Tolerances: 2e-3 and 3e-2.
	a := startedAcrobot([4]float64{})
	obs, reward, term, trunc := a.Step([]float64{2})
	want := [4]float64{-0.0136585, 0.0351220, -0.136585, 0.351220}
	tol := [4]float64{2e-3, 2e-3, 3e-2, 3e-2}
	for i := range want {
		if math.Abs(a.state[i]-want[i]) > tol[i] {
			t.Errorf("state[%d] = %.6g, want %.6g ± %g", i, a.state[i], want[i], tol[i])
		}
	}
	if reward != -1 || term || trunc {
		t.Errorf("reward %v terminated %v truncated %v, want -1 false false", reward, term, trunc)
	}
	// Observation = (cos θ1, sin θ1, cos θ2, sin θ2, θ̇1, θ̇2) at float32 precision.
	s := a.state
	wantObs := []float64{math.Cos(s[0]), math.Sin(s[0]), math.Cos(s[1]), math.Sin(s[1]), s[2], s[3]}
	for i, v := range wantObs {
		if obs[i] != float64(float32(v)) {
			t.Errorf("obs[%d] = %v, want %v", i, obs[i], float32(v))
		}
	}

	// Torque −1 mirrors torque +1 exactly (the dynamics are odd in the
	// state and the torque about the hanging equilibrium, up to the ~1e-16
	// cos(π/2) residue).
	b := startedAcrobot([4]float64{})
	b.Step([]float64{0})
	for i := range a.state {
		if math.Abs(a.state[i]+b.state[i]) > 1e-13 {
			t.Errorf("state[%d]: torque +1 gives %v, torque −1 gives %v; want opposite", i, a.state[i], b.state[i])
		}
	}
}

func TestAcrobotTermination(t *testing.T) {
	// The tip height −cos θ1 − cos(θ1 + θ2) with θ2 = 0 is −2 cos θ1; it equals
	// 1 at θ1 = 2π/3. Slightly beyond terminates, slightly before does not.
	if !startedAcrobot([4]float64{2*math.Pi/3 + 0.01, 0, 0, 0}).terminal() {
		t.Error("θ1 = 2π/3 + 0.01 (height 1.017) not terminal")
	}
	if startedAcrobot([4]float64{2*math.Pi/3 - 0.01, 0, 0, 0}).terminal() {
		t.Error("θ1 = 2π/3 − 0.01 (height 0.983) terminal")
	}
	// Pointing straight up (height 2) terminates with reward 0 after a step.
	a := startedAcrobot([4]float64{math.Pi, 0, 0, 0})
	if _, reward, term, _ := a.Step([]float64{1}); !term || reward != 0 {
		t.Errorf("upright: terminated %v reward %v, want true 0", term, reward)
	}
	// From violent velocities the angles stay wrapped into [−π, π] and the
	// velocities clipped to ±4π and ±9π.
	b := startedAcrobot([4]float64{math.Pi - 1e-9, 0, 100, -100})
	for i := 0; i < 5; i++ {
		b.Step([]float64{1})
		s := b.state
		if math.Abs(s[0]) > math.Pi || math.Abs(s[1]) > math.Pi || math.Abs(s[2]) > 4*math.Pi || math.Abs(s[3]) > 9*math.Pi {
			t.Fatalf("state %v out of [−π, π]² × [−4π, 4π] × [−9π, 9π]", s)
		}
	}
}

func TestAcrobotTruncationAndReturn(t *testing.T) {
	// Zero torque from a Reset state near the bottom never reaches the bar:
	// 500 steps of reward −1, truncated exactly at the 500th.
	env, _ := Make(KindAcrobot, Options{})
	obs := env.Reset(rand.New(rand.NewPCG(1, 1)))
	if len(obs) != 6 || env.ObsDim() != 6 || env.ActionSpace().N != 3 {
		t.Fatalf("obs %v, ObsDim %d, actions %d; want 6, 6, 3", obs, env.ObsDim(), env.ActionSpace().N)
	}
	total := 0.0
	for step := 1; step <= 500; step++ {
		_, r, term, trunc := env.Step([]float64{1})
		total += r
		if term || trunc != (step == 500) {
			t.Fatalf("step %d: terminated %v truncated %v", step, term, trunc)
		}
	}
	if total != -500 {
		t.Errorf("return %v, want -500", total)
	}
}

func TestAcrobotResetAndRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	a := NewAcrobot(Options{})
	a.Reset(rng)
	for i, v := range a.state {
		if math.Abs(v) >= 0.1 || v != float64(float32(v)) {
			t.Fatalf("reset state[%d] = %v, want a float32 value in (−0.1, 0.1)", i, v)
		}
	}
	actions := []float64{0, 2, 2, 1, 0, 2, 0, 0, 2, 1}
	record(a, actions)
	state, _ := a.MarshalBinary()
	want := record(a, actions)
	b := NewAcrobot(Options{})
	if err := b.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	sameRecords(t, record(b, actions), want)

	cp, _ := NewCartPole(Options{}).MarshalBinary()
	if err := b.UnmarshalBinary(cp); err == nil || !strings.Contains(err.Error(), `"cartpole"`) {
		t.Errorf("loading a cartpole state: err = %v, want a kind mismatch", err)
	}
}
