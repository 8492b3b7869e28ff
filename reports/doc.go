// Package reports owns the on-disk record of an experiment — run metrics,
// manifests and summaries — and turns that record into a paper-style
// report: Markdown, a self-contained HTML page, results.json for scripts,
// a results table as CSV and LaTeX, and figures as PNG and SVG.
//
// The engine writes; reports only reads what is already on disk. Generate
// never runs training, so a report can be produced at any time, including
// while an experiment is still running (it then says the report is partial).
// The package imports no other accerl package and nothing from Temporal.
//
// # On-disk layout
//
//	<expDir>/                          e.g. runs/quickstart/
//	  experiment.json                  ExperimentManifest, written once by the engine at start
//	  <arm>/seed-<seed>/               one directory per run (arm × seed), see RunDir
//	    manifest.json                  RunManifest: resolved config, build, hardware
//	    summary.json                   RunSummary, overwritten at the end of every segment
//	    metrics/seg-000001.arrow       MetricsRow table of training segment 1
//	    episodes/seg-000001.arrow      EpisodeRow table of segment 1
//	  report.md                        written by Generate
//	  report.html                      written by Generate (images inlined as data URIs)
//	  results.json                     written by Generate (per-run numbers and per-arm aggregates)
//	  results.csv, results.tex         written by Generate (the per-arm table)
//	  figures/*.png, figures/*.svg     written by Generate
//
// Each run's manifest sits beside its metrics, and every number in the
// report links to where it comes from: per-run cells to
// <arm>/seed-<n>/manifest.json, per-arm aggregates to the arm's run list.
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
// JSON files (manifests, summaries, results.json) are written the same
// atomic way by WriteJSON. Float fields that may be NaN (a run with no
// finished episode has no final return) are written as null and read back
// as NaN.
//
// # Statistics
//
// Generate aggregates the seeds of every arm. A run's counters and
// throughput come from its summary.json; a run without one (still in its
// first segments) falls back to its last metrics row, and a run without a
// directory is listed as missing. Any run that is not completed makes the
// report partial, which report.md, report.html and results.json all say.
// Aggregates include every run with data, finished or not.
//
//   - Final return: the mean return of a run's last FinalEpisodes episodes.
//   - IQM: the interquartile mean across seeds (Agarwal et al. 2021, "Deep
//     RL at the edge of the statistical precipice"; IQM), with a 95%
//     stratified-bootstrap percentile interval (IQMInterval).
//   - Throughput: mean env steps per second across seeds with a 95%
//     bootstrap interval of the mean; speedup = the arm's mean over the
//     baseline arm's, its interval resampling both arms' seeds.
//   - Probability of improvement: P(a seed of the arm ends with a higher
//     final return than a seed of the baseline), ties counting ½, as in
//     rliable (ProbabilityOfImprovement), with a bootstrap interval.
//   - Optimality gap, when a target return exists: the mean over seeds of
//     max(0, 1 − s'), where s' = (s − random)/(target − random) normalises a
//     final return s so that the random score is 0 and the target 1 —
//     rliable's normalised scores with γ = 1 (OptimalityGap). The random
//     score defaults to 0.
//   - Steps to target, when a target return exists: for each seed, the
//     first env step at which its smoothed return curve (the learning
//     curve's trailing mean of the training episodes, once its window is
//     full) reaches the target.
//     Across seeds, the median with a bootstrap interval; a seed that never
//     reached it is censored at its last env step and counts as +∞, so the
//     median is "not reached" when more than half the seeds did not
//     (reported as ">" a lower bound: the median with censored seeds at
//     their budgets). Its ratio to the baseline's median (below 1: fewer
//     env steps) is the sample-efficiency number. The median, not the IQM,
//     because a censored seed has a rank but no value.
//   - Steps to target by evaluation, when a target return exists and some
//     run has evaluation rows: the same measure read off the evaluation
//     points instead of the training episodes. A run reaches the target at
//     the env steps of its first metrics row with eval_episodes > 0 and
//     eval_return ≥ target (every point counts: each is already the mean
//     of a batch of episodes, so nothing is smoothed); otherwise it is
//     censored at its budget. Median, interval, lower bound and ratio to
//     the baseline are computed exactly as above (one code path,
//     targetMeasure), with their own bootstrap stream. This is the usual
//     sample-efficiency protocol (Dreamer, MBPO, Stable Baselines'
//     EvalCallback): only training interactions count as env steps, and
//     the policy is judged on separate episodes.
//
// The target return comes from Options.Target, else from "target" in
// experiment.json; without one the steps-to-target figure, the optimality
// gap and their columns are left out.
//
// # Evaluation episodes
//
// A run whose spec has an evaluation block plays separate evaluation
// episodes with the current policy after every training segment; they
// train nothing and are not counted as env steps. A metrics row is an
// evaluation point iff its eval_episodes > 0 (files written before the
// columns existed read 0 there, so they have none); its x is the row's
// env_steps. When at least one run has an evaluation point the report adds:
//
//   - the evaluation_curve figure and, with a target, steps_to_target_eval;
//   - an "Evaluation" line in the report's header (episodes per
//     evaluation, evaluations and runs);
//   - with a target, a "Steps to return ≥ T" section in report.md and
//     report.html that sets steps to target by the mean of the last W
//     training episodes beside steps to target by evaluation episodes
//     (median [95% CI] (reached/seeds) and ratio to the baseline), a
//     "(training episodes)" note on the results table's steps-to-target
//     column, and a "Steps to target (evaluation)" column in the run
//     tables;
//   - in results.json, "evaluation" (EvaluationInfo) at the top level and,
//     with a target, "steps_to_target_eval" beside "steps_to_target" in
//     every run and arm; in results.csv, eval_episodes_min/max and the
//     steps_to_target_eval_* and steps_ratio_eval_* columns (results.tex
//     keeps the training-episode measure only).
//
// An experiment without evaluation rows gets none of these, not even a
// "not drawn" line: its report is what it was before the columns existed.
//
// Bootstrap intervals use
// Options.BootstrapReps replicates drawn from a PCG stream keyed by
// Options.Seed, the arm's name and the statistic, so a report of the same
// data is byte-for-byte the same.
//
// Learning curves smooth each seed's episode returns with a trailing
// moving average, resample seeds of different lengths onto a common grid of
// env steps by linear interpolation (Resample, CommonGrid: the range every
// seed of the arm covers, never extrapolated) and draw the across-seed IQM
// with its bootstrap band.
//
// # Figures
//
// Every arm keeps one colour (Okabe–Ito palette, by its position in the
// spec) in every figure. Figures are 7 inches wide, PNG at 150 dpi and SVG:
//
//	learning_curve          return vs env steps, IQM and 95% band per arm
//	learning_curve_wall     return vs wall-clock time
//	evaluation_curve        evaluation return vs env steps: per seed dots and a thin line, per arm the
//	                        learning curve's IQM and band over the range all seeds cover, the target
//	                        dashed; a log step axis when the arms' step counts differ by more than 10×.
//	                        Only when some run has evaluation rows
//	throughput              env steps/s per arm with CI, seeds as dots, speedup vs baseline
//	steps_to_target         sample efficiency: env steps to the target return, censored seeds marked
//	steps_to_target_eval    the same by evaluation episodes (only when some run has evaluation rows)
//	pipeline_distributions  box plots of staleness, inference batch size and queue wait per arm
//	utilization             cpu_util (and gpu_util, gpu_mem where sampled) vs wall-clock time
//	world_model             horizon and wm_val_loss vs env steps
//
// A figure whose data is absent (no target, or a column that is NaN in
// every row) is skipped, its old files are removed, and report.md says
// why. Golden images of the demo experiment (demo_test.go) in
// testdata/golden guard the main figures; after an intended change, look
// at the new renderings and run
//
//	go test ./reports -run Golden -regen
package reports
