package testenv

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Latency kinds.
const (
	LatencyNone      = "none"      // no delay (the zero Kind "" means the same)
	LatencyConstant  = "constant"  // every step takes Median
	LatencyLognormal = "lognormal" // Median·exp(Sigma·Z), Z ~ N(0, 1): a heavy right tail
)

// Latency models the wall time of one step of an external physics simulator.
// MuJoCo-class simulators run at about 200 Hz or less per instance (the
// AcceRL article's setting), and in a fleet some workers are persistently
// slower (busier hosts, harder scenes). The delay is applied as a sleep by
// [WithLatency], not as CPU work, so a small machine can host many simulated
// workers.
type Latency struct {
	Kind         string        // LatencyNone, LatencyConstant or LatencyLognormal
	Median       time.Duration // the constant delay, or the lognormal median exp(μ)
	Sigma        float64       // lognormal shape σ (std of the log delay)
	SlowFraction float64       // fraction of workers that are slow, in [0, 1]
	SlowFactor   float64       // their delay multiplier (≥ 1)
}

// Validate reports a latency model that ForWorker cannot sample.
func (l Latency) Validate() error {
	var errs []error
	switch l.Kind {
	case "", LatencyNone, LatencyConstant, LatencyLognormal:
	default:
		errs = append(errs, fmt.Errorf("unknown kind %q (want %q, %q or %q)", l.Kind, LatencyNone, LatencyConstant, LatencyLognormal))
	}
	if l.Median < 0 {
		errs = append(errs, fmt.Errorf("median must not be negative, got %v", l.Median))
	}
	if !(l.Sigma >= 0) || math.IsInf(l.Sigma, 1) {
		errs = append(errs, fmt.Errorf("sigma must be finite and not negative, got %v", l.Sigma))
	}
	if !(l.SlowFraction >= 0 && l.SlowFraction <= 1) {
		errs = append(errs, fmt.Errorf("slow fraction must be in [0, 1], got %v", l.SlowFraction))
	}
	if l.SlowFraction > 0 && !(l.SlowFactor >= 1 && !math.IsInf(l.SlowFactor, 1)) {
		errs = append(errs, fmt.Errorf("slow factor must be finite and at least 1, got %v", l.SlowFactor))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("latency: %w", err)
	}
	return nil
}

// NumSlow returns how many of numWorkers are slow: ceil(SlowFraction ·
// numWorkers), with a 1e-9 allowance so that e.g. 0.3·10 = 3.0000000000000004
// counts as 3.
func (l Latency) NumSlow(numWorkers int) int {
	k := int(math.Ceil(l.SlowFraction*float64(numWorkers) - 1e-9))
	return min(max(k, 0), numWorkers)
}

// ForWorker returns the per-step delay sampler of rollout worker w of
// numWorkers. Workers 0 … NumSlow(numWorkers)−1 are the slow ones and have
// every delay multiplied by SlowFactor. The sampler draws from its own PCG
// stream (seed, w), so it is deterministic and independent of other workers.
// It panics on an invalid model or worker index; check user input with
// Validate.
func (l Latency) ForWorker(w, numWorkers int, seed uint64) *LatencySampler {
	if err := l.Validate(); err != nil {
		panic("testenv: Latency.ForWorker: " + err.Error())
	}
	if w < 0 || w >= numWorkers {
		panic(fmt.Sprintf("testenv: Latency.ForWorker: worker %d out of range [0, %d)", w, numWorkers))
	}
	factor := 1.0
	if w < l.NumSlow(numWorkers) {
		factor = l.SlowFactor
	}
	kind := l.Kind
	if kind == "" {
		kind = LatencyNone
	}
	src := rand.NewPCG(seed, uint64(w))
	return &LatencySampler{kind: kind, median: l.Median, sigma: l.Sigma, factor: factor, src: src, rng: rand.New(src)}
}

// LatencySampler draws the step delays of one worker. It is not safe for
// concurrent use.
type LatencySampler struct {
	kind   string
	median time.Duration
	sigma  float64
	factor float64
	src    *rand.PCG
	rng    *rand.Rand
}

