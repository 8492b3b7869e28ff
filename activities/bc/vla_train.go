package bc

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/accerl/accerl/kernels/vla"
	"github.com/accerl/accerl/testenv/tabletop"
)

// VLAConfig is a pixel BC run's model size and optimisation settings: the
// micro-VLA of package kernels/vla reading the cameras, the instruction and
// the proprioception and writing a chunk of Chunk actions as 7·Chunk action
// tokens of [ActionBins] bins, trained by cross-entropy with teacher forcing.
type VLAConfig struct {
	ImageSize int      // camera side S in pixels (tabletop: a power of two, 16…256)
	Patch     int      // patch side P; (S/P)² tokens per camera
	Cameras   []string // tabletop cameras in the policy's order; empty: agentview, wrist
	Dim       int      // transformer width
	Layers    int      // transformer blocks
	Heads     int      // attention heads; must divide Dim
	MLPRatio  int      // MLP hidden width as a multiple of Dim
	// Chunk is how many future actions one query predicts (K, as in
	// [Config]); the sequence then ends in 7·K action positions decoded
	// one by one. Execute of them run before the next query.
	Chunk, Execute int
	Epochs         int
	Batch          int
	LR             float64 // Adam's initial learning rate, decayed linearly to FinalLR over the run
	// FinalLR is the learning rate the linear decay ends at, on the last
	// step of the last epoch; 0 is LR/10.
	FinalLR     float64
	MaxGradNorm float64 // global gradient-norm clip; 0 disables it
	Seed        uint64
	// VocabSize pads the vocabulary with unused ids up to this size (0: words, specials
	// and bins only); FullHead scores with the full-vocabulary head instead of the slim one.
	VocabSize int
	FullHead  bool
	// Shift is random-shift augmentation (DrQ, Kostrikov et al. 2020; Diffusion Policy's
	// random crops): every training image is translated by a uniform whole-pixel offset in
	// [−Shift, Shift]² per sample and epoch, the edge pixels repeated into the gap, so that
	// the network cannot key on exact pixel positions of a few hundred demonstrations. 0
	// trains on the images as recorded.
	Shift int
	// LabelSigma > 0 trains on ordinal soft labels ([vla.SoftTargets]): the
	// target of an expert bin is a Gaussian of LabelSigma bins around it
	// instead of the one-hot bin, so that a neighbouring bin is a near miss.
	// The reported losses stay the one-hot cross-entropy. 0 is one-hot.
	// Measured on the spatial suite (docs/results/vla-bc-notes.md): σ = 3
	// raised greedy success from 7.0 to 12.5% with 20 demonstrations per task
	// and from 24.6 to 26.4% (within noise) with 50; σ = 6 lowered it.
	LabelSigma float64
	// EMA > 0 keeps an exponential moving average of the weights over the
	// training steps (Polyak averaging, as Diffusion Policy and ACT evaluate
	// their EMA model): after every Adam step ema ← d·ema + (1−d)·w with
	// d = min(EMA, (1+s)/(10+s)) at step s, so that the first steps are not
	// dominated by the initial weights. [VLATrainer.Model] then returns the
	// averaged weights; training goes on with the raw ones. 0 is off.
	EMA float64
}

// DefaultVLAConfig is the measured pixel recipe: width 64, 2 layers of 2
// heads, both cameras at 32×32 in 8×8 patches (as [vla.SmallConfig]),
// chunk 8 of which 2 run before the next query, 12 epochs of batch 32 at
// learning rate 3e-3 decayed linearly to 3e-4, ordinal soft labels of σ = 3
// bins. On the spatial suite with 50 DART demonstrations per task it
// reaches greedy success 0.648 (seed 1) and 0.660 (seed 2) over all 50
// fixed initial states of the ten tasks (`accerl bench bc --policy vla
// --init-states 50`, about 19 minutes of training at 300 samples/s on 2
// cores); after 8 epochs 0.524 / 0.516, after 6 epochs 0.366 / 0.376 (the
// state policy: 0.364). docs/results/vla-bc-notes.md has the measurements.
func DefaultVLAConfig() VLAConfig {
	return VLAConfig{ImageSize: 32, Patch: 8, Cameras: []string{tabletop.CameraAgentview, tabletop.CameraWrist},
		Dim: 64, Layers: 2, Heads: 2, MLPRatio: 4, Chunk: 8, Execute: 2,
		Epochs: 12, Batch: 32, LR: 3e-3, MaxGradNorm: 1, Seed: 1, LabelSigma: 3}
}

