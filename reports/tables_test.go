package reports

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// checkTables checks results.csv and results.tex of the fixture report
// (numbers as in TestGenerateComplete).
func checkTables(t *testing.T, rep *Report) {
	t.Helper()
	f, err := os.Open(rep.CSV)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("results.csv: %v", err)
	}
	if len(records) != 3 {
		t.Fatalf("results.csv has %d records, want a header and 2 arms", len(records))
	}
	col := map[string]int{}
	for i, name := range records[0] {
		col[name] = i
	}
	for _, c := range []struct {
		arm, column, want string
	}{
		{"sync", "is_baseline", "true"}, {"sync", "steps_per_s_mean", "1100"}, {"sync", "final_return_iqm_ci_low", "29"},
		{"sync", "prob_improvement", ""}, // none for the baseline
		{"sync", "steps_to_target_median", "395"}, {"sync", "target", "45"},
		{"async", "speedup", "3"}, {"async", "speedup_ci_high", "3.6"}, {"async", "prob_improvement", "0.5"},
		{"async", "steps_to_target_median", "inf"}, {"async", "steps_to_target_ci_low", "100"},
		{"async", "steps_to_target_lower_bound", "550"}, {"async", "steps_ratio_bound", ">"},
		{"async", "steps_to_target_reached", "1"}, {"async", "steps_to_target_seeds", "2"},
	} {
		row := records[1]
		if c.arm == "async" {
			row = records[2]
		}
		i, ok := col[c.column]
		if !ok {
			t.Errorf("results.csv has no column %q", c.column)
			continue
		}
		if row[0] != c.arm || row[i] != c.want {
			t.Errorf("results.csv %s/%s = %q, want %q", row[0], c.column, row[i], c.want)
		}
	}

	tex, err := os.ReadFile(rep.LaTeX)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(tex)), "\n")
	header := strings.Count(lines[4], " & ")
	for _, want := range []string{
		`\begin{tabular}{lrrrrrrrrrr}`, `\toprule`, `\midrule`, `\bottomrule`, `\end{tabular}`,
		`Steps to return $\geq$ 45, median [95\% CI]`,
		`sync (baseline) & 2 / 2 & 49.25 {\footnotesize[29.00, 69.50]} & 49.25 $\pm$ 28.64 & 1,100 {\footnotesize[1,000, 1,200]} & 1.00$\times$ & --- & 395 {\footnotesize[280, 510]} (2/2) & 1.00$\times$ &`,
		`async & 2 / 2 &`, `$>$550 (1/2) & $>$1.39$\times$ &`,
	} {
		if !bytes.Contains(tex, []byte(want)) {
			t.Errorf("results.tex lacks %q", want)
		}
	}
	for _, l := range lines {
		if strings.HasSuffix(l, `\\`) && strings.Count(l, " & ") != header {
			t.Errorf("results.tex row has %d column separators, header has %d: %s", strings.Count(l, " & "), header, l)
		}
	}
}

func TestTableHelpers(t *testing.T) {
	if got := latexEscape(`a_b & 50% #1 {x} $y ~^\`); got != `a\_b \& 50\% \#1 \{x\} \$y \textasciitilde{}\textasciicircum{}\textbackslash{}` {
		t.Errorf("latexEscape = %s", got)
	}
	for v, want := range map[float64]string{math.NaN(): "", math.Inf(1): "inf", 0.1: "0.1", 1100: "1100", -2.5e-7: "-2.5e-07"} {
		if got := csvFloat(v); got != want {
			t.Errorf("csvFloat(%v) = %q, want %q", v, got, want)
		}
	}
	got := runAnchors([]string{"sync", "Async WM", "async-wm", "gipo/σ=0.5"})
	if want := []string{"runs-sync", "runs-async-wm", "runs-async-wm-2", "runs-gipo-σ-0-5"}; !slices.Equal(got, want) {
		t.Errorf("runAnchors = %q, want %q", got, want)
	}
	if got := manifestLink("a b/c", 3); got != "a%20b%2Fc/seed-3/manifest.json" {
		t.Errorf("manifestLink = %q", got)
	}
}
