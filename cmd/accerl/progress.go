package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/accerl/accerl/workflows"
)

// progressView draws one progress bar per run. On a terminal it redraws the bars in place;
// otherwise (a pipe, a CI log) it prints a block of lines every 10 seconds and at the end.
type progressView struct {
	w        io.Writer
	tty      bool
	drawn    int // lines drawn last time (terminal mode)
	last     time.Time
	lastText string
}

func newProgressView(w io.Writer) *progressView {
	return &progressView{w: w, tty: isTerminal(w)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

const barWidth = 24

// progressLine renders one run as a bar with its counters.
func progressLine(p workflows.RunProgress) string {
	frac := 0.0
	if p.BudgetSteps > 0 {
		frac = min(1, float64(p.EnvSteps)/float64(p.BudgetSteps))
	}
	if p.Status == workflows.StatusCompleted {
		frac = 1
	}
	full := int(frac * barWidth)
	bar := strings.Repeat("█", full) + strings.Repeat("░", barWidth-full)
	ret := "     —"
	if p.Episodes > 0 {
		ret = fmt.Sprintf("%6.1f", p.RecentReturn)
	}
	if p.HasEval {
		ret += fmt.Sprintf("  eval %6.1f", p.EvalReturn)
	}
	line := fmt.Sprintf("%-20s %s %3.0f%%  %9s/%-9s steps  %5d upd  return %s  %7.0f steps/s  %s",
		p.ID, bar, 100*frac, humanInt(p.EnvSteps), humanInt(p.BudgetSteps), p.Updates, ret, p.StepsPerS(), p.Status)
	if p.LastError != "" {
		line += "  (" + p.LastError + ")"
	}
	return line
}

func (v *progressView) render(ps []workflows.RunProgress) {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = progressLine(p)
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
		ret := fmt.Sprintf("%.1f", r.RecentReturn)
		switch {
		case evals && r.HasEval:
			ret += fmt.Sprintf("\t%.1f", r.EvalReturn)
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