// cameras returns the configured cameras, or the tabletop default.
func (c VLAConfig) cameras() []string {
	if len(c.Cameras) == 0 {
		return []string{tabletop.CameraAgentview, tabletop.CameraWrist}
	}
	return slices.Clone(c.Cameras)
}

// ModelConfig is the micro-VLA of c: the tabletop word vocabulary (no
// unused LM ids: VocabSize = words + 2 specials + 256 bins), instructions
// up to the longest of any suite, 8-D proprio, 7·Chunk action tokens, slim
// head.
func (c VLAConfig) ModelConfig() vla.Config {
	words := len(tabletop.Vocabulary())
	return vla.Config{ImageSize: c.ImageSize, Patch: c.Patch, Cameras: len(c.cameras()),
		Dim: c.Dim, Layers: c.Layers, Heads: c.Heads, MLPRatio: c.MLPRatio,
		MaxInstr: maxInstructionTokens(), WordVocab: words, VocabSize: max(c.VocabSize, words+vla.NumSpecial+ActionBins),
		ActionDims: tabletop.ActionDim * c.Chunk, Bins: ActionBins, ProprioDim: tabletop.ProprioDim, SlimHead: !c.FullHead}
}

// Validate reports the first problem of c.
func (c VLAConfig) Validate() error {
	if c.Chunk < 1 || c.Execute < 1 || c.Execute > c.Chunk {
		return fmt.Errorf("chunk %d, execute %d: want 1 ≤ execute ≤ chunk", c.Chunk, c.Execute)
	}
	if c.LabelSigma < 0 || math.IsNaN(c.LabelSigma) {
		return fmt.Errorf("label sigma %v: want ≥ 0 bins", c.LabelSigma)
	}
	if c.Epochs < 0 || c.Batch < 1 || !(c.LR > 0) {
		return fmt.Errorf("%d epochs, batch %d, learning rate %v: want epochs ≥ 0 (0 trains nothing: a model given to StartFrom as it is), the others positive", c.Epochs, c.Batch, c.LR)
	}
	if c.EMA < 0 || c.EMA >= 1 || math.IsNaN(c.EMA) {
		return fmt.Errorf("EMA decay %v: want 0 (off) or in (0, 1)", c.EMA)
	}
	if c.FinalLR < 0 || c.FinalLR > c.LR {
		return fmt.Errorf("final learning rate %v: want 0 (a tenth of the initial %v) or in (0, %v]", c.FinalLR, c.LR, c.LR)
	}
	if err := tabletop.ValidateImageSize(c.ImageSize); err != nil || c.ImageSize == 0 {
		return fmt.Errorf("image size %d: want a power of two from 16 to 256", c.ImageSize)
	}
	for _, cam := range c.Cameras {
		if err := tabletop.ValidateCamera(cam); err != nil {
			return err
		}
	}
	return c.ModelConfig().Validate()
}

// maxInstructionTokens is the longest instruction of any suite, in tokens.
func maxInstructionTokens() int {
	n := 0
	for _, s := range tabletop.Suites() {
		for t := range tabletop.TaskCount(s) {
			n = max(n, len(tabletop.Tokenize(tabletop.Instruction(s, t))))
		}
	}
	return n
}

// VLAModel is a trained pixel BC policy: the micro-VLA, the standardisation
// of its proprio input and the chunking and camera settings it was trained
// with.
type VLAModel struct {
	Net       *vla.Model
	Proprio   Normaliser // standardises the 8-D proprioception
	Chunk     int
	Execute   int
	ImageSize int
	Cameras   []string
}

// obs is the network's observation: the images (referenced, not copied),
// the instruction and the standardised proprio.
func (m *VLAModel) obs(images [][]uint8, instr []int, proprio []float64) vla.Obs {
	p := make([]float32, len(proprio))
	for j, v := range proprio {
		p[j] = float32((v - m.Proprio.Mean[j]) / m.Proprio.Std[j])
	}
	return vla.Obs{Images: images, Instr: instr, Proprio: p}
}

