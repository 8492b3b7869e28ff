package testenv

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func startedPendulum(theta, thetaDot float64) *Pendulum {
	p := NewPendulum(Options{})
	p.theta, p.thetaDot, p.started = theta, thetaDot, true
	return p
}

func TestPendulumStepByHand(t *testing.T) {
	// With g = 10, m = l = 1, dt = 0.05: θ̇' = θ̇ + (15 sin θ + 3u)·0.05, θ' = θ + 0.05 θ̇'.
	cases := []struct {
		name               string
		theta, thetaDot, u float64
		wantTheta, wantDot float64
		wantReward         float64
	}{
		{
			// Upright at rest, u = 2: cost = 0 + 0 + 0.001·4 = 0.004;
			// θ̇' = (0 + 6)·0.05 = 0.3, θ' = 0.015.
			"upright push", 0, 0, 2, 0.015, 0.3, -0.004,
		},
		{
			// θ = π/2, θ̇ = 1, u = −1: cost = (π/2)² + 0.1 + 0.001 = 2.4674011003 + 0.101 = 2.5684011003;
			// θ̇' = 1 + (15 − 3)·0.05 = 1.6, θ' = π/2 + 0.08 = 1.6507963268.
			"horizontal", math.Pi / 2, 1, -1, math.Pi/2 + 0.08, 1.6, -((math.Pi/2)*(math.Pi/2) + 0.101),
		},
		{
			// Torque and speed clipping: u = 5 → 2, θ̇ = 7.9: cost = (π/2)² + 0.1·62.41 + 0.001·4
			// = 2.4674011003 + 6.241 + 0.004 = 8.7124011003 (the clipped torque is charged);
			// θ̇' = 7.9 + (15 + 6)·0.05 = 8.95 → 8, θ' = π/2 + 8·0.05 = π/2 + 0.4.
			"clip high", math.Pi / 2, 7.9, 5, math.Pi/2 + 0.4, 8, -((math.Pi/2)*(math.Pi/2) + 6.245),
		},
		{
			// The mirror image: u = −5 → −2, θ̇' = −8.95 → −8, θ' = −π/2 − 0.4.
			"clip low", -math.Pi / 2, -7.9, -5, -math.Pi/2 - 0.4, -8, -((math.Pi/2)*(math.Pi/2) + 6.245),
		},
		{
			// θ = 4 is charged through norm(4) = 4 − 2π = −2.2831853072, cost 5.2129351469;
			// θ̇' = 15 sin 4 · 0.05 = 0.75·(−0.7568024953) = −0.5676018715,
			// θ' = 4 − 0.0283800936 = 3.9716199064 (θ itself is not wrapped).
			"wrapped cost", 4, 0, 0, 3.9716199064259525, -0.5676018714809462, -5.212935146920741,
		},
	}
	for _, tc := range cases {
		p := startedPendulum(tc.theta, tc.thetaDot)
		obs, reward, term, trunc := p.Step([]float64{tc.u})
		// A handful of float64 operations on values of order 10: 1e-14
		// absolute; the wrapped case's wants carry 16 digits.
		const tol = 1e-14
		if math.Abs(p.theta-tc.wantTheta) > tol || math.Abs(p.thetaDot-tc.wantDot) > tol ||
			math.Abs(reward-tc.wantReward) > tol {
			t.Errorf("%s: θ %.17g θ̇ %.17g reward %.17g; want %.17g %.17g %.17g",
				tc.name, p.theta, p.thetaDot, reward, tc.wantTheta, tc.wantDot, tc.wantReward)
		}
		want := []float64{math.Cos(p.theta), math.Sin(p.theta), p.thetaDot}
		for i := range want {
			if obs[i] != float64(float32(want[i])) {
				t.Errorf("%s: obs[%d] = %v, want float32(%v)", tc.name, i, obs[i], want[i])
			}
		}
		if term || trunc {
			t.Errorf("%s: terminated %v truncated %v after one step", tc.name, term, trunc)
		}
	}
}

