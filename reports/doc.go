// Package reports turns the on-disk record of an experiment (package
// runstore) into a paper-style report: Markdown, a self-contained HTML page,
// results.json for scripts, a results table as CSV and LaTeX, and figures as
// PNG and SVG.
//
// The engine writes; reports only reads what is already on disk. Generate
// never runs training, so a report can be produced at any time, including
// while an experiment is still running (it then says the report is partial).
// The package imports no other accerl package but runstore, and nothing from
// Temporal.
//
// # Output
//
// Generate writes, into the experiment directory (its layout, the metrics
// and episodes files and their columns are described in package runstore):
//
//	report.md                        the report
//	report.html                      the same, images inlined as data URIs
//	results.json                     per-run numbers and per-arm aggregates (Results)
//	results.csv, results.tex         the per-arm table
//	figures/*.png, figures/*.svg     the figures listed under Figures
//
// Every number in the report links to where it comes from: per-run cells to
// <arm>/seed-<n>/manifest.json, per-arm aggregates to the arm's run list.
// Files are written atomically (runstore.WriteFileAtomic), so a reader never
// sees a half-written report.
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