// NewVLAModel is an untrained model of cfg's network and settings, with weights
// initialised from cfg.Seed and an identity proprio standardisation (mean 0, std 1): the
// shape to set a policy's parameters on ([VLAModel.SetFoldedParams]) when they come
// without demonstrations to fit a standardisation from.
func NewVLAModel(cfg VLAConfig) (*VLAModel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("bc vla model: %w", err)
	}
	mc := cfg.ModelConfig()
	mean, std := make([]float64, mc.ProprioDim), make([]float64, mc.ProprioDim)
	for j := range std {
		std[j] = 1
	}
	return &VLAModel{Net: vla.New(mc, rand.New(rand.NewPCG(cfg.Seed, 0x71a))), Proprio: Normaliser{Mean: mean, Std: std},
		Chunk: cfg.Chunk, Execute: cfg.Execute, ImageSize: cfg.ImageSize, Cameras: cfg.cameras()}, nil
}

// EnvConfig is the tabletop configuration whose images the model reads.
func (m *VLAModel) EnvConfig(suite string) tabletop.Config {
	return tabletop.Config{Suite: suite, ImageSize: m.ImageSize, Cameras: slices.Clone(m.Cameras)}
}

// VLATrainResult reports a pixel BC run.
type VLATrainResult struct {
	Samples int
	// InitialLoss is the cross-entropy of the first batch before any
	// update: about log 256 = 5.55, the near-uniform initial head.
	InitialLoss   float64
	EpochLoss     []float64 // mean token cross-entropy (nats) per epoch; log 256 = 5.55 is uniform
	EpochAccuracy []float64 // share of action tokens whose teacher-forced argmax is the expert's, per epoch
	FinalLoss     float64
	Params        int     // every parameter of the network
	Trainable     int     // those with gradients and Adam state (the slim head's)
	TrainS        float64 // wall time of the epochs
	SamplesPerS   float64 // training samples (forward, backward, Adam) per second of TrainS
}

// VLATrainer trains a VLAModel epoch by epoch.
type VLATrainer struct {
	cfg    VLAConfig
	mc     vla.Config
	m      *VLAModel
	obs    []vla.Obs
	tok    [][]int
	n, b   int
	opt    *vla.Adam[float32]
	epoch  int
	loss0  float64
	losses []float64
	accs   []float64
	wall   time.Duration
	seen   int

	tape  *vla.Tape[float32]
	bo    []vla.Obs
	bt    [][]int
	order []int
	aug   [][]uint8 // the batch's shifted images (Shift > 0), one buffer per sample and camera
	soft  *vla.SoftTargets

	// round0 is the epoch the current DAgger round started at (0: the
	// demonstrations' round) and roundLR its initial learning rate (cfg.LR
	// for the demonstrations' round).
	round0  int
	roundLR float64

	// ema is the moving average of the parameters (cfg.EMA > 0) after
	// emaSteps Adam steps; nil when off.
	ema      []float32
	emaSteps int
	adopted  bool // Adopt replaced the network: the epoch record is partial
}

// NewVLATrainer prepares pixel BC on demos: the standardised proprio, the
// chunked token targets of every step (see [ActionBins] for the binning),
// and the network initialised from cfg.Seed.
func NewVLATrainer(cfg VLAConfig, demos []ImageDemo) (*VLATrainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("bc vla train: %w", err)
	}
	if len(demos) == 0 {
		return nil, fmt.Errorf("bc vla train: no demonstrations")
	}
	mc := cfg.ModelConfig()
	t := &VLATrainer{cfg: cfg, mc: mc, roundLR: cfg.LR, m: &VLAModel{Chunk: cfg.Chunk, Execute: cfg.Execute, ImageSize: cfg.ImageSize, Cameras: cfg.cameras()}}
	if err := t.check(demos); err != nil {
		return nil, err
	}
	var prop []float64
	for _, d := range demos {
		for i := range d.Actions {
			prop = append(prop, d.Proprio[i]...)
		}
	}
	t.m.Proprio = fitNormaliser(prop, tabletop.ProprioDim)
	t.add(demos)
	t.m.Net = vla.New(mc, rand.New(rand.NewPCG(cfg.Seed, 0x71a)))
	t.opt = vla.NewAdam[float32](len(t.m.Net.Grads()), cfg.LR)
	if cfg.EMA > 0 {
		t.ema = slices.Clone(t.m.Net.Params())
	}
	if cfg.LabelSigma > 0 {
		t.soft = vla.NewSoftTargets(ActionBins, cfg.LabelSigma)
	}
	return t, nil
}