func TestAngleNormalize(t *testing.T) {
	// ((x + π) mod 2π) − π with a floored modulo: 4 → 4 − 2π, −4 → 2π − 4,
	// π → −π (the interval is half-open), −π stays, 7 → 7 − 2π.
	for _, c := range []struct{ x, want float64 }{
		{0, 0}, {1, 1}, {4, 4 - 2*math.Pi}, {-4, 2*math.Pi - 4}, {math.Pi, -math.Pi},
		{-math.Pi, -math.Pi}, {7, 7 - 2*math.Pi}, {-7, 2*math.Pi - 7},
	} {
		// One addition, one modulo and one subtraction on values below 10: 1e-14.
		if got := angleNormalize(c.x); math.Abs(got-c.want) > 1e-14 {
			t.Errorf("angleNormalize(%v) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
}

func TestPendulumResetAndTruncation(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	env, err := Make(KindPendulum, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp := env.ActionSpace()
	if env.ObsDim() != 3 || sp.N != 0 || sp.Dims() != 1 || sp.Low[0] != -2 || sp.High[0] != 2 {
		t.Fatalf("ObsDim %d, action space %+v; want 3 and one continuous dimension in [−2, 2]", env.ObsDim(), sp)
	}
	p := env.(*Pendulum)
	for ep := 0; ep < 50; ep++ {
		obs := env.Reset(rng)
		if p.theta < -math.Pi || p.theta >= math.Pi || p.thetaDot < -1 || p.thetaDot >= 1 {
			t.Fatalf("reset state (%v, %v) outside [−π, π) × [−1, 1)", p.theta, p.thetaDot)
		}
		// cos² + sin² of float32-rounded values: within 2·6e-8.
		if r := obs[0]*obs[0] + obs[1]*obs[1]; math.Abs(r-1) > 2e-7 || obs[2] != float64(float32(p.thetaDot)) {
			t.Fatalf("reset obs %v does not encode the state", obs)
		}
	}
	for step := 1; step <= 200; step++ {
		_, r, term, trunc := env.Step([]float64{2 * math.Sin(float64(step))})
		// The largest possible cost is π² + 0.1·64 + 0.001·4 = 16.2736044.
		if term || trunc != (step == 200) || r > 0 || r < -16.2736045 {
			t.Fatalf("step %d: reward %v terminated %v truncated %v", step, r, term, trunc)
		}
	}
}

// continuousActions is a fixed action sequence for round-trip tests.
var continuousActions = []float64{0.3, -1.7, 2.5, 0, -0.2, 1.1, -3, 0.9, 0.05, -0.6}

func TestPendulumMarshalRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	env := NewPendulum(Options{MaxEpisodeSteps: 15})
	env.Reset(rng)
	record(env, continuousActions[:4])
	state, err := env.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want := record(env, continuousActions)
	restored := NewPendulum(Options{MaxEpisodeSteps: 15})
	if err := restored.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	got := record(restored, continuousActions)
	sameRecords(t, got, want)
	// 4 + 10 steps taken; the step count travelled, so the 11th more step
	// (the 15th overall) truncates.
	if _, _, _, trunc := restored.Step([]float64{0}); !trunc {
		t.Error("restored pendulum did not truncate at its 15th step")
	}

	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", state[:len(state)-1], "truncated"},
		{"other limit", state, "step limit 15"},
		{"other kind", mustMarshal(t, NewAcrobot(Options{})), `"acrobot"`},
	} {
		err := NewPendulum(Options{}).UnmarshalBinary(tc.data)
		if err == nil || !strings.HasPrefix(err.Error(), "pendulum: unmarshal state: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want a pendulum unmarshal error mentioning %s", tc.name, err, tc.want)
		}
	}
}

func mustMarshal(t *testing.T, env Env) []byte {
	t.Helper()
	b, err := env.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestContinuousMisuse(t *testing.T) {
	for _, tc := range []struct {
		name, prefix string
		run          func()
	}{
		{"pendulum before reset", "testenv: pendulum: ", func() { NewPendulum(Options{}).Step([]float64{0}) }},
		{"pendulum two values", "testenv: pendulum: ", func() { startedPendulum(0, 0).Step([]float64{0, 1}) }},
		{"pendulum NaN", "testenv: pendulum: ", func() { startedPendulum(0, 0).Step([]float64{math.NaN()}) }},
		{"car before reset", "testenv: mountaincar_continuous: ", func() { NewMountainCarContinuous(Options{}).Step([]float64{0}) }},
		{"car no value", "testenv: mountaincar_continuous: ", func() { startedCar(0, 0).Step(nil) }},
		{"car Inf", "testenv: mountaincar_continuous: ", func() { startedCar(0, 0).Step([]float64{math.Inf(1)}) }},
	} {
		func() {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || !strings.HasPrefix(s, tc.prefix) {
					t.Errorf("%s: recovered %v, want a %q panic", tc.name, r, tc.prefix)
				}
			}()
			tc.run()
		}()
	}
}
