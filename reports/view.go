package reports

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// reportView is the content of a report as formatted strings, shared by
// the Markdown and the HTML renderer so that both say the same thing.
type reportView struct {
	Title     string
	Facts     [][2]string // key, value; values are plain text
	Partial   bool
	Reasons   []string
	Notes     []string
	ArmHeader []string
	ArmRows   [][]string
	RunHeader []string
	RunRows   [][]string
	Figures   []*figure
	EnvHeader string      // where the build/hardware summary comes from
	Env       [][2]string // build and hardware facts
	Deps      [][2]string // module path, version
}

// buildView formats the experiment for the report.
func buildView(e *experimentData, res Results, figs []*figure, opts Options) *reportView {
	v := &reportView{Title: "Report: " + e.Name, Partial: e.Partial(), Reasons: e.Reasons, Notes: e.Notes, Figures: figs}
	status := fmt.Sprintf("complete: all %d runs completed", len(e.Runs))
	if v.Partial {
		status = "PARTIAL (see below)"
	}
	v.Facts = [][2]string{
		{"Experiment", e.Name},
		{"Spec hash", orNA(e.SpecHash)},
		{"Status", status},
		{"Arms × seeds", fmt.Sprintf("%d × %d = %d runs", len(e.Arms), len(e.Seeds), len(e.Runs))},
		{"Baseline arm", orNA(e.Baseline)},
	}
	if t := e.latestUpdate(); !t.IsZero() {
		v.Facts = append(v.Facts, [2]string{"Data as of", t.UTC().Format(time.RFC3339)})
	}

	v.ArmHeader = []string{"Arm", "Runs completed", "Final return (mean ± std)", "Final return IQM [95% CI]",
		"Env steps/s (mean ± std)", "Wall time (mean)", "Speedup vs baseline"}
	for _, a := range res.Arms {
		iqm := "n/a"
		if !math.IsNaN(float64(a.IQM)) {
			iqm = fmt.Sprintf("%s [%s, %s]", fmtNum(float64(a.IQM)), fmtNum(float64(a.IQMLow)), fmtNum(float64(a.IQMHigh)))
		}
		speedup := "n/a"
		if s := float64(a.Speedup); !math.IsNaN(s) {
			speedup = fmt.Sprintf("%.2f×", s)
		}
		name := a.Arm
		if a.Arm == e.Baseline {
			name += " (baseline)"
		}
		v.ArmRows = append(v.ArmRows, []string{name, fmt.Sprintf("%d / %d", a.Completed, a.Runs),
			fmtStat(a.FinalReturn), iqm, fmtStat(a.StepsPerS), fmtWall(float64(a.WallS.Mean)), speedup})
	}

	v.RunHeader = []string{"Arm", "Seed", "Status", "Env steps", "Updates", "Episodes", "Final return",
		"Env steps/s", "Wall time", "Params SHA-256"}
	for _, r := range res.Runs {
		sha := "n/a"
		if r.ParamsSHA256 != "" {
			sha = r.ParamsSHA256[:min(12, len(r.ParamsSHA256))]
		}
		v.RunRows = append(v.RunRows, []string{r.Arm, strconv.FormatUint(r.Seed, 10), r.Status,
			fmtInt(r.EnvSteps), fmtInt(r.Updates), fmtInt(r.Episodes), fmtNum(float64(r.FinalMeanReturn)),
			fmtNum(float64(r.StepsPerS)), fmtWall(float64(r.WallS)), sha})
	}
	buildEnv(v, e)
	return v
}

// buildEnv fills the build and hardware summary from the first run
// manifest, and notes when runs ran on different hardware or builds.
func buildEnv(v *reportView, e *experimentData) {
	var first *runData
	hw := map[string]bool{}
	builds := map[string]bool{}
	for _, r := range e.Runs {
		if r.Manifest == nil {
			continue
		}
		if first == nil {
			first = r
		}
		h := r.Manifest.Hardware
		hw[fmt.Sprintf("%d × %s, %s", h.CPUs, h.CPUModel, h.GPU)] = true
		b := r.Manifest.Build
		builds[b.Module+"@"+b.Version+" "+b.Revision+" "+b.GoVersion] = true
	}
	if first == nil {
		v.EnvHeader = "No run manifest found."
		return
	}
	m := first.Manifest
	v.EnvHeader = fmt.Sprintf("From the manifest of %s/seed-%d.", first.Arm, first.Seed)
	module := orNA(m.Build.Module)
	if m.Build.Version != "" {
		module += "@" + m.Build.Version
	}
	v.Env = [][2]string{
		{"Go", orNA(m.Build.GoVersion)},
		{"Module", module},
	}
	if m.Build.Revision != "" {
		v.Env = append(v.Env, [2]string{"Revision", m.Build.Revision})
	}
	v.Env = append(v.Env,
		[2]string{"CPU", fmt.Sprintf("%s (%d logical CPUs)", orNA(m.Hardware.CPUModel), m.Hardware.CPUs)},
		[2]string{"GPU", orNA(m.Hardware.GPU)},
		[2]string{"Platform", orNA(m.Hardware.Platform)},
	)
	if len(hw) > 1 {
		v.Notes = append(v.Notes, fmt.Sprintf("Runs ran on %d different hardware configurations: %s. Throughput comparisons across them are not like for like.",
			len(hw), strings.Join(slices.Sorted(maps.Keys(hw)), "; ")))
	}
	if len(builds) > 1 {
		v.Notes = append(v.Notes, fmt.Sprintf("Runs were produced by %d different builds.", len(builds)))
	}
	for _, path := range slices.Sorted(maps.Keys(m.Build.Deps)) {
		v.Deps = append(v.Deps, [2]string{path, m.Build.Deps[path]})
	}
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// fmtNum formats a float for a table: four significant digits at most for
// small magnitudes, whole numbers with thousands separators from 1,000.
func fmtNum(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case a >= 1e3:
		return fmtInt(int64(math.Round(v)))
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// fmtInt formats an integer with thousands separators: 1234567 -> 1,234,567.
func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtStat formats "mean ± std", or just the mean for a single seed.
func fmtStat(s Stat) string {
	switch {
	case s.N == 0:
		return "n/a"
	case s.N == 1:
		return fmtNum(float64(s.Mean)) + " (1 seed)"
	}
	return fmtNum(float64(s.Mean)) + " ± " + fmtNum(float64(s.Std))
}

// fmtWall formats seconds: "42.0 s" below a minute, else "1h2m3s".
func fmtWall(s float64) string {
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return "n/a"
	case s < 60:
		return strconv.FormatFloat(s, 'f', 1, 64) + " s"
	}
	return (time.Duration(math.Round(s)) * time.Second).String()
}