// check reports the first demonstration that the model cannot read.
func (t *VLATrainer) check(demos []ImageDemo) error {
	mc, size := t.mc, t.cfg.ImageSize
	for _, d := range demos {
		if len(d.Instr) > mc.MaxInstr {
			return fmt.Errorf("bc vla train: instruction of %d tokens, the model takes %d", len(d.Instr), mc.MaxInstr)
		}
		if d.Labels != nil && len(d.Labels) != len(d.Actions) {
			return fmt.Errorf("bc vla train: task %d: %d label chunks for %d steps", d.Task, len(d.Labels), len(d.Actions))
		}
		for i := range d.Actions {
			if len(d.Images[i]) != mc.Cameras || len(d.Images[i][0]) != 3*size*size {
				return fmt.Errorf("bc vla train: task %d step %d has %d images of %d bytes, want %d of %d×%d×3",
					d.Task, i, len(d.Images[i]), len(d.Images[i][0]), mc.Cameras, size, size)
			}
		}
	}
	return nil
}

// add appends the samples of demos (standardised with the trainer's proprio
// normaliser) and sizes the batch and shuffle buffers for the new total.
func (t *VLATrainer) add(demos []ImageDemo) {
	for _, d := range demos {
		for i := range d.Actions {
			t.obs = append(t.obs, t.m.obs(d.Images[i], d.Instr, d.Proprio[i]))
			t.tok = append(t.tok, demoTokens(t.mc, &d, i, t.cfg.Chunk))
		}
	}
	t.n = len(t.obs)
	t.b = min(t.cfg.Batch, t.n)
	t.bo, t.bt = make([]vla.Obs, t.b), make([][]int, t.b)
	t.order = make([]int, t.n)
}

// Aggregate is a DAgger round's training step ([CollectDAgger]): it adds
// demos to the samples (the proprio standardisation stays the one fitted on
// the first demonstrations, which the network has learned) and schedules
// epochs more epochs over all of them, the learning rate restarting at lr
// and decaying linearly to lr/10 over the round. Call it after Done.
func (t *VLATrainer) Aggregate(demos []ImageDemo, epochs int, lr float64) error {
	if !t.Done() {
		return fmt.Errorf("bc vla aggregate: %d of %d epochs still to run", t.cfg.Epochs-t.epoch, t.cfg.Epochs)
	}
	if epochs < 1 || !(lr > 0) {
		return fmt.Errorf("bc vla aggregate: %d epochs at learning rate %v: want positive", epochs, lr)
	}
	if err := t.check(demos); err != nil {
		return err
	}
	t.add(demos)
	t.round0, t.roundLR = t.epoch, lr
	t.cfg.Epochs = t.epoch + epochs
	return nil
}

// Done reports whether all of the configured epochs have run.
func (t *VLATrainer) Done() bool { return t.epoch >= t.cfg.Epochs }

// Samples returns the number of (observation, chunk) training samples.
func (t *VLATrainer) Samples() int { return t.n }

// Model returns the model being trained, or with cfg.EMA > 0 a copy of it
// that holds the moving average of its weights (the raw ones keep training).
func (t *VLATrainer) Model() *VLAModel {
	if t.ema == nil {
		return t.m
	}
	m := *t.m
	m.Net = t.emaNet()
	return &m
}

// emaNet returns a copy of the trained network holding the weight average
// (cfg.EMA > 0), made through the network's own checkpoint record.
func (t *VLATrainer) emaNet() *vla.Model {
	b, err := t.m.Net.MarshalBinary()
	if err != nil {
		panic(fmt.Sprintf("bc vla: copy the network: %v", err)) // encoding a live network cannot fail
	}
	net := new(vla.Model)
	if err := net.UnmarshalBinary(b); err != nil {
		panic(fmt.Sprintf("bc vla: copy the network: %v", err))
	}
	copy(net.Params(), t.ema)
	return net
}

