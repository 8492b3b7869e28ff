package kernels

// Batch holds N training samples with advantages and returns already
// computed (see [GAE]). Obs is row-major N×ObsDim; LogProbs and Values are
// the behaviour policy's log π_old(a|s) and V_old(s) recorded at collection.
//
// With T = [Policy.TokensPerStep] tokens per step, Actions (categorical and
// tokens heads) and LogProbs hold N×T values, step i's at [i*T:(i+1)*T];
// the gaussian head stores its actions in ContActions (N×ActionDims)
// instead of Actions. V-trace and [RecomputeGAE] also need Rewards and
// Pieces, global advantage normalisation AdvStats.
type Batch struct {
	N          int
	Obs        []float64
	Actions    []int
	LogProbs   []float64
	Advantages []float64
	Returns    []float64
	Values     []float64

	ContActions []float64 // gaussian head: N×ActionDims actions as sampled (before clipping)
	Rewards     []float64 // r_t of each sample (vtrace, RecomputeGAE)
	// Pieces lists runs of consecutive steps of one episode that together
	// cover the samples 0…N−1 in order (vtrace, RecomputeGAE).
	Pieces []Piece
	// AdvStats are the advantage statistics merged across all trainer
	// shards for AdvNormGlobal; nil means this batch is the only shard.
	AdvStats *AdvStats
	// Frames holds each sample's frame (N) for a network that reads frames
	// ([FrameNetwork]); nil otherwise. Pieces then carry NextFrame.
	Frames [][]byte
	// Temperatures, when not nil, holds each sample's temperature (N) for a network that
	// evaluates rows at temperatures of their own ([TemperedNetwork]): the learner
	// computes the sample's log-probabilities, entropies and ratios at it, the
	// distribution its action was drawn from (0: the network's own). LogProbs must be
	// recorded at the same temperature.
	Temperatures []float64
}

// Piece marks samples [Start, Start+Len) of a [Batch] as consecutive steps
// of one episode. Terminal says the episode terminated at the last step
// (bootstrap 0); otherwise NextObs is the observation after the last step
// (the next step's, or the final observation of a time-limit truncation)
// and the bootstrap is V(NextObs).
type Piece struct {
	Start, Len int
	Terminal   bool
	NextObs    []float64
	NextFrame  []byte // NextObs's frame when the batch has Frames
}

// UpdateStats are the means over all minibatch steps of one
// [PolicyLearner.Update].
type UpdateStats struct {
	PolicyLoss    float64    // policy loss (PPO: clipped surrogate)
	ValueLoss     float64    // (clipped) value loss, without ValueCoef
	Entropy       float64    // mean policy entropy
	ApproxKL      float64    // k3 estimate of KL(old‖new) before each step
	ClipFrac      float64    // fraction of samples whose ratio left [1−ε, 1+ε]
	GradNorm      float64    // global gradient norm before clipping
	LowWeightFrac float64    // fraction of tokens whose GIPO weight is below GIPOLowWeight
	ESS           float64    // effective sample size (Σr)²/(N Σr²) of each minibatch's ratios
	LR            float64    // learning rate of this update (from the schedule)
	Lag           RatioStats // ratios of the whole batch under the parameters before the first step: the policy lag
	ValueOnly     bool       // the update trained the value alone (LossConfig.ValueOnly): the policy loss gave no gradient
	// GRPOEpisodes and GRPOMoved count, under GRPO's outcome advantages, the episodes
	// that ended in the batch and those of them whose advantage moves the policy (nonzero;
	// positive under positive advantages): episodes whose group held other outcomes. Set by
	// the engine's trainer, 0 otherwise.
	GRPOEpisodes, GRPOMoved int
	// GRPOImagined, GRPOImaginedMoved and GRPOImaginedSuccess are, of those, the ended
	// imagined rollouts (a pixel world model's groups), those whose advantage moves the
	// policy, and those M_rew judged successes. Set by the engine's trainer, 0 otherwise.
	GRPOImagined, GRPOImaginedMoved, GRPOImaginedSuccess int
}

// growInts returns buf resliced to length n, reallocating only when its
// capacity is too small.
func growInts(buf []int, n int) []int {
	if cap(buf) < n {
		return make([]int, n)
	}
	return buf[:n]
}
