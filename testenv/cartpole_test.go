package testenv

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// startedCartPole returns a CartPole positioned at state s as if Reset had
// produced it.
func startedCartPole(s [4]float64) *CartPole {
	c := NewCartPole(Options{})
	c.state, c.started = s, true
	return c
}

func TestCartPoleStepFromRestByHand(t *testing.T) {
	// State 0, action 1 (F = +10). With m_p l = 0.05, m = 1.1:
	//   temp = (10 + 0)/1.1 = 100/11
	//   θ̈ = (0 − 1·100/11) / (0.5·(4/3 − 0.1/1.1)) = −(100/11)/(0.5·41/33) = −(100/11)(66/41) = −600/41
	//   ẍ = 100/11 − 0.05·(−600/41)/1.1 = 100/11 + 300/451 = 4400/451 = 400/41
	// Euler: x = 0, ẋ = 0.02·400/41 = 8/41, θ = 0, θ̇ = 0.02·(−600/41) = −12/41.
	c := startedCartPole([4]float64{})
	obs, reward, term, trunc := c.Step([]float64{1})
	want := [4]float64{0, 8.0 / 41, 0, -12.0 / 41}
	for i := range want {
		// The fractions above are rounded once; the code takes ~10
		// float64 steps on values of order 10: 1e-14 absolute.
		if math.Abs(c.state[i]-want[i]) > 1e-14 {
			t.Errorf("state[%d] = %.17g, want %.17g", i, c.state[i], want[i])
		}
		if obs[i] != float64(float32(c.state[i])) {
			t.Errorf("obs[%d] = %v, want the state rounded to float32 (%v)", i, obs[i], float32(c.state[i]))
		}
	}
	if reward != 1 || term || trunc {
		t.Errorf("reward %v terminated %v truncated %v, want 1 false false", reward, term, trunc)
	}
}

func TestCartPoleStepByHand(t *testing.T) {
	// State (x, ẋ, θ, θ̇) = (0.1, 0.2, 0.05, −0.3), action 0 (F = −10).
	//   cos 0.05 = 0.99875026039496627, sin 0.05 = 0.049979169270678331
	//   temp = (−10 + 0.05·0.09·0.0499791693) / 1.1 = (−10 + 0.000224906262)/1.1
	//        = −9.99977509374 / 1.1 = −9.09070463067
	//   θ̈ numerator   = 9.8·0.0499791693 − 0.99875026·(−9.09070463) = 0.489795859 + 9.079343617 = 9.569139476
	//   θ̈ denominator = 0.5·(4/3 − 0.1·0.99750156/1.1) = 0.5·(1.333333333 − 0.090682008) = 0.621325663
	//   θ̈ = 9.569139476 / 0.621325663 = 15.40116568
	//   ẍ = −9.09070463 − 0.05·15.40116568·0.99875026/1.1 = −9.09070463 − 0.69917810 = −9.78988273
	// Euler (old velocities move the positions):
	//   x = 0.1 + 0.02·0.2 = 0.104           ẋ = 0.2 + 0.02·(−9.78988273) = 0.0042023454
	//   θ = 0.05 + 0.02·(−0.3) = 0.044       θ̇ = −0.3 + 0.02·15.40116568 = 0.0080233136
	c := startedCartPole([4]float64{0.1, 0.2, 0.05, -0.3})
	_, reward, term, _ := c.Step([]float64{0})
	want := [4]float64{0.104, 0.0042023454, 0.044, 0.0080233136}
	for i := range want {
		// The hand values carry 8-10 significant digits: 5e-10 absolute.
		if math.Abs(c.state[i]-want[i]) > 5e-10 {
			t.Errorf("state[%d] = %.12g, want %.12g", i, c.state[i], want[i])
		}
	}
	if reward != 1 || term {
		t.Errorf("reward %v terminated %v, want 1 false", reward, term)
	}
}

func TestCartPoleTermination(t *testing.T) {
	// θ threshold = 12·2π/360 = 0.2094395102. One Euler step moves x by
	// 0.02·ẋ and θ by 0.02·θ̇, so:
	cases := []struct {
		name  string
		state [4]float64
		term  bool
	}{
		{"x right", [4]float64{2.39, 1, 0, 0}, true},     // x = 2.39 + 0.02 = 2.41 > 2.4
		{"x left", [4]float64{-2.39, -1, 0, 0}, true},    // x = −2.41 < −2.4
		{"x inside", [4]float64{2.39, 0.4, 0, 0}, false}, // x = 2.398
		{"θ right", [4]float64{0, 0, 0.2, 0.5}, true},    // θ = 0.21 > 0.20944
		{"θ left", [4]float64{0, 0, -0.2, -0.5}, true},   // θ = −0.21
		{"θ inside", [4]float64{0, 0, 0.2, 0.4}, false},  // θ = 0.208 < 0.20944
		{"θ inside left", [4]float64{0, 0, -0.2, -0.4}, false},
	}
	for _, tc := range cases {
		c := startedCartPole(tc.state)
		_, reward, term, trunc := c.Step([]float64{1})
		if term != tc.term || reward != 1 || trunc {
			t.Errorf("%s: terminated %v reward %v truncated %v, want %v 1 false", tc.name, term, reward, trunc, tc.term)
		}
		if tc.term {
			// Gymnasium pays 0 for steps taken after termination.
			if _, r, term2, _ := c.Step([]float64{1}); r != 0 || !term2 {
				t.Errorf("%s: step after termination gave reward %v terminated %v, want 0 true", tc.name, r, term2)
			}
		}
	}
}

