package vla

import (
	"cmp"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	cases := []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Dim, c.Heads = 100, 3 }, "dim 100 is not divisible by heads 3"},
		{func(c *Config) { c.Patch = 7 }, "patch 7 does not divide the image size 64"},
		{func(c *Config) { c.VocabSize = 1200 }, "vocabulary size 1200 is too small for 1000 words + 2 specials + 256 action bins = 1258"},
		{func(c *Config) { c.Layers = 0 }, "layers must be positive, got 0"},
	}
	for _, tc := range cases {
		c := DefaultConfig()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
		}
	}
}

func TestParamCountMatchesLayout(t *testing.T) {
	c := DefaultConfig()
	d, hid, pd := c.Dim, c.MLPRatio*c.Dim, c.Patch*c.Patch*3
	block := 2*d + 3*d*d + 3*d + d*d + d + 2*d + hid*d + hid + d*hid + d
	want := c.Cameras*(d*pd+d+c.PatchesPerCamera()*d) + c.Cameras*d + c.VocabSize*d +
		(c.MaxInstr+1+c.ActionDims)*d + d*c.ProprioDim + d + c.Layers*block + 2*d + d + 1 + c.VocabSize*d
	if got := c.ParamCount(); got != want {
		t.Fatalf("ParamCount = %d, want %d", got, want)
	}
	if got, want := c.TrainableCount(), want-(c.VocabSize-c.Bins)*d; got != want {
		t.Fatalf("slim TrainableCount = %d, want %d", got, want)
	}
	c.SlimHead = false
	if c.TrainableCount() != c.ParamCount() {
		t.Fatalf("full head: TrainableCount %d != ParamCount %d", c.TrainableCount(), c.ParamCount())
	}
}

func TestActionTokensRoundTrip(t *testing.T) {
	c := DefaultConfig()
	low := []float64{-1, -1, -1, -1, -1, -1, -1}
	high := []float64{1, 1, 1, 1, 1, 1, 1}
	a := []float64{-1, -0.999, 0, 0.5, 1, 2, math.NaN()}
	tk := c.ActionToTokens(a, low, high)
	want := []int{0, 0, 128, 192, 255, 255, 0}
	for i := range want {
		if tk[i] != want[i] {
			t.Fatalf("ActionToTokens(%v) = %v, want %v", a, tk, want)
		}
	}
	back := c.TokensToAction(tk, low, high)
	// Bin centres −1 + (b + ½)·2/256; within half a bin (1/256) of the
	// in-range inputs.
	for i := 0; i < 5; i++ {
		if math.Abs(back[i]-a[i]) > 1.0/256+1e-12 {
			t.Errorf("dimension %d: %v → token %d → %v, more than half a bin away", i, a[i], tk[i], back[i])
		}
	}
	if back[2] != -1+128.5*2/256 {
		t.Errorf("centre of bin 128 = %v, want %v", back[2], -1+128.5*2/256)
	}
}

// TestKVCacheMatchesTeacherForcing decodes with the KV cache and rescores
// the decoded tokens with the teacher-forced pass: every position's whole
// log-softmax row and the values must agree.
func TestKVCacheMatchesTeacherForcing(t *testing.T) {
	for _, slim := range []bool{true, false} {
		c := tinyConfig(slim)
		c.Layers, c.ActionDims = 2, 5
		rng := rand.New(rand.NewPCG(11, 12))
		m64 := NewNet[float64](c, rng)
		perturb(m64.Params(), 0.5, rng)
		m32 := NewNet[float32](c, rng)
		for i, v := range m64.Params() {
			m32.Params()[i] = float32(v)
		}
		batch := randObs(rng, c, 4)
		// float64: the cached and the full pass sum the same terms in
		// different orders, so they agree to a few ulps of values of order
		// 1-10: 1e-12. float32: ε32 = 6e-8 times the same amplification
		// (≲ 100 through 2 layers and the log-softmax): 1e-5 on log-probs
		// of order 1-3.
		checkKV(t, m64, batch, rand.New(rand.NewPCG(1, 1)), 1e-12)
		checkKV(t, m32, batch, rand.New(rand.NewPCG(1, 1)), 1e-5)
	}
}

