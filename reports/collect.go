package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/accerl/accerl/runstore"
)

// FinalEpisodes is how many of a run's last episodes its final return
// averages.
const FinalEpisodes = 100

// Run states that Generate derives when a run has no summary.
const (
	statusMissing = "missing" // no run directory: the run has not started
	statusPending = "pending" // a directory but no committed segment and no summary
)

// runData is everything on disk about one run plus the numbers derived
// from it.
type runData struct {
	Arm      string
	Seed     uint64
	Dir      string
	Manifest *runstore.RunManifest
	Summary  *runstore.RunSummary
	Pretrain *runstore.PretrainSummary // the behaviour-cloning warm start, nil without one
	PixelWM  *pixelWMScores            // the pretrained pixel world model, nil without one
	Metrics  []runstore.MetricsRow
	Episodes []runstore.EpisodeRow

	Status       string
	EnvSteps     int64
	Updates      int64
	NumEpisodes  int64
	FinalReturn  float64 // mean of the last FinalEpisodes episodes, NaN if none
	StepsPerS    float64 // NaN if unknown
	WallS        float64 // NaN if unknown
	ParamsSHA256 string
	Problem      string // why the run's data could not be read, if so
}

// hasData reports whether the run contributes numbers to aggregates.
func (r *runData) hasData() bool {
	return r.Summary != nil || len(r.Metrics) > 0 || len(r.Episodes) > 0
}

// experimentData is an experiment directory as read from disk.
type experimentData struct {
	Dir      string
	Manifest *runstore.ExperimentManifest // nil when experiment.json is missing
	Name     string
	SpecHash string
	Baseline string
	Target   *TargetInfo // nil without a target return; set by Generate
	Arms     []string
	Seeds    []uint64
	Runs     []*runData // arm-major, in Arms × Seeds order
	Reasons  []string   // why the report is partial; empty when complete
	Notes    []string   // other remarks for the reader
}

// Partial reports whether some run is not completed or some data is missing.
func (e *experimentData) Partial() bool { return len(e.Reasons) > 0 }

// runsOf returns the runs of one arm in seed order.
func (e *experimentData) runsOf(arm string) []*runData {
	var out []*runData
	for _, r := range e.Runs {
		if r.Arm == arm {
			out = append(out, r)
		}
	}
	return out
}

// latestUpdate is the newest summary timestamp, the "data as of" time.
func (e *experimentData) latestUpdate() time.Time {
	var t time.Time
	for _, r := range e.Runs {
		if r.Summary != nil && r.Summary.Updated.After(t) {
			t = r.Summary.Updated
		}
	}
	return t
}