func TestCartPoleTruncation(t *testing.T) {
	for _, tc := range []struct {
		opts  Options
		limit int
	}{{Options{}, 500}, {Options{MaxEpisodeSteps: 10}, 10}} {
		c := NewCartPole(tc.opts)
		c.Reset(rand.New(rand.NewPCG(1, 2)))
		for step := 1; step <= tc.limit; step++ {
			c.state = [4]float64{} // hold the pole upright so only the limit can end it
			_, _, term, trunc := c.Step([]float64{float64(step % 2)})
			if term {
				t.Fatalf("limit %d: terminated at step %d", tc.limit, step)
			}
			if trunc != (step == tc.limit) {
				t.Fatalf("limit %d: truncated = %v at step %d", tc.limit, trunc, step)
			}
		}
	}
}

// stepRecord is everything Step returns, for bit-exact comparison.
type stepRecord struct {
	obs         []float64
	reward      float64
	term, trunc bool
}

func record(env Env, actions []float64) []stepRecord {
	var out []stepRecord
	for _, a := range actions {
		o, r, te, tr := env.Step([]float64{a})
		out = append(out, stepRecord{o, r, te, tr})
	}
	return out
}

func sameRecords(t *testing.T, got, want []stepRecord) {
	t.Helper()
	for i := range want {
		g, w := got[i], want[i]
		if g.reward != w.reward || g.term != w.term || g.trunc != w.trunc || len(g.obs) != len(w.obs) {
			t.Fatalf("step %d: got %+v, want %+v", i, g, w)
		}
		for j := range w.obs {
			if math.Float64bits(g.obs[j]) != math.Float64bits(w.obs[j]) {
				t.Fatalf("step %d obs[%d]: got %v, want bit-identical %v", i, j, g.obs[j], w.obs[j])
			}
		}
	}
}

func TestCartPoleMarshalRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	env, err := Make(KindCartPole, Options{})
	if err != nil {
		t.Fatal(err)
	}
	env.Reset(rng)
	record(env, []float64{1, 0, 1, 1, 0})
	state, err := env.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	actions := []float64{0, 0, 1, 0, 1, 1, 1, 0}
	want := record(env, actions)

	restored, _ := Make(KindCartPole, Options{})
	if err := restored.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	sameRecords(t, record(restored, actions), want)

	// The step count travels too: a limit of 10 truncates 5 steps after
	// a state saved at step 5.
	short := NewCartPole(Options{MaxEpisodeSteps: 10})
	short.Reset(rng)
	for i := 0; i < 5; i++ {
		short.state = [4]float64{}
		short.Step([]float64{0})
	}
	b, _ := short.MarshalBinary()
	again := NewCartPole(Options{MaxEpisodeSteps: 10})
	if err := again.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		again.state = [4]float64{}
		if _, _, _, trunc := again.Step([]float64{0}); trunc != (i == 5) {
			t.Fatalf("restored env truncated = %v after %d more steps", trunc, i)
		}
	}
}

func TestCartPoleUnmarshalErrors(t *testing.T) {
	c := NewCartPole(Options{})
	c.Reset(rand.New(rand.NewPCG(5, 6)))
	good, _ := c.MarshalBinary()
	acro, _ := NewAcrobot(Options{}).MarshalBinary()
	other, _ := NewCartPole(Options{MaxEpisodeSteps: 7}).MarshalBinary()
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", good[:len(good)-3], "truncated"},
		{"trailing", append(append([]byte(nil), good...), 0), "trailing"},
		{"other kind", acro, `"acrobot"`},
		{"other limit", other, "step limit 7"},
		{"empty", nil, "truncated"},
	} {
		err := NewCartPole(Options{}).UnmarshalBinary(tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "cartpole: unmarshal state: ") {
			t.Errorf("%s: err = %v, want a cartpole unmarshal error mentioning %s", tc.name, err, tc.want)
		}
	}
}

func TestCartPoleRandomPolicyReturn(t *testing.T) {
	// A uniformly random policy keeps CartPole up for about 22 steps on
	// average (episode lengths have std ≈ 12, so over 2000 episodes the mean
	// has std ≈ 0.27; five seeds gave 22.2-22.6). [20.5, 24.5] is > 6 std
	// wide on each side yet excludes gross dynamics errors: using the full
	// pole length 1.0 instead of the half length 0.5 gives ≈ 32.8.
	rng := rand.New(rand.NewPCG(7, 8))
	env, _ := Make(KindCartPole, Options{})
	const episodes = 2000
	total := 0.0
	for ep := 0; ep < episodes; ep++ {
		obs := env.Reset(rng)
		for i, v := range obs {
			if math.Abs(v) >= 0.05 {
				t.Fatalf("reset obs[%d] = %v, want within (−0.05, 0.05)", i, v)
			}
		}
		for {
			_, r, term, trunc := env.Step([]float64{float64(rng.IntN(2))})
			total += r
			if term || trunc {
				break
			}
		}
	}
	if mean := total / episodes; mean < 20.5 || mean > 24.5 {
		t.Errorf("random policy mean return %.2f, want ≈ 22", mean)
	}
}

func TestCartPoleMisuse(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func()
	}{
		{"step before reset", func() { NewCartPole(Options{}).Step([]float64{0}) }},
		{"action 2", func() { startedCartPole([4]float64{}).Step([]float64{2}) }},
		{"action 0.5", func() { startedCartPole([4]float64{}).Step([]float64{0.5}) }},
		{"two values", func() { startedCartPole([4]float64{}).Step([]float64{0, 1}) }},
	} {
		func() {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || !strings.HasPrefix(s, "testenv: cartpole: ") {
					t.Errorf("%s: recovered %v, want a testenv: cartpole: panic", tc.name, r)
				}
			}()
			tc.run()
		}()
	}
}
