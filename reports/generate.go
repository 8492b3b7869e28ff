package reports

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/accerl/accerl/runstore"
)

// Output file names written by Generate inside the experiment directory.
const (
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
	ResultsFile  = "results.json"
	CSVFile      = "results.csv"
	LaTeXFile    = "results.tex"
)

// Options tune Generate. The zero value is valid: every zero field takes the
// default given in its comment.
type Options struct {
	// BootstrapReps is the number of bootstrap replicates behind every IQM
	// confidence interval (default 2000). More replicates give steadier
	// interval ends and cost linear time.
	BootstrapReps int
	// Seed seeds the bootstrap RNG (default 0). A report of the same data
	// with the same Seed is byte-for-byte the same.
	Seed uint64
	// SmoothWindow is the number of episodes in the trailing moving average
	// of a learning curve (default 20). Larger windows give smoother but
	// later-reacting curves.
	SmoothWindow int
	// GridPoints is the number of points of the common env-step grid that
	// seeds are resampled onto (default 100).
	GridPoints int
	// Aggregate selects the learning-curve line and band: AggregateIQM
	// (default; IQM with a 95% bootstrap interval) or AggregateMean (mean
	// with a min–max band).
	Aggregate Aggregation
	// NoHTML skips report.html.
	NoHTML bool
	// Target is the episode return that counts as solving the task (for
	// example 475 for CartPole-v1). It enables the steps-to-target figure,
	// the optimality gap and their table columns, and steps to target by
	// evaluation episodes when runs have any. nil (default) falls back
	// to the "target" of experiment.json; without either those are
	// skipped. Write Options{Target: new(475.0)}.
	Target *float64
	// RandomScore is the return that normalises to 0 in the optimality
	// gap, for example that of a random policy (default: experiment.json's
	// "random_score", else 0). Only used with a target.
	RandomScore *float64
}

func (o Options) withDefaults() Options {
	if o.BootstrapReps <= 0 {
		o.BootstrapReps = 2000
	}
	if o.SmoothWindow <= 0 {
		o.SmoothWindow = 20
	}
	if o.GridPoints < 2 {
		o.GridPoints = 100
	}
	if o.Aggregate != AggregateMean {
		o.Aggregate = AggregateIQM
	}
	return o
}

// Report lists what Generate wrote. Paths are inside Dir.
type Report struct {
	Dir         string   // the experiment directory
	Markdown    string   // path of report.md
	HTML        string   // path of report.html; empty with Options.NoHTML
	ResultsJSON string   // path of results.json
	CSV         string   // path of results.csv, the per-arm table
	LaTeX       string   // path of results.tex, the per-arm table (booktabs)
	Figures     []string // paths of the figure files, PNG and SVG
	Skipped     []string // names of figures not drawn for lack of data (see report.md for why)
	Partial     bool     // some run is missing, unfinished or unreadable
	Reasons     []string // why the report is partial
}

// skippedFigure is a figure that Generate did not draw, and why.
type skippedFigure struct {
	Name, Title, Reason string
}

// Generate reads everything under expDir and writes report.md,
// report.html, results.json, results.csv, results.tex and figures/ there.
// It never runs training. It works on partial experiments — runs that have
// not started, are still running, have no summary yet or failed — and says
// so in the report and in Report.Partial. A figure whose data is absent is
// skipped (its old files are removed) and report.md says why. Generate
// fails only when expDir is unreadable or an output cannot be written.
func Generate(expDir string, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	e, err := collect(expDir)
	if err != nil {
		return nil, fmt.Errorf("generate report: %w", err)
	}
	e.Target = resolveTarget(e, opts)
	res, targets := computeResults(e, opts)

	in := &figureInput{e: e, res: res, targets: targets, opts: opts}
	var figs []*figure
	var skipped []skippedFigure // not drawn for lack of data; report.md says why
	var undrawn []string        // every figure not drawn, whose old files are removed
	for _, spec := range figureSpecs() {
		f, reason, err := spec.render(in)
		if err != nil {
			return nil, fmt.Errorf("generate report for %q: %w", expDir, err)
		}
		if f == nil {
			undrawn = append(undrawn, spec.name)
			if reason != "" {
				skipped = append(skipped, skippedFigure{Name: spec.name, Title: spec.title, Reason: reason})
			}
			continue
		}
		figs = append(figs, f)
	}

	rep := &Report{Dir: expDir, Partial: e.Partial(), Reasons: e.Reasons,
		Markdown: filepath.Join(expDir, MarkdownFile), ResultsJSON: filepath.Join(expDir, ResultsFile),
		CSV: filepath.Join(expDir, CSVFile), LaTeX: filepath.Join(expDir, LaTeXFile)}
	for _, f := range figs {
		paths, err := f.save(expDir)
		if err != nil {
			return nil, fmt.Errorf("generate report: %w", err)
		}
		rep.Figures = append(rep.Figures, paths...)
	}
	for _, s := range skipped {
		rep.Skipped = append(rep.Skipped, s.Name)
	}
	for _, name := range undrawn {
		for _, ext := range []string{".png", ".svg"} {
			old := filepath.Join(expDir, figuresDir, name+ext)
			if err := os.Remove(old); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("generate report: remove stale figure: %w", err)
			}
		}
	}
	if err := runstore.WriteJSON(rep.ResultsJSON, res); err != nil {
		return nil, fmt.Errorf("generate report: %w", err)
	}
	tab := buildArmTable(e, res)
	for _, out := range []struct {
		path  string
		write func(io.Writer) error
	}{
		{rep.CSV, tab.writeCSV},
		{rep.LaTeX, func(w io.Writer) error { return tab.writeLaTeX(w, e) }},
	} {
		if err := runstore.WriteFileAtomic(out.path, out.write); err != nil {
			return nil, fmt.Errorf("generate report: write %q: %w", out.path, err)
		}
	}
	v := buildView(e, res, tab, figs, skipped, opts)
	if err := runstore.WriteFileAtomic(rep.Markdown, func(w io.Writer) error { return writeMarkdown(w, v) }); err != nil {
		return nil, fmt.Errorf("generate report: write %q: %w", rep.Markdown, err)
	}
	if !opts.NoHTML {
		rep.HTML = filepath.Join(expDir, HTMLFile)
		if err := runstore.WriteFileAtomic(rep.HTML, func(w io.Writer) error { return writeHTML(w, v) }); err != nil {
			return nil, fmt.Errorf("generate report: write %q: %w", rep.HTML, err)
		}
	}
	return rep, nil
}
