// Package runstore is the on-disk record of an experiment: what the engine and
// the activities write while training and what status, progress and the report
// renderer (package reports) read back. It holds the run and experiment
// manifests, the run summary, the build and hardware description of a run, the
// Arrow IPC schemas of the metrics and episodes files with their per-segment
// writer and reader, and the atomic file writes all of them go through.
//
// The package imports no other accerl package, nothing from Temporal and no
// plotting library, so the training path can depend on it without pulling in
// the renderer.
//
// # Where an experiment lives
//
// An experiment directory is a local path (one host, or a filesystem every worker mounts at
// the same path) or an S3-compatible object-store URL, s3://BUCKET/PREFIX?…: activities then
// work on a local WorkingCopy and publish what changed before they report a checkpoint (see
// OpenWorkingCopy, JoinDir, and the comment above StoreCacheEnv). The layout below is the
// same in both.
//
// # On-disk layout
//
//	<expDir>/                          e.g. runs/quickstart/
//	  experiment.json                  ExperimentManifest (ExperimentFile), written once by the engine at start
//	  <arm>/seed-<seed>/               one directory per run (arm × seed), see RunDir
//	    manifest.json                  RunManifest (RunFile): resolved config, build, hardware
//	    summary.json                   RunSummary (SummaryFile), overwritten at the end of every segment
//	    pretrain.json                  PretrainSummary (PretrainFile) of the behaviour-cloning warm start, if any
//	    worldmodel/                    the world model's offline dataset/ and pretrain/ checkpoints, if any;
//	      pixel-wm.json,               with a pixels block also its scores (PixelWorldModelFile)
//	      pixel-wm-strip.png           and real-vs-imagined strip (PixelWorldModelStrip)
//	    metrics/seg-000001.arrow       MetricsRow table of training segment 1 (MetricsDir, SegmentFile)
//	    episodes/seg-000001.arrow      EpisodeRow table of segment 1 (EpisodesDir)
//	    tb/events.out.tfevents.000001.accerl
//	                                   TensorBoard event file of segment 1 (TensorBoardDir, TensorBoardFile)
//	    parquet/metrics.parquet,       all committed segments as Parquet, written only by
//	    parquet/episodes.parquet       `accerl export --format parquet` (ExportParquet)
//	  report.md, report.html,          written by the report renderer (package reports),
//	  results.json, results.csv,       which only reads the files above
//	  results.tex, figures/
//
// Each run's manifest sits beside its metrics, so every number a report
// derives from a run can link back to <arm>/seed-<n>/manifest.json.
//
// # Metrics files
//
// Each table is an Arrow IPC file (the "Feather v2" random-access format,
// readable by pyarrow.feather / pyarrow.ipc.open_file, polars.read_ipc and
// the apache-arrow JavaScript package). Integers are int32/int64,
// everything else is float64. "Not applicable" is stored as a NaN value
// (for example success in an environment without a success signal, gpu_mem
// on a machine without a GPU), never as an Arrow null, so a float column
// round-trips bit for bit. The schema carries the metadata key
// "accerl.table" ("metrics" or "episodes") and "accerl.schema_version"
// (SchemaVersion). Readers look columns up by name: a column added later
// reads as NaN (floats) or 0 (integers) from older files.
//
// metrics/seg-NNNNNN.arrow, one row per trainer update or logging interval
// (MetricsRow):
//
//	column          type     unit / meaning
//	segment         int32    training segment, from 1 (key)
//	step            int64    update index within the run (key with segment)
//	env_steps       int64    environment steps of the run so far
//	updates         int64    trainer updates of the run so far
//	wall_s          float64  seconds since the run started
//	episode_return  float64  mean return of the episodes finished in the interval; NaN if none
//	episodes        int64    episodes finished in the interval
//	success         float64  success rate of those episodes, 0..1; NaN if not applicable
//	policy_version  int64    version of the weights after the update
//	staleness       float64  mean policy lag of the training batch, in policy versions (0 in sync mode)
//	steps_per_s     float64  environment steps per second over the interval
//	inference_batch float64  mean requests per inference batch
//	queue_wait_ms   float64  99th-percentile wait of an inference request, milliseconds
//	trainer_busy    float64  fraction of the interval the trainer computed, 0..1
//	cpu_util        float64  busy fraction of all cores, 0..1 (activities/telemetry)
//	gpu_util        float64  GPU utilisation, 0..1; NaN without a GPU
//	gpu_mem         float64  GPU memory in use, bytes; NaN without a GPU
//	horizon         float64  imagination horizon H of the world model, steps; NaN without one
//	wm_val_loss     float64  world-model validation loss on real data; NaN without one
//	policy_loss     float64  policy loss of the update
//	value_loss      float64  value loss
//	entropy         float64  policy entropy, nats per action token
//	approx_kl       float64  approximate KL(π_old ‖ π)
//	clip_frac       float64  fraction of clipped (or down-weighted) tokens
//	grad_norm       float64  global gradient norm before clipping
//	low_weight_frac float64  fraction of tokens with GIPO weight below 1e-3 during the update
//	ess             float64  effective sample size (Σw)²/(N Σw²) of the importance weights during the update
//	lag_clip_frac   float64  fraction of the batch's tokens outside PPO's clip range before the first step
//	lag_low_weight_frac float64 fraction of the batch's tokens a GIPO weight puts below 1e-3, before the first step
//	lag_ess         float64  effective sample size of the batch's ratios before the first step
//	eval_return     float64  mean return of the evaluation episodes played after this update (the
//	                         spec's evaluation block, at the end of each segment); NaN if none
//	eval_episodes   int64    evaluation episodes played after this update; 0 if none
//	eval_success    float64  share of them that reached the task's goal (the tabletop suites, CartPole,
//	                         Acrobot, MountainCar); NaN if none were played or the task has no notion
//	                         of success (Pendulum)
//	value_only      int64    1 when the update trained the value alone (algorithm.critic_warmup, or
//	                         skip_rewardless on a batch whose rewards were all 0); 0 otherwise and in
//	                         files written before the column existed
//	eval_sampled_return float64 eval_return of the same evaluation episodes played again sampling the
//	                         actions as in training (evaluation.sampled beside greedy); NaN if none
//	eval_sampled_success float64 eval_success of those sampled episodes; NaN if none
//	grpo_episodes   int64    under algorithm.adv_estimator = "grpo": the episodes that ended in the
//	                         update's batch; 0 otherwise and in files written before the column existed
//	grpo_moved      int64    those of them whose advantage moved the policy: nonzero (positive under
//	                         positive_advantages), so their group (task, or start with repeat_starts)
//	                         held other outcomes
//	grpo_imagined   int64    of grpo_episodes, the imagined rollouts of a pixel world model's groups
//	                         (world_model.pixels.group); 0 otherwise and in files written before
//	                         the column existed
//	grpo_imagined_moved int64 of grpo_moved, the imagined rollouts
//	grpo_imagined_success int64 of grpo_imagined, those M_rew judged successes (p_success >= 0.5 on
//	                         their last imagined frame)
//
// episodes/seg-NNNNNN.arrow, one row per finished episode (EpisodeRow):
//
//	segment         int32    training segment (key)
//	env_steps       int64    environment steps of the run when the episode finished (key with segment)
//	return          float64  undiscounted episode return
//	length          int64    steps in the episode
//	policy_version  int64    newest policy version that acted in the episode
//	success         float64  1 or 0; NaN if not applicable
//
// Rows are keyed by (segment, step) for metrics and (segment, env_steps)
// for episodes. Every segment lives in its own file, and WriteSegment
// writes a file under a hidden temporary name in the same directory,
// fsyncs it, renames it into place and fsyncs the directory. A retried
// segment therefore replaces its files as a whole: rows are never
// duplicated, and a reader that runs concurrently sees either the old or
// the new file, never a torn one. The episodes file is written before the
// metrics file, and ReadRun only reads segments whose metrics file exists,
// so the metrics file is the commit marker of a segment; a report read
// mid-run sees a consistent prefix. Readers skip anything that is not named
// exactly seg-NNNNNN.arrow (temporary files included).
//
// # TensorBoard event files
//
// WriteSegment also writes the segment's metrics rows as a TensorBoard
// event file, tb/events.out.tfevents.NNNNNN.accerl, so `tensorboard
// --logdir runs/` plots every run while it trains. One file per segment,
// replaced atomically like the Arrow files, keeps a retried segment from
// duplicating points. Each metrics row becomes one Event at step =
// env_steps holding the row's float columns (wall_s excepted) that are not
// NaN, tagged group/column (return/episode_return, loss/policy_loss,
// throughput/steps_per_s, ...); see WriteTensorBoard. The event file is
// renamed into place before the metrics file, so it never lags a
// committed segment. A TensorBoard that already read the first attempt of
// a retried segment may keep showing it until it is restarted.
//
// # Parquet export
//
// ExportParquet writes a run's committed segments as parquet/metrics.parquet
// and parquet/episodes.parquet for SQL engines (DuckDB, polars, Spark),
// with two differences from the Arrow files: "not applicable" is a null,
// not a NaN (a NaN makes avg() and sum() NaN), and each row carries the
// run's arm and seed, so one query can span an experiment:
//
//	SELECT arm, avg(episode_return) FROM 'runs/quickstart/*/*/parquet/metrics.parquet' GROUP BY arm
//
// JSON files (manifests, summaries, and the renderer's results.json) are
// written the same atomic way by WriteJSON. Float fields that may be NaN (a
// run with no finished episode has no final return) are written as null and
// read back as NaN (RunSummary, JSONFloat).
package runstore