// updateEMA folds the parameters after an Adam step into the moving average
// (see VLAConfig.EMA).
func (t *VLATrainer) updateEMA() {
	if t.ema == nil {
		return
	}
	t.emaSteps++
	s := float64(t.emaSteps)
	d := float32(min(t.cfg.EMA, (1+s)/(10+s)))
	for i, w := range t.m.Net.Params() {
		t.ema[i] = d*t.ema[i] + (1-d)*w
	}
}

// Result summarises the run so far.
func (t *VLATrainer) Result() VLATrainResult {
	r := VLATrainResult{Samples: t.n, InitialLoss: t.loss0, EpochLoss: slices.Clone(t.losses), EpochAccuracy: slices.Clone(t.accs),
		Params: t.mc.ParamCount(), Trainable: t.mc.TrainableCount(), TrainS: t.wall.Seconds()}
	if len(t.losses) > 0 {
		r.FinalLoss = t.losses[len(t.losses)-1]
	}
	if t.wall > 0 {
		r.SamplesPerS = float64(t.seen) / t.wall.Seconds()
	}
	return r
}

// Epoch runs one pass over the samples in a fresh random order (the last
// partial batch dropped) and returns its mean token cross-entropy (one-hot,
// also with LabelSigma > 0). Each step is teacher-forced cross-entropy on
// all 7·Chunk action tokens (against the soft targets with LabelSigma >
// 0), gradient clipping and one Adam step, the learning rate decaying
// linearly from LR to FinalLR (LR/10 when 0) over all epochs' steps; a
// DAgger round's from its own rate to a tenth of it.
func (t *VLATrainer) Epoch() (float64, error) { return t.EpochContext(context.Background()) }

// EpochContext is Epoch that gives up between two steps once ctx is done (an epoch of a
// realistic clone takes minutes on a CPU; a cancelled activity or Ctrl-C should not wait
// for it): it then returns ctx's error and leaves the trainer mid-epoch, its parameters
// stepped but its epoch count not, so the caller restores the last epoch's State before
// training on (PretrainPolicy resumes from its epoch checkpoints).
func (t *VLATrainer) EpochContext(ctx context.Context) (float64, error) {
	start := time.Now()
	cfg, b, net := t.cfg, t.b, t.m.Net
	shuffleOrder(t.order, cfg.Seed, 0x71a00+uint64(t.epoch))
	shiftRNG := rand.New(rand.NewPCG(cfg.Seed, 0x5a1f700+uint64(t.epoch)))
	perEpoch := t.n / b
	// The learning rate decays over the current round: all epochs, or the
	// epochs a DAgger round (Aggregate) added.
	total := (cfg.Epochs - t.round0) * perEpoch
	steps := (t.epoch - t.round0) * perEpoch
	lr, final := t.roundLR, t.roundLR/10
	if t.round0 == 0 && cfg.FinalLR > 0 {
		final = cfg.FinalLR
	}
	sum, acc := 0.0, 0.0
	for s := range perEpoch {
		if err := ctx.Err(); err != nil {
			return math.NaN(), fmt.Errorf("bc vla train: epoch %d stopped after %d of %d steps: %w", t.epoch, s, perEpoch, err)
		}
		for r, i := range t.order[s*b : (s+1)*b] {
			t.bo[r], t.bt[r] = t.obs[i], t.tok[i]
			if cfg.Shift > 0 {
				t.bo[r].Images = t.shifted(r, t.obs[i].Images, shiftRNG)
			}
		}
		t.opt.LR = lr + (final-lr)*float64(steps)/float64(total)
		t.tape = net.ForwardInto(t.tape, t.bo, t.bt)
		var l, a float64
		net.ZeroGrads()
		if t.soft != nil {
			_, l, a = vla.SoftCrossEntropy(t.tape, t.soft)
			net.BackwardSoft(t.tape, t.soft)
		} else {
			var dLogp []float32
			l, a, dLogp = vla.CrossEntropy(t.tape)
			net.Backward(t.tape, dLogp, nil, nil)
		}
		if steps == 0 {
			t.loss0 = l
		}
		if cfg.MaxGradNorm > 0 {
			vla.ClipGradNorm(net.Grads(), cfg.MaxGradNorm)
		}
		t.opt.Step(net.Params(), net.Grads())
		t.updateEMA()
		sum += l
		acc += a
		steps++
	}
	l := sum / float64(perEpoch)
	if math.IsNaN(l) || math.IsInf(l, 0) {
		return l, fmt.Errorf("bc vla train: loss %v at epoch %d", l, t.epoch)
	}
	t.losses = append(t.losses, l)
	t.accs = append(t.accs, acc/float64(perEpoch))
	t.epoch++
	t.wall += time.Since(start)
	t.seen += perEpoch * b
	return l, nil
}

