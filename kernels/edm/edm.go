package edm

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// EDM holds the diffusion hyper-parameters of Karras et al. 2022
// ("Elucidating the Design Space of Diffusion-Based Generative Models",
// Table 1) with DIAMOND's choices as defaults ([DefaultEDM]).
type EDM struct {
	// SigmaData is σ_d, the standard deviation of the data (frames in
	// [−1, 1]: 0.5).
	SigmaData float64
	// PMean and PStd are the location and scale of the log-normal
	// training noise levels: ln σ ~ N(PMean, PStd²).
	PMean, PStd float64
	// SigmaMin, SigmaMax and Rho shape the sampling schedule (eq. 5).
	SigmaMin, SigmaMax, Rho float64
	// Steps is the number of Euler steps of [Net.Sample].
	Steps int
	// Residual makes the model denoise the change from the last context
	// frame, Next − Past[k−1], instead of the next frame itself; sampling
	// adds the last frame back. Copying the last frame is then the zero
	// prediction, which a model that has not yet learnt the motion falls
	// back to, where a direct model first has to learn to reproduce the
	// whole scene. Frame changes are small (most pixels do not move), so
	// SigmaData should be their standard deviation, not the frames'.
	// DIAMOND predicts frames directly (false).
	Residual bool
	// ContextNoise, when > 0, is the largest standard deviation of the
	// Gaussian noise a [Trainer] adds to the conditioning frames of each
	// training example (drawn per example, uniform in [0, ContextNoise];
	// frames in [−1, 1]), as GameNGen (Valevski et al. 2024) augments its
	// context: an imagination feeds M_obs its own imperfect frames, which
	// a model trained only on real contexts has never seen, and the error
	// compounds. With Residual the target is the change from the noised
	// last frame, so the model learns to undo the context's error as well.
	// The network is not told the level (GameNGen's is). It changes
	// training only: [Net.Sample] conditions on the frames it is given. 0
	// (DIAMOND) leaves the contexts as recorded.
	ContextNoise float64
	// SelfForcing, when > 0, makes up to this many of the most recent
	// context steps of each training example the model's own predictions
	// (at most History): a [Trainer] draws d uniformly in 0…SelfForcing per
	// example and, where the d transitions before it in the training data
	// lead up to it, imagines its last d context steps from the real
	// frames before them with the recorded actions ([Net.Step], rounded to
	// bytes, as an imagination does). The model then learns the next frame
	// from contexts like the ones it meets d steps into an imagination,
	// blur and all, instead of only from real ones (what scheduled
	// sampling, Bengio et al. 2015, does for sequence models). It changes
	// training only and costs up to SelfForcing sampling passes per step.
	// 0 (DIAMOND) trains on real contexts.
	SelfForcing int
	// SelfForcingFrom is the trainer step from which SelfForcing applies:
	// the first SelfForcingFrom steps train on real contexts, so that the
	// model learns the one-step task before its own contexts (scheduled
	// sampling's ramp). 0: from the start.
	SelfForcingFrom int
}

// DefaultEDM returns DIAMOND's settings: σ_d = 0.5, ln σ ~ N(−0.4, 1.2²)
// in training, 3 Euler steps from σ_max = 5 to σ_min = 2e-3 with ρ = 7.
func DefaultEDM() EDM {
	return EDM{SigmaData: 0.5, PMean: -0.4, PStd: 1.2, SigmaMin: 2e-3, SigmaMax: 5, Rho: 7, Steps: 3}
}

// Precondition returns the EDM scalings of noise level σ (Karras et al.
// 2022, Table 1, "Ours"):
//
//	c_skip = σ_d²/(σ² + σ_d²),  c_out = σ·σ_d/√(σ² + σ_d²),  c_in = 1/√(σ² + σ_d²),  c_noise = ¼ ln σ
func (e EDM) Precondition(sigma float64) (cSkip, cOut, cIn, cNoise float64) {
	sd2 := e.SigmaData * e.SigmaData
	r := math.Sqrt(sigma*sigma + sd2)
	return sd2 / (sigma*sigma + sd2), sigma * e.SigmaData / r, 1 / r, 0.25 * math.Log(sigma)
}