// Next returns the next step delay: 0 for "none", Median·factor for
// "constant", Median·exp(Sigma·Z)·factor with Z ~ N(0, 1) for "lognormal".
func (s *LatencySampler) Next() time.Duration {
	switch s.kind {
	case LatencyConstant:
		return time.Duration(float64(s.median) * s.factor)
	case LatencyLognormal:
		return time.Duration(float64(s.median) * math.Exp(s.sigma*s.rng.NormFloat64()) * s.factor)
	}
	return 0
}

// Mean returns the analytic mean delay: Median·exp(Sigma²/2)·factor for
// "lognormal", Median·factor for "constant", 0 for "none".
func (s *LatencySampler) Mean() time.Duration {
	switch s.kind {
	case LatencyConstant:
		return time.Duration(float64(s.median) * s.factor)
	case LatencyLognormal:
		return time.Duration(float64(s.median) * math.Exp(s.sigma*s.sigma/2) * s.factor)
	}
	return 0
}

// Factor returns this worker's delay multiplier (SlowFactor for a slow
// worker, 1 otherwise).
func (s *LatencySampler) Factor() float64 { return s.factor }

// MarshalBinary encodes the sampler's random-number state (the model itself
// comes from the spec and is not included).
func (s *LatencySampler) MarshalBinary() ([]byte, error) {
	b, err := s.src.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("latency sampler: marshal rng: %w", err)
	}
	return b, nil
}

// UnmarshalBinary restores the random-number state from MarshalBinary.
func (s *LatencySampler) UnmarshalBinary(data []byte) error {
	if err := s.src.UnmarshalBinary(data); err != nil {
		return fmt.Errorf("latency sampler: unmarshal rng: %w", err)
	}
	return nil
}

// WithLatency wraps env so that each Step first calls sleep(s.Next())
// (time.Sleep in production, a fake in tests); a zero delay skips the call.
// Reset is not delayed. MarshalBinary and UnmarshalBinary include the
// sampler's random-number state, so a restored worker continues the same
// delay sequence.
func WithLatency(env Env, s *LatencySampler, sleep func(time.Duration)) Env {
	return &latencyEnv{Env: env, sampler: s, sleep: sleep}
}

type latencyEnv struct {
	Env
	sampler *LatencySampler
	sleep   func(time.Duration)
}

// Step sleeps for the next sampled delay, then steps the wrapped env.
func (e *latencyEnv) Step(action []float64) ([]float64, float64, bool, bool) {
	if d := e.sampler.Next(); d > 0 {
		e.sleep(d)
	}
	return e.Env.Step(action)
}

const latencyTag = "latency"

// MarshalBinary encodes the wrapped env's state and the sampler's RNG state.
func (e *latencyEnv) MarshalBinary() ([]byte, error) {
	inner, err := e.Env.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("latency env: marshal: %w", err)
	}
	rng, err := e.sampler.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("latency env: marshal: %w", err)
	}
	w := NewStateWriter(latencyTag)
	w.Bytes(inner)
	w.Bytes(rng)
	return w.Data(), nil
}

// UnmarshalBinary restores both parts, or neither on error.
func (e *latencyEnv) UnmarshalBinary(data []byte) error {
	r := NewStateReader(data, latencyTag)
	inner := r.Bytes()
	rng := r.Bytes()
	if err := r.Done(); err != nil {
		return fmt.Errorf("latency env: unmarshal state: %w", err)
	}
	// Check the sampler bytes on a copy first so that a failure leaves
	// both parts unchanged.
	probe := *e.sampler.src
	if err := probe.UnmarshalBinary(rng); err != nil {
		return fmt.Errorf("latency env: unmarshal state: %w", err)
	}
	if err := e.Env.UnmarshalBinary(inner); err != nil {
		return fmt.Errorf("latency env: unmarshal state: %w", err)
	}
	*e.sampler.src = probe
	return nil
}
