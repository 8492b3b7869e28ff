package reports

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"
)

// writeMarkdown renders the report as GitHub-flavoured Markdown. Figures
// are relative links into figures/, so the file renders in place.
func writeMarkdown(w io.Writer, v *reportView) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "# %s\n\n", mdEscape(v.Title))
	mdTable(b, []string{"", ""}, factRows(v.Facts, true))
	if v.Partial {
		b.WriteString("\n> **Partial report.** The numbers below cover only the data on disk so far:\n")
		for _, r := range v.Reasons {
			fmt.Fprintf(b, "> - %s\n", mdEscape(r))
		}
	}
	if len(v.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range v.Notes {
			fmt.Fprintf(b, "- Note: %s\n", mdEscape(n))
		}
	}

	b.WriteString("\n## Results by arm\n\n")
	mdTable(b, v.ArmHeader, v.ArmRows)
	fmt.Fprintf(b, "\nFinal return is the mean return of a run's last %d episodes; ± is the sample standard deviation across seeds. "+
		"The IQM interval is a 95%% percentile bootstrap over seeds. Speedup is the arm's mean env steps/s over the baseline's. "+
		"Aggregates include every run with data, finished or not.\n", FinalEpisodes)

	if len(v.Figures) > 0 {
		b.WriteString("\n## Figures\n")
		for _, f := range v.Figures {
			png, svg := path.Join(figuresDir, f.Name+".png"), path.Join(figuresDir, f.Name+".svg")
			fmt.Fprintf(b, "\n![%s](%s)\n\n*%s* ([SVG](%s))\n", mdEscape(f.Title), png, mdEscape(f.Caption), svg)
		}
	}

	b.WriteString("\n## Runs\n\n")
	mdTable(b, v.RunHeader, v.RunRows)

	b.WriteString("\n## Build and hardware\n\n")
	b.WriteString(v.EnvHeader + "\n")
	if len(v.Env) > 0 {
		b.WriteString("\n")
		mdTable(b, []string{"", ""}, factRows(v.Env, true))
	}
	if len(v.Deps) > 0 {
		fmt.Fprintf(b, "\n<details><summary>%d module dependencies</summary>\n\n", len(v.Deps))
		mdTable(b, []string{"Module", "Version"}, factRows(v.Deps, false))
		b.WriteString("\n</details>\n")
	}
	return b.Flush()
}

// factRows turns key/value pairs into table rows, optionally bolding keys.
func factRows(facts [][2]string, bold bool) [][]string {
	rows := make([][]string, len(facts))
	for i, f := range facts {
		k := f[0]
		if bold {
			k = "**" + k + "**"
		}
		rows[i] = []string{k, f[1]}
	}
	return rows
}

// mdTable writes a pipe table; cells are escaped except for the ** of
// bold keys.
func mdTable(w io.Writer, header []string, rows [][]string) {
	line := func(cells []string) {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = mdCell(c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(esc, " | "))
	}
	line(header)
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = "---"
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(sep, "|"))
	for _, r := range rows {
		line(r)
	}
}

// mdCell escapes a table cell: pipes would end the cell, newlines the row.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// mdEscape escapes the characters that would start HTML or a link in
// running text (names come from user specs).
func mdEscape(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`).Replace(s)
}