// Sigmas returns the Karras schedule of steps noise levels followed by 0
// (eq. 5):
//
//	σ_i = (σ_max^{1/ρ} + i/(steps−1)·(σ_min^{1/ρ} − σ_max^{1/ρ}))^ρ,  i < steps;  σ_steps = 0
//
// (one step: σ_max then 0).
func (e EDM) Sigmas(steps int) []float64 {
	if steps < 1 {
		panic(fmt.Sprintf("edm: Sigmas: steps must be at least 1, got %d", steps))
	}
	out := make([]float64, steps+1)
	lo, hi := math.Pow(e.SigmaMin, 1/e.Rho), math.Pow(e.SigmaMax, 1/e.Rho)
	for i := 0; i < steps; i++ {
		t := 0.0
		if steps > 1 {
			t = float64(i) / float64(steps-1)
		}
		out[i] = math.Pow(hi+t*(lo-hi), e.Rho)
	}
	return out
}

// Batch is n training or sampling examples in the network's layout: Past
// holds the k conditioning frames (3Ck × n·S², CNHW, oldest first, cameras
// inner, pixels in [−1, 1]), Action the n × ActionDim actions and Next the
// frames to predict (3C × n·S²; unused when sampling).
type Batch[F Float] struct {
	N                  int
	Past, Action, Next []F
}

// denoise returns D(x; σ_i) = c_skip·x + c_out·F_θ(c_in·x, c_noise, past,
// action) for the noisy frames x (3C × n·S²) at per-image noise levels
// sigma, keeping the forward state for backward.
func (m *Net[F]) denoise(e EDM, b Batch[F], x []F, sigma []float64) []F {
	cs, co, ci, cn := m.scalings(e, sigma)
	plane := m.cfg.Pixels()
	scaled := scalePlanes(x, ci, b.N, plane)
	out := m.forward(scaled, b.Past, cn, b.Action, b.N)
	d := make([]F, len(x))
	for j := range d {
		i := (j / plane) % b.N
		d[j] = cs[i]*x[j] + co[i]*out[j]
	}
	return d
}

// scalings returns c_skip, c_out, c_in and c_noise per image.
func (m *Net[F]) scalings(e EDM, sigma []float64) (cs, co, ci, cn []F) {
	n := len(sigma)
	cs, co, ci, cn = make([]F, n), make([]F, n), make([]F, n), make([]F, n)
	for i, s := range sigma {
		a, b, c, d := e.Precondition(s)
		cs[i], co[i], ci[i], cn[i] = F(a), F(b), F(c), F(d)
	}
	return cs, co, ci, cn
}

// scalePlanes returns x with every plane of image i multiplied by f[i].
func scalePlanes[F Float](x, f []F, n, plane int) []F {
	y := make([]F, len(x))
	for j, v := range x {
		y[j] = v * f[(j/plane)%n]
	}
	return y
}

// lastPast returns b's most recent context frames (Past step k−1), laid out
// as Next.
func (m *Net[F]) lastPast(b Batch[F]) []F {
	size := m.cfg.FrameChannels() * b.N * m.cfg.Pixels()
	off := (m.cfg.History - 1) * size
	return b.Past[off : off+size]
}

// lossForward evaluates the EDM training loss for given noise levels sigma
// (n) and unit Gaussian noise eps (3C × n·S²): with x = Next + σ·ε,
//
//	L = mean over all values of (F_θ(c_in·x, c_noise, past, action) − (Next − c_skip·x)/c_out)²
//
// which is Karras et al.'s λ(σ)-weighted denoising loss
// λ(σ)·‖D(x; σ) − Next‖² with λ = 1/c_out² (eq. 2 and 8), written on F_θ's
// target. With e.Residual, Next − Past[k−1] takes Next's place. It
// returns L and ∂L/∂F_θ.
func (m *Net[F]) lossForward(e EDM, b Batch[F], sigma []float64, eps []F) (float64, []F) {
	if len(sigma) != b.N || len(eps) != len(b.Next) || len(b.Next) != m.cfg.FrameChannels()*b.N*m.cfg.Pixels() {
		panic(fmt.Sprintf("edm: loss: %d noise levels, %d noise values, %d target values for %d images",
			len(sigma), len(eps), len(b.Next), b.N))
	}
	cs, co, ci, cn := m.scalings(e, sigma)
	plane := m.cfg.Pixels()
	target := b.Next
	if e.Residual {
		last := m.lastPast(b)
		target = make([]F, len(b.Next))
		for j, v := range b.Next {
			target[j] = v - last[j]
		}
	}
	x := make([]F, len(eps))
	for j, v := range eps {
		x[j] = target[j] + F(sigma[(j/plane)%b.N])*v
	}
	out := m.forward(scalePlanes(x, ci, b.N, plane), b.Past, cn, b.Action, b.N)
	dout := make([]F, len(out))
	loss := 0.0
	scale := 2 / float64(len(out))
	for j, f := range out {
		i := (j / plane) % b.N
		r := float64(f) - (float64(target[j])-float64(cs[i])*float64(x[j]))/float64(co[i])
		loss += r * r
		dout[j] = F(scale * r)
	}
	return loss / float64(len(out)), dout
}