func checkKV[F Float](t *testing.T, m *Net[F], batch []Obs, rng *rand.Rand, tol float64) {
	t.Helper()
	c := m.Config()
	k := m.headWidth()
	rows := make([][]F, c.ActionDims)
	tokens, logp, value := m.act(batch, rng, nil, DecodeSample, func(j int, lp []F) { rows[j] = append([]F(nil), lp...) })
	tape := m.Forward(batch, tokens)
	worst := 0.0
	for i := range batch {
		for j := 0; j < c.ActionDims; j++ {
			r := i*c.ActionDims + j
			tf := tape.logp[r*k : (r+1)*k]
			kv := rows[j][i*k : (i+1)*k]
			for q := range tf {
				worst = math.Max(worst, math.Abs(float64(tf[q]-kv[q])))
			}
			worst = math.Max(worst, math.Abs(float64(tape.Logp[r]-logp[i][j])))
		}
		worst = math.Max(worst, math.Abs(float64(tape.Value[i]-value[i])))
	}
	t.Logf("slim=%v %T: KV cache vs teacher forcing: max |diff| %.3g", c.SlimHead, value[0], worst)
	if worst > tol {
		t.Errorf("slim=%v %T: KV-cache decode and teacher forcing differ by %.3g, want ≤ %g", c.SlimHead, value[0], worst, tol)
	}
	// Greedy decoding picks the teacher-forced argmax at every position.
	gt, _, _ := m.Act(batch, nil, true)
	gtape := m.Forward(batch, gt)
	for i := range batch {
		for j := 0; j < c.ActionDims; j++ {
			if gtape.Greedy[i*c.ActionDims+j] != gt[i][j] {
				t.Fatalf("greedy token %d of sample %d = %d, teacher-forced argmax %d", j, i, gt[i][j], gtape.Greedy[i*c.ActionDims+j])
			}
		}
	}
}

// TestSlimVersusFullHead: on the same parameters the slim head's logits are
// the full head's logits on the action-token rows (the same products), but
// the full softmax normalises over all V tokens, so each position's
// action-token log-probs are the slim ones shifted by log Z < 0, Z the full
// softmax's mass on the action tokens; and only the full head sends
// gradient to the other LM-head rows.
func TestSlimVersusFullHead(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	c := tinyConfig(true)
	slim := NewNet[float32](c, rng)
	perturb(slim.Params(), 0.5, rng)
	c.SlimHead = false
	full := NewNet[float32](c, rng)
	copy(full.Params(), slim.Params())
	h := randVec[float32](rng, 3*c.Dim, 1)
	ls, lf := make([]float32, 3*c.Bins), make([]float32, 3*c.VocabSize)
	slim.headLogits(h, 3, ls)
	full.headLogits(h, 3, lf)
	// The full head's logit columns follow its rows in the parameter
	// layout: the action tokens first (see headLogits).
	const base = 0
	for i := 0; i < 3; i++ {
		for b := 0; b < c.Bins; b++ {
			// The same gemm call on the same rows: bitwise equal.
			if ls[i*c.Bins+b] != lf[i*c.VocabSize+base+b] {
				t.Fatalf("row %d bin %d: slim logit %v, full logit %v", i, b, ls[i*c.Bins+b], lf[i*c.VocabSize+base+b])
			}
		}
	}
	batch := randObs(rng, c, 3)
	tokens := randTokens(rng, c, 3)
	ts, tf := slim.Forward(batch, tokens), full.Forward(batch, tokens)
	for r := range ts.Logp {
		ps := ts.logp[r*c.Bins : (r+1)*c.Bins]
		pf := tf.logp[r*c.VocabSize+base : r*c.VocabSize+base+c.Bins]
		z := 0.0
		for _, l := range pf {
			z += math.Exp(float64(l))
		}
		if !(z < 1) {
			t.Fatalf("position %d: full head puts mass %v on the action tokens, want < 1", r, z)
		}
		for b := range ps {
			// Log-softmax of the same logits, shifted by log Z, in float32:
			// a few ulps of values of order 1-5: 1e-5.
			if d := float64(pf[b]-ps[b]) - math.Log(z); math.Abs(d) > 1e-5 {
				t.Fatalf("position %d bin %d: full − slim log-prob = %v, want log Z = %v", r, b, pf[b]-ps[b], math.Log(z))
			}
		}
	}
	full.ZeroGrads()
	full.Backward(tf, randVec[float32](rng, len(tf.Logp), 1), nil, nil)
	rest := full.w.headRest.g
	nz := 0
	for _, g := range rest {
		if g != 0 {
			nz++
		}
	}
	if nz != len(rest) {
		t.Errorf("full head: %d of %d non-action LM-head gradients are non-zero, want all", nz, len(rest))
	}
	if len(slim.Grads()) != len(full.Grads())-len(rest) {
		t.Errorf("slim head has %d gradients, full %d; want the %d other rows fewer", len(slim.Grads()), len(full.Grads()), len(rest))
	}
}

