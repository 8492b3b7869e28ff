package runstore

// MetricsRow is one trainer update (or one logging interval) of a run. The
// comment after each field is its column name in the metrics file. Float
// fields that do not apply hold NaN.
type MetricsRow struct {
	Segment        int32   // segment: training segment, from 1
	Step           int64   // step: update index within the run; (segment, step) is the row key
	EnvSteps       int64   // env_steps: environment steps of the run so far
	Updates        int64   // updates: trainer updates of the run so far
	WallS          float64 // wall_s: wall-clock seconds since the run started
	EpisodeReturn  float64 // episode_return: mean return of episodes finished since the previous row, NaN if none
	Episodes       int64   // episodes: episodes finished since the previous row
	Success        float64 // success: success rate of those episodes, NaN if not applicable
	PolicyVersion  int64   // policy_version: version of the weights after this update
	Staleness      float64 // staleness: mean policy lag (versions) over the batch
	StepsPerS      float64 // steps_per_s: environment steps per second over the interval
	InferenceBatch float64 // inference_batch: mean inference batch size
	QueueWaitMs    float64 // queue_wait_ms: p99 wait of an inference request, milliseconds
	TrainerBusy    float64 // trainer_busy: fraction of the interval the trainer computed
	CPUUtil        float64 // cpu_util: CPU utilisation, 0..1
	GPUUtil        float64 // gpu_util: GPU utilisation, 0..1, NaN when no GPU
	GPUMem         float64 // gpu_mem: GPU memory in use, bytes, NaN when no GPU
	Horizon        float64 // horizon: imagination horizon H of the world model
	WMValLoss      float64 // wm_val_loss: world-model validation loss, NaN when no world model
	PolicyLoss     float64 // policy_loss
	ValueLoss      float64 // value_loss
	Entropy        float64 // entropy
	ApproxKL       float64 // approx_kl: approximate KL(π_old ‖ π)
	ClipFrac       float64 // clip_frac: fraction of clipped (or down-weighted) tokens
	GradNorm       float64 // grad_norm: global gradient norm before clipping
	LowWeightFrac  float64 // low_weight_frac: fraction of tokens whose GIPO weight fell below 1e-3 during the update
	ESS            float64 // ess: effective sample size (Σw)²/(N Σw²) of the importance weights during the update
	LagClipFrac    float64 // lag_clip_frac: fraction of the batch's tokens outside PPO's clip range before the first step (the policy lag alone)
	LagLowWeight   float64 // lag_low_weight_frac: fraction of the batch's tokens a GIPO weight would put below 1e-3, before the first step
	LagESS         float64 // lag_ess: effective sample size of the batch's ratios before the first step
	EvalReturn     float64 // eval_return: mean return of the evaluation episodes played after this update, NaN if none
	EvalEpisodes   int64   // eval_episodes: evaluation episodes played after this update (0 on most rows)
	EvalSuccess    float64 // eval_success: share of those episodes that reached the task's goal, NaN if none or no notion of success
	ValueOnly      int64   // value_only: 1 when the update trained the value alone (algorithm.critic_warmup, skip_rewardless), else 0
	GRPOEpisodes   int64   // grpo_episodes: episodes that ended in the batch, under GRPO advantages (else 0)
	GRPOMoved      int64   // grpo_moved: those of them whose advantage moved the policy (their group held other outcomes)
	// GRPOImagined, GRPOImaginedMoved and GRPOImaginedSuccess split the imagined rollouts
	// (a pixel world model's groups) off those counts: the ended ones, those that moved the
	// policy, and those M_rew judged successes.
	GRPOImagined        int64 // grpo_imagined
	GRPOImaginedMoved   int64 // grpo_imagined_moved
	GRPOImaginedSuccess int64 // grpo_imagined_success
	// EvalSampledReturn and EvalSampledSuccess are eval_return and eval_success of the
	// same evaluation episodes played again sampling the actions (evaluation.sampled), NaN
	// if none.
	EvalSampledReturn  float64 // eval_sampled_return
	EvalSampledSuccess float64 // eval_sampled_success
}

// EpisodeRow is one finished episode. The comment after each field is its
// column name in the episodes file.
type EpisodeRow struct {
	Segment       int32   // segment: training segment, from 1
	EnvSteps      int64   // env_steps: environment steps of the run when the episode finished
	Return        float64 // return: undiscounted episode return
	Length        int64   // length: steps in the episode
	PolicyVersion int64   // policy_version: newest policy version that acted in the episode
	Success       float64 // success: 1 or 0, NaN if not applicable
}