// shifted returns the images of batch row r translated by one random offset per image
// (see VLAConfig.Shift), written into the trainer's buffers for that row.
func (t *VLATrainer) shifted(r int, images [][]uint8, rng *rand.Rand) [][]uint8 {
	s, k := t.cfg.ImageSize, t.cfg.Shift
	out := make([][]uint8, len(images))
	for c, im := range images {
		j := r*len(images) + c
		for len(t.aug) <= j {
			t.aug = append(t.aug, make([]uint8, len(im)))
		}
		dst := t.aug[j]
		dx, dy := rng.IntN(2*k+1)-k, rng.IntN(2*k+1)-k
		for y := range s {
			sy := min(max(y+dy, 0), s-1)
			for x := range s {
				sx := min(max(x+dx, 0), s-1)
				copy(dst[(y*s+x)*3:(y*s+x)*3+3], im[(sy*s+sx)*3:(sy*s+sx)*3+3])
			}
		}
		out[c] = dst
	}
	return out
}

// TrainVLA is NewVLATrainer followed by cfg.Epochs calls of Epoch.
func TrainVLA(cfg VLAConfig, demos []ImageDemo) (*VLAModel, VLATrainResult, error) {
	t, err := NewVLATrainer(cfg, demos)
	if err != nil {
		return nil, VLATrainResult{}, err
	}
	return runEpochs(t)
}

// StartFrom sets the trainer's network, before its first epoch, to a clone trained earlier,
// given in the engine policy's layout (FoldedParams: a run's bc/final policy) and unfolded
// with the standardisation this trainer fitted on its demonstrations, so the epochs to come
// continue that clone (with a fresh optimizer, the learning rate decaying from LR as for a
// new clone) instead of a random network; with Epochs 0 the model is the clone as it is.
// Unlike Adopt, the epochs are not marked done, so State and resumption work as for any
// clone (an epoch checkpoint holds the continued network).
func (t *VLATrainer) StartFrom(folded []float64) error {
	if t.epoch > 0 {
		return fmt.Errorf("bc vla start from: %d epochs already trained", t.epoch)
	}
	if err := t.m.SetFoldedParams(folded); err != nil {
		return fmt.Errorf("bc vla start from: %w", err)
	}
	if t.ema != nil { // the average starts from the given weights
		t.ema = slices.Clone(t.m.Net.Params())
	}
	return nil
}

// Adopt replaces the trainer's network by m's, a model trained earlier on
// the same demonstrations (its proprio standardisation must be the one this
// trainer fitted), and marks the configured epochs done with a fresh
// optimizer, so that DAgger rounds ([VLATrainer.Aggregate]) can continue
// from a saved clone without cloning it again. The epoch record (Result's
// losses) then holds only the epochs run after it, and State is refused.
func (t *VLATrainer) Adopt(m *VLAModel) error {
	if m.Net.Config() != t.mc {
		return fmt.Errorf("bc vla adopt: the model's network is not the one this config builds")
	}
	if !slices.Equal(m.Proprio.Mean, t.m.Proprio.Mean) || !slices.Equal(m.Proprio.Std, t.m.Proprio.Std) {
		return fmt.Errorf("bc vla adopt: the model was trained on other demonstrations (its proprio standardisation differs)")
	}
	if m.Chunk != t.cfg.Chunk {
		return fmt.Errorf("bc vla adopt: the model predicts chunks of %d, the config %d", m.Chunk, t.cfg.Chunk)
	}
	t.m.Net = m.Net
	if t.ema != nil { // the average starts again from the adopted weights
		t.ema, t.emaSteps = slices.Clone(m.Net.Params()), 0
	}
	t.adopted = true
	t.opt = vla.NewAdam[float32](len(t.m.Net.Grads()), t.cfg.LR)
	t.epoch = t.cfg.Epochs
	return nil
}
