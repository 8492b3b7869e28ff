package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/accerl/accerl/workflows"
)

// progressView draws one progress bar per run. On a terminal it redraws the bars in place,
// each cut to the terminal's width; otherwise (a pipe, a CI log) it prints a block of lines
// of at most 80 columns every 10 seconds and at the end.
type progressView struct {
	w        io.Writer
	tty      bool
	width    func() int // columns available to a line
	drawn    int        // lines drawn last time (terminal mode)
	last     time.Time
	lastText string
	now      func() time.Time
	rates    map[string][]rateSample // recent (time, env steps) per run, for the current rate
	// note is a line shown under the runs (the server is unreachable), or "".
	note string
}

// rateSample is one observation of a run's env-step counter.
type rateSample struct {
	t     time.Time
	steps int64
}

// rateWindow is how far back the current rate looks: long enough to span a few training
// segments' reports, short enough to show a slowdown within a minute.
const rateWindow = 30 * time.Second

func newProgressView(w io.Writer) *progressView {
	v := &progressView{w: w, tty: isTerminal(w), width: func() int { return 80 }, now: time.Now, rates: map[string][]rateSample{}}
	if f, ok := w.(*os.File); ok && v.tty {
		v.width = func() int {
			if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
				return cols
			}
			return 80
		}
	}
	return v
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

const barWidth = 10

// currentRate records p's counter and returns its env steps per second now, not the
// average since the start. The counter moves in steps, once per update, and an update can
// take longer than a window of readings (a VLA's 4,096 steps take most of a minute on 2
// cores), so the history keeps the first reading at each new value: the rate is the steps
// between the latest move and the latest earlier one at least rateWindow before it (else
// the earliest kept), over the time between them, or over the time since the latest move
// when that is longer, so that a run that stops moving decays toward 0/s instead of
// showing its last rate. Until two moves 5 seconds apart have been seen it falls back to
// the run's average.
func (v *progressView) currentRate(p workflows.RunProgress) float64 {
	now := v.now()
	h := v.rates[p.ID]
	if len(h) == 0 || h[len(h)-1].steps != p.EnvSteps {
		h = append(h, rateSample{now, p.EnvSteps})
	}
	c, b := len(h)-1, 0
	for i := c - 1; i >= 0; i-- {
		if h[c].t.Sub(h[i].t) >= rateWindow {
			b = i
			break
		}
	}
	h = h[b:]
	v.rates[p.ID] = h
	c, b = len(h)-1, 0
	span := h[c].t.Sub(h[b].t).Seconds()
	if c == 0 || span < 5 {
		return p.StepsPerS()
	}
	return float64(h[c].steps-h[b].steps) / max(span, now.Sub(h[c].t).Seconds())
}

// progressLine renders one run in at most width columns: its id, a bar, the share of the
// budget, the steps, the current rate, the elapsed training time, the ETA at the current
// rate, the recent return (and evaluation) and the status. Fields that do not fit are left
// out from the right, except the status, which stays; a long id is cut. A last error follows
// on a second line.
func progressLine(p workflows.RunProgress, rate float64, width int) string {
	frac := 0.0
	if p.BudgetSteps > 0 {
		frac = min(1, float64(p.EnvSteps)/float64(p.BudgetSteps))
	}
	if p.Status == workflows.StatusCompleted {
		frac = 1
	}
	full := int(frac * barWidth)
	bar := strings.Repeat("█", full) + strings.Repeat("░", barWidth-full)
	head := fmt.Sprintf("%s %3.0f%% %s/%s", bar, 100*frac, shortInt(p.EnvSteps), shortInt(p.BudgetSteps))
	// In order of priority: what is cut first is last.
	fields := []string{fmt.Sprintf("%s/s", shortFloat(rate))}
	if p.Status == workflows.StatusRunning && rate > 0 && p.BudgetSteps > p.EnvSteps {
		fields = append(fields, "ETA "+shortDuration(float64(p.BudgetSteps-p.EnvSteps)/rate))
	}
	if p.Episodes > 0 {
		fields = append(fields, fmt.Sprintf("ret %.4g", p.RecentReturn))
	}
	if p.HasEval {
		fields = append(fields, fmt.Sprintf("eval %.4g", p.EvalReturn))
	}
	fields = append(fields, "T "+shortDuration(p.WallS))
	tail := p.Status
	id := p.ID
	const idWidth = 16
	if n := utf8.RuneCountInString(id); n > idWidth {
		id = "…" + string([]rune(id)[n-idWidth+1:])
	}
	room := width - 1 - utf8.RuneCountInString(p.Status) // what the line may take before the status
	line := cut(fmt.Sprintf("%-*s %s", idWidth, id, head), room)
	for _, f := range fields {
		if utf8.RuneCountInString(line)+1+utf8.RuneCountInString(f) > room {
			break
		}
		line += " " + f
	}
	line = cut(line+" "+tail, width)
	if p.LastError != "" {
		// On a line of its own, where it has the room to say what is wrong and what to do.
		line += "\n" + cut("  ↳ "+p.LastError, width)
	}
	return line
}

