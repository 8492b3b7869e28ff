package testenv

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLognormalMedianAndMean(t *testing.T) {
	const (
		n     = 20000
		sigma = 0.5
	)
	l := Latency{Kind: LatencyLognormal, Median: 5 * time.Millisecond, Sigma: sigma}
	s := l.ForWorker(0, 1, 42)
	// Analytic mean: 5 ms · exp(0.125) = 5.6657 ms.
	if want := time.Duration(5e6 * math.Exp(0.125)); s.Mean() != want {
		t.Fatalf("Mean() = %v, want %v", s.Mean(), want)
	}
	d := make([]float64, n)
	sum := 0.0
	for i := range d {
		d[i] = float64(s.Next())
		sum += d[i]
	}
	slices.Sort(d)
	median := (d[n/2-1] + d[n/2]) / 2
	mean := sum / n

	// The sample median of a lognormal has log-std ≈ sqrt(π/2)·σ/sqrt(n)
	// = 1.2533·0.5/141.4 = 0.00443; allow 4.5 std.
	if lr := math.Abs(math.Log(median / 5e6)); lr > 4.5*math.Sqrt(math.Pi/2)*sigma/math.Sqrt(n) {
		t.Errorf("sample median %v ms, want 5 ms (log error %.4f)", median/1e6, lr)
	}
	// The sample mean has relative std sqrt(exp(σ²) − 1)/sqrt(n) = 0.533/141.4
	// = 0.00377; allow 4.5 std.
	relStd := math.Sqrt(math.Exp(sigma*sigma)-1) / math.Sqrt(n)
	if rel := math.Abs(mean/float64(s.Mean()) - 1); rel > 4.5*relStd {
		t.Errorf("sample mean %v ms, want %v (relative error %.4f)", mean/1e6, s.Mean(), rel)
	}
}

func TestSlowWorkers(t *testing.T) {
	l := Latency{Kind: LatencyConstant, Median: 5 * time.Millisecond, SlowFraction: 0.3, SlowFactor: 4}
	// ceil(0.3·10) = 3 (0.3·10 is 3.0000000000000004 in float64).
	if got := l.NumSlow(10); got != 3 {
		t.Fatalf("NumSlow(10) = %d, want 3", got)
	}
	for w := 0; w < 10; w++ {
		s := l.ForWorker(w, 10, 1)
		want := 5 * time.Millisecond
		if w < 3 {
			want = 20 * time.Millisecond
		}
		if got := s.Next(); got != want || s.Mean() != want {
			t.Errorf("worker %d: Next %v Mean %v, want %v", w, got, s.Mean(), want)
		}
	}
	// ceil(0.25·10) = ceil(2.5) = 3; ceil(0.1·3) = 1; 0 → none; 1 → all.
	for _, c := range []struct {
		frac    float64
		workers int
		want    int
	}{{0.25, 10, 3}, {0.1, 3, 1}, {0, 8, 0}, {1, 8, 8}} {
		if got := (Latency{SlowFraction: c.frac, SlowFactor: 2}).NumSlow(c.workers); got != c.want {
			t.Errorf("NumSlow(%v of %d) = %d, want %d", c.frac, c.workers, got, c.want)
		}
	}
}

func TestLatencyDeterminism(t *testing.T) {
	l := Latency{Kind: LatencyLognormal, Median: time.Millisecond, Sigma: 1}
	a, b, c := l.ForWorker(2, 4, 9), l.ForWorker(2, 4, 9), l.ForWorker(3, 4, 9)
	same, differ := true, false
	for i := 0; i < 20; i++ {
		x, y, z := a.Next(), b.Next(), c.Next()
		same = same && x == y
		differ = differ || x != z
	}
	if !same || !differ {
		t.Errorf("same seed and worker equal: %v (want true); other worker differs: %v (want true)", same, differ)
	}
	if d := (Latency{}).ForWorker(0, 1, 0).Next(); d != 0 {
		t.Errorf("zero Latency gave delay %v, want 0", d)
	}
}

func TestWithLatencySleepsSampledDurations(t *testing.T) {
	l := Latency{Kind: LatencyLognormal, Median: 2 * time.Millisecond, Sigma: 0.8, SlowFraction: 0.5, SlowFactor: 3}
	var slept []time.Duration
	fake := func(d time.Duration) { slept = append(slept, d) }
	env := WithLatency(NewCartPole(Options{}), l.ForWorker(0, 2, 7), fake)
	twin := l.ForWorker(0, 2, 7) // same stream: predicts the delays

	rng := rand.New(rand.NewPCG(1, 1))
	env.Reset(rng)
	if len(slept) != 0 {
		t.Fatalf("Reset slept %v, want no delay", slept)
	}
	for i := 0; i < 5; i++ {
		env.Step([]float64{float64(i % 2)})
	}
	if len(slept) != 5 {
		t.Fatalf("5 steps slept %d times", len(slept))
	}
	for i, d := range slept {
		if want := twin.Next(); d != want {
			t.Errorf("sleep %d = %v, want %v", i, d, want)
		}
	}

	// Marshal includes the delay stream: a restored copy repeats both the
	// transitions and the delays.
	state, err := env.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	slept = nil
	actions := []float64{1, 0, 0, 1}
	want := record(env, actions)
	wantSlept := slices.Clone(slept)

	var slept2 []time.Duration
	restored := WithLatency(NewCartPole(Options{}), l.ForWorker(0, 2, 99), func(d time.Duration) { slept2 = append(slept2, d) })
	if err := restored.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	sameRecords(t, record(restored, actions), want)
	if !slices.Equal(slept2, wantSlept) {
		t.Errorf("restored delays %v, want %v", slept2, wantSlept)
	}

	// A truncated state is rejected with the wrapper's error prefix.
	if err := restored.UnmarshalBinary(state[:len(state)-1]); err == nil || !strings.HasPrefix(err.Error(), "latency env: unmarshal state") {
		t.Errorf("truncated state: err = %v", err)
	}
}

func TestLatencyValidate(t *testing.T) {
	for _, ok := range []Latency{{}, {Kind: LatencyNone}, {Kind: LatencyConstant, Median: time.Millisecond},
		{Kind: LatencyLognormal, Median: time.Millisecond, Sigma: 1, SlowFraction: 0.2, SlowFactor: 5}} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
	bad := Latency{Kind: "pareto", Median: -1, Sigma: -1, SlowFraction: 2, SlowFactor: 0.5}
	err := bad.Validate()
	if err == nil {
		t.Fatal("invalid latency accepted")
	}
	for _, want := range []string{`"pareto"`, "median", "sigma", "slow fraction", "slow factor"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}