// Loss evaluates the training loss (see lossForward) and accumulates its
// gradient into Grads.
func (m *Net[F]) Loss(e EDM, b Batch[F], sigma []float64, eps []F) float64 {
	loss, dout := m.lossForward(e, b, sigma, eps)
	m.backward(dout)
	return loss
}

// DrawNoise draws the training noise of n images: ln σ ~ N(PMean, PStd²)
// per image and ε ~ N(0, I) over the 3C × n·S² frame values.
func (m *Net[F]) DrawNoise(e EDM, n int, rng *rand.Rand) (sigma []float64, eps []F) {
	sigma = make([]float64, n)
	for i := range sigma {
		sigma[i] = math.Exp(e.PMean + e.PStd*rng.NormFloat64())
	}
	eps = make([]F, m.cfg.FrameChannels()*n*m.cfg.Pixels())
	for j := range eps {
		eps[j] = F(rng.NormFloat64())
	}
	return sigma, eps
}

// NoiseContext adds the [EDM.ContextNoise] augmentation to b's
// conditioning frames in place: image i's k past frames get Gaussian noise
// of one standard deviation drawn uniformly in [0, ContextNoise], clipped
// to [−1, 1] as frames are. It draws nothing when ContextNoise is 0.
func (m *Net[F]) NoiseContext(e EDM, b Batch[F], rng *rand.Rand) {
	if e.ContextNoise <= 0 {
		return
	}
	plane := m.cfg.Pixels()
	level := make([]F, b.N)
	for i := range level {
		level[i] = F(e.ContextNoise * rng.Float64())
	}
	for j, v := range b.Past {
		b.Past[j] = min(max(v+level[(j/plane)%b.N]*F(rng.NormFloat64()), -1), 1)
	}
}

// Sample predicts the next frames of b (Past and Action; Next is ignored)
// with e.Steps Euler steps of the probability-flow ODE (Karras et al. 2022,
// Algorithm 1 without the second-order correction, as DIAMOND samples):
//
//	x ← σ_0·ε,  then for i < Steps:  d = (x − D(x; σ_i))/σ_i,  x ← x + (σ_{i+1} − σ_i)·d
//
// on the schedule [EDM.Sigmas] (σ_Steps = 0, so the last step returns
// D(x; σ_{Steps−1})). With e.Residual the result is the change, and the
// last context frame is added to it. The result (3C × n·S²) is clipped to
// [−1, 1].
func (m *Net[F]) Sample(e EDM, b Batch[F], rng *rand.Rand) []F {
	sig := e.Sigmas(e.Steps)
	x := make([]F, m.cfg.FrameChannels()*b.N*m.cfg.Pixels())
	for j := range x {
		x[j] = F(sig[0] * rng.NormFloat64())
	}
	per := make([]float64, b.N)
	for i := 0; i < e.Steps; i++ {
		for j := range per {
			per[j] = sig[i]
		}
		d := m.denoise(e, b, x, per)
		step := F((sig[i+1] - sig[i]) / sig[i])
		for j, v := range d {
			x[j] += step * (x[j] - v)
		}
	}
	if e.Residual {
		last := m.lastPast(b)
		for j := range x {
			x[j] += last[j]
		}
	}
	for j, v := range x {
		x[j] = min(max(v, -1), 1)
	}
	return x
}