// collect reads an experiment directory. Only an unreadable experiment.json
// or a missing expDir is an error; anything else missing makes the result
// partial.
func collect(expDir string) (*experimentData, error) {
	if st, err := os.Stat(expDir); err != nil {
		return nil, fmt.Errorf("read experiment: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("read experiment: %q is not a directory", expDir)
	}
	e := &experimentData{Dir: expDir}
	var m runstore.ExperimentManifest
	switch err := runstore.ReadJSON(filepath.Join(expDir, runstore.ExperimentFile), &m); {
	case err == nil:
		e.Manifest = &m
		e.Name, e.SpecHash, e.Baseline = m.Name, m.SpecHash, m.Baseline
		e.Arms, e.Seeds = slices.Clone(m.Arms), slices.Clone(m.Seeds)
	case errors.Is(err, fs.ErrNotExist):
		e.Reasons = append(e.Reasons, "experiment.json is missing; arms and seeds were discovered from the run directories")
		arms, seeds, err := discoverRuns(expDir)
		if err != nil {
			return nil, fmt.Errorf("read experiment %q: %w", expDir, err)
		}
		e.Arms, e.Seeds = arms, seeds
	default:
		return nil, fmt.Errorf("read experiment %q: %w", expDir, err)
	}
	if e.Name == "" {
		e.Name = filepath.Base(filepath.Clean(expDir))
	}
	if e.Baseline == "" && len(e.Arms) > 0 {
		e.Baseline = e.Arms[0]
		if e.Manifest != nil {
			e.Notes = append(e.Notes, fmt.Sprintf("No baseline arm named in experiment.json; speedups are relative to the first arm, %q.", e.Baseline))
		}
	}
	if e.Baseline != "" && !slices.Contains(e.Arms, e.Baseline) {
		e.Notes = append(e.Notes, fmt.Sprintf("Baseline arm %q is not among the arms; no speedups are given.", e.Baseline))
	}
	var notDone []string
	for _, arm := range e.Arms {
		for _, seed := range e.Seeds {
			r := readRunData(arm, seed, runstore.RunDir(expDir, arm, seed))
			e.Runs = append(e.Runs, r)
			if r.Status != runstore.StatusCompleted {
				why := r.Status
				if r.Summary != nil && r.Summary.Error != "" {
					why += ": " + r.Summary.Error // say why it failed, not only that it did
				}
				notDone = append(notDone, fmt.Sprintf("%s/seed-%d (%s)", arm, seed, why))
			}
			if r.Problem != "" {
				e.Reasons = append(e.Reasons, fmt.Sprintf("%s/seed-%d: %s", arm, seed, r.Problem))
			}
			if r.Summary != nil {
				// Problems that did not stop the run (a corrupt checkpoint skipped) are part
				// of its record: the report says them.
				for _, w := range r.Summary.Warnings {
					e.Notes = append(e.Notes, fmt.Sprintf("%s/seed-%d: %s", arm, seed, w))
				}
			}
		}
	}
	if len(e.Runs) == 0 {
		e.Reasons = append(e.Reasons, "no runs found")
	}
	if len(notDone) > 0 {
		e.Reasons = append(e.Reasons, fmt.Sprintf("%d of %d runs not completed: %s", len(notDone), len(e.Runs), strings.Join(notDone, ", ")))
	}
	return e, nil
}

// discoverRuns lists <arm>/seed-<n> directories below expDir: arms sorted
// by name, seeds as the sorted union over arms.
func discoverRuns(expDir string) (arms []string, seeds []uint64, err error) {
	entries, err := os.ReadDir(expDir)
	if err != nil {
		return nil, nil, err
	}
	seen := map[uint64]bool{}
	for _, a := range entries {
		if !a.IsDir() || strings.HasPrefix(a.Name(), ".") || a.Name() == figuresDir {
			continue
		}
		sub, err := os.ReadDir(filepath.Join(expDir, a.Name()))
		if err != nil {
			return nil, nil, err
		}
		found := false
		for _, s := range sub {
			digits, ok := strings.CutPrefix(s.Name(), "seed-")
			if !s.IsDir() || !ok {
				continue
			}
			seed, err := strconv.ParseUint(digits, 10, 64)
			if err != nil {
				continue
			}
			found = true
			if !seen[seed] {
				seen[seed] = true
				seeds = append(seeds, seed)
			}
		}
		if found {
			arms = append(arms, a.Name())
		}
	}
	slices.Sort(seeds)
	return arms, seeds, nil
}

// readRunData reads one run directory and derives its numbers. A summary is
// the engine's word on counters and throughput; without one the last
// metrics row stands in. The final return always comes from the episodes
// when there are any, so it is computed the same way for every run.
func readRunData(arm string, seed uint64, dir string) *runData {
	r := &runData{Arm: arm, Seed: seed, Dir: dir, FinalReturn: math.NaN(), StepsPerS: math.NaN(), WallS: math.NaN()}
	if _, err := os.Stat(dir); err != nil {
		r.Status = statusMissing
		return r
	}
	var m runstore.RunManifest
	if err := runstore.ReadJSON(filepath.Join(dir, runstore.RunFile), &m); err == nil {
		r.Manifest = &m
	} else if !errors.Is(err, fs.ErrNotExist) {
		r.Problem = err.Error()
	}
	var s runstore.RunSummary
	if err := runstore.ReadJSON(filepath.Join(dir, runstore.SummaryFile), &s); err == nil {
		r.Summary = &s
	} else if !errors.Is(err, fs.ErrNotExist) {
		r.Problem = err.Error()
	}
	var pre runstore.PretrainSummary
	if err := runstore.ReadJSON(filepath.Join(dir, runstore.PretrainFile), &pre); err == nil {
		r.Pretrain = &pre
	} else if !errors.Is(err, fs.ErrNotExist) {
		r.Problem = err.Error()
	}
	var px pixelWMScores
	if err := runstore.ReadJSON(filepath.Join(dir, filepath.FromSlash(runstore.PixelWorldModelFile)), &px); err == nil {
		r.PixelWM = &px
	} else if !errors.Is(err, fs.ErrNotExist) {
		r.Problem = err.Error()
	}
	metrics, episodes, err := runstore.ReadRun(dir)
	var bad runstore.UnreadableSegments
	switch {
	case errors.As(err, &bad):
		r.Problem = unreadableProblem(bad)
	case err != nil:
		r.Problem = err.Error()
	}
	r.Metrics, r.Episodes = metrics, episodes

	switch {
	case r.Summary != nil && r.Summary.Status != "":
		r.Status = r.Summary.Status
	case r.Summary != nil || len(metrics) > 0:
		r.Status = runstore.StatusRunning
	default:
		r.Status = statusPending
	}
	if s := r.Summary; s != nil {
		r.EnvSteps, r.Updates, r.NumEpisodes = s.EnvSteps, s.Updates, s.Episodes
		r.StepsPerS, r.WallS, r.ParamsSHA256 = s.StepsPerS, s.WallS, s.ParamsSHA256
		r.FinalReturn = s.FinalReturn
	} else if n := len(metrics); n > 0 {
		last := metrics[n-1]
		r.EnvSteps, r.Updates, r.WallS = last.EnvSteps, last.Updates, last.WallS
		r.NumEpisodes = int64(len(episodes))
	}
	if !(r.StepsPerS > 0) && r.WallS > 0 {
		r.StepsPerS = float64(r.EnvSteps) / r.WallS
	}
	if len(episodes) > 0 {
		r.FinalReturn = finalReturn(episodes)
		if r.NumEpisodes == 0 { // a summary that does not count episodes
			r.NumEpisodes = int64(len(episodes))
		}
	}
	return r
}

// unreadableProblem says which segment files of a run could not be read, that the report
// leaves them out, and what to do about it.
func unreadableProblem(bad runstore.UnreadableSegments) string {
	msgs := make([]string, len(bad))
	for i, b := range bad {
		msgs[i] = fmt.Sprintf("%s is corrupt (%v), so the report leaves out segment %d's rows", b.Path, b.Err, b.Segment)
	}
	return strings.Join(msgs, "; ") + "; restore the file from a backup, or delete it to report without that segment"
}

// finalReturn is the mean return of the last FinalEpisodes episodes.
func finalReturn(episodes []runstore.EpisodeRow) float64 {
	tail := episodes[max(0, len(episodes)-FinalEpisodes):]
	var rets []float64
	for _, e := range tail {
		rets = append(rets, e.Return)
	}
	return mean(finite(rets))
}