// TestFloat32MatchesFloat64 ties the float32 model to the float64 mirror
// the gradient checks run on: same parameters, same outputs and gradients
// up to float32 rounding.
func TestFloat32MatchesFloat64(t *testing.T) {
	for _, slim := range []bool{true, false} {
		c := tinyConfig(slim)
		rng := rand.New(rand.NewPCG(15, 16))
		m64 := NewNet[float64](c, rng)
		perturb(m64.Params(), 0.3, rng)
		m32 := NewNet[float32](c, rng)
		for i, v := range m64.Params() {
			m32.Params()[i] = float32(v)
		}
		batch := randObs(rng, c, 3)
		tokens := randTokens(rng, c, 3)
		w := randVec[float64](rng, 3*c.ActionDims, 1)
		t64, t32 := m64.Forward(batch, tokens), m32.Forward(batch, tokens)
		m64.Backward(t64, w, w, []float64{1, -1, 0.5})
		w32 := make([]float32, len(w))
		for i, v := range w {
			w32[i] = float32(v)
		}
		m32.Backward(t32, w32, w32, []float32{1, -1, 0.5})
		// ε32 = 6e-8 per operation; through 2 blocks, layer norms and
		// softmaxes the relative error grows by ≲ 100: 1e-5 relative to the
		// largest output / gradient.
		cmp := func(name string, a []float64, b []float32) {
			scale := 0.0
			for _, v := range a {
				scale = math.Max(scale, math.Abs(v))
			}
			worst := 0.0
			for i := range a {
				worst = math.Max(worst, math.Abs(a[i]-float64(b[i])))
			}
			t.Logf("slim=%v %s: max |float32 − float64| %.3g, scale %.3g", slim, name, worst, scale)
			if worst > 1e-5*math.Max(1, scale) {
				t.Errorf("slim=%v %s: float32 and float64 differ by %.3g (scale %.3g)", slim, name, worst, scale)
			}
		}
		cmp("log-probs", t64.Logp, t32.Logp)
		cmp("entropies", t64.Entropy, t32.Entropy)
		cmp("values", t64.Value, t32.Value)
		cmp("gradients", m64.Grads(), m32.Grads())
	}
}

func TestSampleBinInverseCDF(t *testing.T) {
	// p = [¼, ½, ¼]: r < ¼ → 0, r < ¾ → 1, else 2; the same with the row
	// scaled by Z = ½ (a full head's action slice), which sampleBin
	// renormalises.
	for _, z := range []float64{1, 0.5} {
		lp := []float64{math.Log(0.25 * z), math.Log(0.5 * z), math.Log(0.25 * z)}
		for _, tc := range []struct {
			r    float64
			want int
		}{{0, 0}, {0.2, 0}, {0.3, 1}, {0.7, 1}, {0.8, 2}, {0.999999, 2}} {
			if got := sampleBin(lp, tc.r); got != tc.want {
				t.Errorf("Z=%v r=%v: bin %d, want %d", z, tc.r, got, tc.want)
			}
		}
	}
}

// TestTemperature: at temperature T every action position's distribution
// is softmax(z/T) of the T = 1 logits z, in Forward and in Act's KV-cache
// decode alike, and sampling draws from it; argmax decoding is unchanged.
func TestTemperature(t *testing.T) {
	c := tinyConfig(true)
	rng := rand.New(rand.NewPCG(31, 32))
	m := NewNet[float64](c, rng)
	perturb(m.Params(), 0.5, rng)
	batch := randObs(rng, c, 3)
	tokens := randTokens(rng, c, 3)
	k := m.headWidth()
	base := append([]float64(nil), m.Forward(batch, tokens).logp...)
	greedy, _, _ := m.Act(batch, nil, true)
	const temp = 0.5
	m.SetTemperature(temp)
	if got := m.Temperature(); got != temp {
		t.Fatalf("Temperature() = %v after SetTemperature(%v)", got, temp)
	}
	tape := m.Forward(batch, tokens)
	want := make([]float64, len(base))
	for r := 0; r*k < len(base); r++ {
		// log softmax(z/T) from the T = 1 log-probs: z = logp + const.
		row, out := base[r*k:(r+1)*k], want[r*k:(r+1)*k]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v/temp)
		}
		z := 0.0
		for _, v := range row {
			z += math.Exp(v/temp - mx)
		}
		for q, v := range row {
			out[q] = v/temp - mx - math.Log(z)
		}
	}
	for i := range want {
		// float64 log-softmaxes of logits of order 1-10: 1e-12 is a few ulps.
		if d := math.Abs(tape.logp[i] - want[i]); d > 1e-12 {
			t.Fatalf("tempered log-prob [%d] = %v, want log softmax(z/T) = %v", i, tape.logp[i], want[i])
		}
	}
	checkKV(t, m, batch, rand.New(rand.NewPCG(1, 1)), 1e-12)
	g2, _, _ := m.Act(batch, nil, true)
	for i := range g2 {
		for j := range g2[i] {
			if g2[i][j] != greedy[i][j] {
				t.Fatalf("greedy token %d of sample %d moved from %d to %d with the temperature", j, i, greedy[i][j], g2[i][j])
			}
		}
	}
	// Sharper at T < 1: the mean entropy falls.
	m.SetTemperature(1)
	h1 := mean(m.Forward(batch, tokens).Entropy)
	m.SetTemperature(temp)
	if h := mean(m.Forward(batch, tokens).Entropy); !(h < h1) {
		t.Errorf("mean entropy at T = %v is %.4f, not below T = 1's %.4f", temp, h, h1)
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SetTemperature(%v) did not panic", bad)
				}
			}()
			m.SetTemperature(bad)
		}()
	}
}

