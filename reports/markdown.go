package reports

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"
)

// writeMarkdown renders the report as GitHub-flavoured Markdown. Figures
// and manifests are relative links, so the file renders in place.
func writeMarkdown(w io.Writer, v *reportView) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "# %s\n\n", mdEscape(v.Title))
	mdTable(b, []string{"", ""}, textCells(factRows(v.Facts, true)))
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
	mdTable(b, v.Arms.Header, v.Arms.Rows)
	fmt.Fprintf(b, "\n%s\n\n", mdEscape(v.ArmNote))
	for _, f := range v.Files {
		fmt.Fprintf(b, "- [%s](%s): %s\n", f[0], f[0], mdEscape(f[1]))
	}
	if t := v.Targets; t != nil {
		fmt.Fprintf(b, "\n## %s\n\n%s\n\n", mdEscape(t.Heading), mdEscape(t.Intro))
		mdTable(b, t.Table.Header, t.Table.Rows)
	}
	for _, t := range []*targetsView{v.Pretrain, v.Tasks, v.PixelWM} {
		if t != nil {
			fmt.Fprintf(b, "\n## %s\n\n%s\n\n", mdEscape(t.Heading), mdEscape(t.Intro))
			mdTable(b, t.Table.Header, t.Table.Rows)
			for _, im := range t.Images {
				fmt.Fprintf(b, "\n![%s](%s)\n", mdEscape(im[0]), im[1])
			}
		}
	}

	if len(v.Figures) > 0 || len(v.Skipped) > 0 {
		b.WriteString("\n## Figures\n")
		for _, f := range v.Figures {
			png, svg := path.Join(figuresDir, f.Name+".png"), path.Join(figuresDir, f.Name+".svg")
			fmt.Fprintf(b, "\n![%s](%s)\n\n*%s* ([SVG](%s))\n", mdEscape(f.Title), png, mdEscape(f.Caption), svg)
		}
		if len(v.Skipped) > 0 {
			b.WriteString("\nNot drawn, for lack of data:\n\n")
			for _, s := range v.Skipped {
				fmt.Fprintf(b, "- %s (`%s`): %s.\n", mdEscape(s.Title), s.Name, mdEscape(s.Reason))
			}
		}
	}

	b.WriteString("\n## Runs\n")
	for _, r := range v.Runs {
		fmt.Fprintf(b, "\n<a id=\"%s\"></a>\n\n### Runs of arm %s\n\n", r.Anchor, mdEscape(r.Arm))
		mdTable(b, r.Table.Header, r.Table.Rows)
	}

	b.WriteString("\n## Build and hardware\n\n")
	b.WriteString(v.EnvHeader + "\n")
	if len(v.Env) > 0 {
		b.WriteString("\n")
		mdTable(b, []string{"", ""}, textCells(factRows(v.Env, true)))
	}
	if len(v.Deps) > 0 {
		fmt.Fprintf(b, "\n<details><summary>%d module dependencies</summary>\n\n", len(v.Deps))
		mdTable(b, []string{"Module", "Version"}, textCells(factRows(v.Deps, false)))
		b.WriteString("\n</details>\n")
	}
	return b.Flush()
}

// textCells wraps plain strings as cells without links.
func textCells(rows [][]string) [][]cell {
	out := make([][]cell, len(rows))
	for i, r := range rows {
		out[i] = make([]cell, len(r))
		for j, s := range r {
			out[i][j] = cell{Text: s}
		}
	}
	return out
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
// bold keys, and cells with a link become [text](link).
func mdTable(w io.Writer, header []string, rows [][]cell) {
	line := func(cells []string) {
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	hdr := make([]string, len(header))
	for i, h := range header {
		hdr[i] = mdCell(h)
	}
	line(hdr)
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = "---"
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(sep, "|"))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = mdCell(c.Text)
			if c.Link != "" {
				cells[i] = "[" + strings.NewReplacer("[", `\[`, "]", `\]`).Replace(cells[i]) + "](" + c.Link + ")"
			}
		}
		line(cells)
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