// cut shortens s to at most n columns, marking a cut with "…".
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:max(n-1, 0)]) + "…"
	}
	return s
}

// shortInt writes n in at most 6 characters: 12,345 as 12.3k, 1,234,567 as 1.23M.
func shortInt(n int64) string {
	switch {
	case n < 10_000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1e3, 'g', 3, 64) + "k"
	default:
		return strconv.FormatFloat(float64(n)/1e6, 'g', 3, 64) + "M"
	}
}

// shortFloat writes a rate with 3 significant digits, no exponent below a million.
func shortFloat(x float64) string {
	if x == 0 {
		return "0"
	}
	if x >= 1000 {
		return shortInt(int64(x))
	}
	return strconv.FormatFloat(x, 'f', max(0, 2-int(math.Floor(math.Log10(max(x, 1))))), 64)
}

// shortDuration writes seconds as 45s, 12m05s or 3h07m.
func shortDuration(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

func (v *progressView) render(ps []workflows.RunProgress) {
	var lines []string
	width := v.width()
	for _, p := range ps {
		lines = append(lines, strings.Split(progressLine(p, v.currentRate(p), width), "\n")...)
	}
	if v.note != "" {
		for _, l := range strings.Split(v.note, "\n") {
			lines = append(lines, cut(l, width))
		}
	}
	text := strings.Join(lines, "\n")
	if v.tty {
		if v.drawn > 0 {
			fmt.Fprintf(v.w, "\x1b[%dA", v.drawn)
		}
		for _, l := range lines {
			fmt.Fprintf(v.w, "\x1b[2K%s\n", l)
		}
		v.drawn = len(lines)
		return
	}
	v.lastText = text
	if time.Since(v.last) >= 10*time.Second {
		v.flush(text)
	}
}

func (v *progressView) flush(text string) {
	fmt.Fprintf(v.w, "[%s]\n%s\n", time.Now().Format("15:04:05"), text)
	v.last = time.Now()
	v.lastText = ""
}

// finish prints the final state in non-terminal mode.
func (v *progressView) finish() {
	if !v.tty && v.lastText != "" {
		v.flush(v.lastText)
	}
}

func printResults(w io.Writer, res workflows.ExperimentResult) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	evals := slices.ContainsFunc(res.Runs, func(r workflows.RunResult) bool { return r.HasEval })
	head := "RUN\tSTATUS\tENV STEPS\tUPDATES\tRETURN (last 100)"
	if evals {
		head += "\tEVAL (last)"
	}
	fmt.Fprintln(tw, head+"\tSTEPS/S\tWALL")
	for _, r := range res.Runs {
		// Four significant digits: a return of 475.3 and a success rate of 0.04 both read right.
		ret := fmt.Sprintf("%.4g", r.RecentReturn)
		switch {
		case evals && r.HasEval:
			ret += fmt.Sprintf("\t%.4g", r.EvalReturn)
		case evals:
			ret += "\t—"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%.0f\t%s\n", r.ID, r.Status, r.EnvSteps, r.Updates, ret, r.StepsPerS(), (time.Duration(r.WallS * float64(time.Second))).Round(time.Second/10))
	}
	_ = tw.Flush()
	for _, r := range res.Runs {
		if r.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", r.ID, r.Error)
		}
	}
}

// humanInt writes n with thousands separators.
func humanInt(n int64) string {
	s := fmt.Sprintf("%d", n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return b.String()
}
