package reports

import (
	"fmt"
	"io"
	"path/filepath"
)

// Output file names written by Generate inside the experiment directory.
const (
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
	ResultsFile  = "results.json"
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
	Figures     []string // paths of the figure files, PNG and SVG
	Partial     bool     // some run is missing, unfinished or unreadable
	Reasons     []string // why the report is partial
}

// Generate reads everything under expDir and writes report.md, report.html,
// results.json and figures/ there. It never runs training. It works on
// partial experiments — runs that have not started, are still running, have
// no summary yet or failed — and says so in the report and in Report.Partial.
// It fails only when expDir is unreadable or an output cannot be written.
func Generate(expDir string, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	e, err := collect(expDir)
	if err != nil {
		return nil, fmt.Errorf("generate report: %w", err)
	}
	res := computeResults(e, opts)

	var figs []*figure
	for _, render := range []func() (*figure, error){
		func() (*figure, error) { return learningCurveFigure(e, opts, false) },
		func() (*figure, error) { return learningCurveFigure(e, opts, true) },
		func() (*figure, error) { return throughputFigure(e, res) },
	} {
		f, err := render()
		if err != nil {
			return nil, fmt.Errorf("generate report for %q: %w", expDir, err)
		}
		if f != nil {
			figs = append(figs, f)
		}
	}

	rep := &Report{Dir: expDir, Partial: e.Partial(), Reasons: e.Reasons,
		Markdown: filepath.Join(expDir, MarkdownFile), ResultsJSON: filepath.Join(expDir, ResultsFile)}
	for _, f := range figs {
		paths, err := f.save(expDir)
		if err != nil {
			return nil, fmt.Errorf("generate report: %w", err)
		}
		rep.Figures = append(rep.Figures, paths...)
	}
	if err := WriteJSON(rep.ResultsJSON, res); err != nil {
		return nil, fmt.Errorf("generate report: %w", err)
	}
	v := buildView(e, res, figs, opts)
	if err := writeAtomic(rep.Markdown, func(w io.Writer) error { return writeMarkdown(w, v) }); err != nil {
		return nil, fmt.Errorf("generate report: write %q: %w", rep.Markdown, err)
	}
	if !opts.NoHTML {
		rep.HTML = filepath.Join(expDir, HTMLFile)
		if err := writeAtomic(rep.HTML, func(w io.Writer) error { return writeHTML(w, v) }); err != nil {
			return nil, fmt.Errorf("generate report: write %q: %w", rep.HTML, err)
		}
	}
	return rep, nil
}