// ForwardIntoAt evaluates each sample at its own temperature: every row's log-probs,
// entropies and gradients are those of a net set to that temperature (SetTemperature, whose
// pass TestTemperature checks against log softmax(z/T) and the gradient checks cover), and
// a row at 0 is ForwardInto's bit for bit.
func TestForwardIntoAt(t *testing.T) {
	c := tinyConfig(true)
	rng := rand.New(rand.NewPCG(33, 34))
	m := NewNet[float64](c, rng)
	perturb(m.Params(), 0.5, rng)
	const own = 0.5
	m.SetTemperature(own)
	batch, tokens := randObs(rng, c, 3), randTokens(rng, c, 3)
	temps := []float64{0.25, 0, 2}
	na := c.ActionDims
	dLogp, dEnt := randVec[float64](rng, 3*na, 1), randVec[float64](rng, 3*na, 1)
	dVal := randVec[float64](rng, 3, 1)

	mixed := m.ForwardIntoAt(nil, batch, tokens, temps)
	m.ZeroGrads()
	m.Backward(mixed, dLogp, dEnt, dVal)
	got := append([]float64(nil), m.Grads()...)

	want := make([]float64, len(got))
	for i, temp := range temps {
		ref := NewNet[float64](c, rand.New(rand.NewPCG(1, 1)))
		copy(ref.Params(), m.Params())
		ref.SetTemperature(cmp.Or(temp, own))
		one := ref.Forward(batch[i:i+1], tokens[i:i+1])
		for k := range na {
			a, b := mixed.Logp[i*na+k], one.Logp[k]
			e, f := mixed.Entropy[i*na+k], one.Entropy[k]
			// float64: logits scaled by 1/T_own then by T_own/T_i, or by 1/T_i at once,
			// differ by a few ulps; 1e-12 on values of order 1-10.
			if math.Abs(a-b) > 1e-12 || math.Abs(e-f) > 1e-12 || temp == 0 && (a != b || e != f) {
				t.Fatalf("sample %d at T %v, position %d: log-prob %v entropy %v, a net at that temperature gives %v and %v", i, temp, k, a, e, b, f)
			}
		}
		ref.ZeroGrads()
		ref.Backward(one, dLogp[i*na:(i+1)*na], dEnt[i*na:(i+1)*na], dVal[i:i+1])
		for j, g := range ref.Grads() {
			want[j] += g
		}
	}
	for j := range got {
		// Sums of three per-sample gradients of order 1-100 (T = 0.25 scales by 4): 1e-9.
		if math.Abs(got[j]-want[j]) > 1e-9*(1+math.Abs(want[j])) {
			t.Fatalf("gradient %d%s = %v, the per-sample nets' sum is %v", j, "", got[j], want[j])
		}
	}
	// ForwardInto after it evaluates every row at the net's own temperature again.
	plain := m.ForwardInto(mixed, batch, tokens)
	ref := NewNet[float64](c, rand.New(rand.NewPCG(1, 1)))
	copy(ref.Params(), m.Params())
	ref.SetTemperature(own)
	for k, v := range ref.Forward(batch, tokens).Logp {
		if plain.Logp[k] != v {
			t.Fatalf("ForwardInto after ForwardIntoAt: log-prob %d = %v, want %v", k, plain.Logp[k], v)
		}
	}
	for _, bad := range [][]float64{{1, 1}, {1, -1, 1}, {math.NaN(), 1, 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ForwardIntoAt with temperatures %v did not panic", bad)
				}
			}()
			m.ForwardIntoAt(nil, batch, tokens, bad)
		}()
	}
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
