// Package reports owns the on-disk record of an experiment — run metrics,
// manifests and summaries — and turns that record into a report: Markdown,
// a self-contained HTML page, results.json for scripts, and figures.
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
//	  figures/*.png, figures/*.svg     written by Generate
//
// # Metrics files
//
// Each table is an Arrow IPC file (the "Feather v2" random-access format,
// readable by pyarrow.feather / pyarrow.ipc.open_file, polars.read_ipc and
// the apache-arrow JavaScript package). Column names are snake_case; the
// full list is on MetricsRow and EpisodeRow. Integers are int32/int64,
// everything else is float64. "Not applicable" is stored as a NaN value
// (for example success in an environment without a success signal, gpu_mem
// on a machine without a GPU), never as an Arrow null, so a float column
// round-trips bit for bit. The schema carries the metadata key
// "accerl.table" ("metrics" or "episodes") and "accerl.schema_version".
//
// Rows are keyed by (segment, step) for metrics and (segment, env_steps)
// for episodes. Segments are numbered from 1. Every segment lives in its own
// file, and WriteSegment writes a file under a hidden temporary name in the
// same directory, fsyncs it, renames it into place and fsyncs the
// directory. A retried segment therefore replaces its files as a whole:
// rows are never duplicated, and a reader that runs concurrently sees either
// the old or the new file, never a torn one. The episodes file is written
// before the metrics file, and ReadRun only reads segments whose metrics file
// exists, so the metrics file is the commit marker of a segment; a report
// read mid-run sees a consistent prefix. Readers skip anything that is not
// named exactly seg-NNNNNN.arrow (temporary files included).
//
// JSON files (manifests, summaries, results.json) are written the same
// atomic way by WriteJSON. Float fields that may be NaN (a run with no
// finished episode has no final return) are written as null and read back
// as NaN.
//
// # Report
//
// Generate aggregates the seeds of every arm. A run's counters and
// throughput come from its summary.json; a run without one (still in its
// first segments) falls back to its last metrics row, and a run without a
// directory is listed as missing. Any run that is not completed makes the
// report partial, which report.md, report.html and results.json all say. The final return of a run is
// the mean return of its last 100 episodes. Per arm it reports the mean ± the
// sample standard deviation across seeds, the interquartile mean (IQM,
// Agarwal et al. 2021, "Deep RL at the edge of the statistical precipice")
// with a 95% percentile-bootstrap confidence interval, throughput in env
// steps per second and the speedup against the baseline arm (the ratio of
// mean steps per second). Learning curves smooth each seed's episode returns
// with a trailing moving average, resample them onto a common grid by
// linear interpolation (see Resample) and draw the across-seed aggregate
// with a filled band. Every arm keeps one colour in every figure.
package reports
