package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"

	"github.com/accerl/accerl/specs"
)

// varFlags collects repeated -var name=value flags.
type varFlags map[string]string

func (v varFlags) String() string { return "" }

func (v varFlags) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("want -var name=value, got %q", s)
	}
	v[strings.TrimSpace(name)] = value
	return nil
}

// varFileFlags collects repeated -var-file FILE flags, in order.
type varFileFlags []string

func (v *varFileFlags) String() string { return strings.Join(*v, ",") }

func (v *varFileFlags) Set(s string) error {
	*v = append(*v, s)
	return nil
}

// specVars are the spec variables given on the command line: -var-file and -var.
type specVars struct {
	vars  varFlags
	files varFileFlags
}

func addVarFlag(fs *flag.FlagSet) *specVars {
	v := &specVars{vars: varFlags{}}
	fs.Var(v.vars, "var", "set a spec variable: -var name=value (repeatable); value is an HCL expression or a bare word; wins over -var-file")
	fs.Var(&v.files, "var-file", "set spec variables from FILE, written as name = value lines (HCL, as Terraform's .tfvars) (repeatable; a later file wins)")
	return v
}

// loadSpec parses and validates path with the variables v (nil: none). On errors it prints
// every diagnostic with file:line:col and source context to stderr and returns exitCode(1).
func loadSpec(path string, v *specVars, stderr io.Writer) (*specs.Experiment, error) {
	if v == nil {
		v = &specVars{}
	}
	p := specs.NewParser()
	var diags hcl.Diagnostics
	for _, f := range v.files {
		diags = append(diags, p.ReadVarFile(f)...)
	}
	var exp *specs.Experiment
	if !diags.HasErrors() {
		var more hcl.Diagnostics
		exp, more = p.ParseFile(path, v.vars)
		diags = append(diags, more...)
	}
	if len(diags) > 0 {
		writeDiags(stderr, diags, p.Files())
	}
	if diags.HasErrors() {
		return nil, exitCode(1)
	}
	return exp, nil
}

// writeDiags prints each diagnostic as "file:line:col: error: summary", then its detail and
// the offending source line with the subject underlined, like a compiler.
func writeDiags(w io.Writer, diags hcl.Diagnostics, files map[string]*hcl.File) {
	errs := 0
	for _, d := range diags {
		sev := "warning"
		if d.Severity == hcl.DiagError {
			sev = "error"
			errs++
		}
		pos := "<unknown position>"
		if d.Subject != nil {
			pos = fmt.Sprintf("%s:%d:%d", escapeControl(d.Subject.Filename), d.Subject.Start.Line, d.Subject.Start.Column)
		}
		fmt.Fprintf(w, "%s: %s: %s\n", pos, sev, escapeControl(d.Summary))
		if d.Detail != "" {
			for _, line := range strings.Split(d.Detail, "\n") {
				fmt.Fprintf(w, "    %s\n", escapeControl(line))
			}
		}
		if d.Subject != nil {
			if f := files[d.Subject.Filename]; f != nil {
				writeSourceLine(w, f.Bytes, *d.Subject)
			}
		}
		fmt.Fprintln(w)
	}
	if errs > 0 {
		fmt.Fprintf(w, "%d error(s).\n", errs)
	}
}

// writeSourceLine shows the first line of rng with a caret underline beneath the range.
func writeSourceLine(w io.Writer, src []byte, rng hcl.Range) {
	lines := strings.Split(string(src), "\n")
	if rng.Start.Line < 1 || rng.Start.Line > len(lines) {
		return
	}
	line := strings.TrimRight(lines[rng.Start.Line-1], "\r")
	// Columns count characters, not bytes.
	start := columnByte(line, rng.Start.Column)
	end := len(line)
	if rng.End.Line == rng.Start.Line {
		end = columnByte(line, rng.End.Column)
	}
	end = max(end, start)
	prefix := fmt.Sprintf("%5d | ", rng.Start.Line)
	fmt.Fprintf(w, "%s%s\n", prefix, escapeControl(line))
	// Pad and underline in escaped text, so the carets stay under what they point at.
	pad := strings.Map(func(r rune) rune {
		if r == '\t' {
			return '\t'
		}
		return ' '
	}, escapeControl(line[:start]))
	width := utf8.RuneCountInString(escapeControl(line[start:end]))
	fmt.Fprintf(w, "%s%s%s\n", strings.Repeat(" ", len(prefix)), pad, strings.Repeat("^", max(1, width)))
}

// columnByte is the byte offset in line of 1-based column col, clamped to the line.
func columnByte(line string, col int) int {
	off := 0
	for c := 1; c < col && off < len(line); c++ {
		_, size := utf8.DecodeRuneInString(line[off:])
		off += size
	}
	return off
}

// escapeControl makes text from a spec safe to print on a terminal: control characters
// (an ESC sequence in a string would reach the terminal and could rewrite the screen),
// invalid UTF-8 and the Unicode controls that reorder text are written as Go escapes
// (\x1b, \u202e). Tabs are kept, for alignment.
func escapeControl(s string) string {
	clean := true
	for _, r := range s {
		if needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r < 0x80 && needsEscape(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		case needsEscape(r):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether r must not reach a terminal as it is.
func needsEscape(r rune) bool {
	switch {
	case r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r == utf8.RuneError:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidirectional overrides
		return true
	}
	return false
}

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate", "validate [-var-file FILE]... [-var name=value]... FILE", stderr)
	vars := addVarFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := oneArg(fs, "spec file", stderr); err != nil {
		return err
	}
	exp, err := loadSpec(fs.Arg(0), vars, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: valid — experiment %q, %d arm(s) × %d seed(s) = %d run(s)\n",
		fs.Arg(0), exp.Name, len(exp.Arms), len(exp.Seeds), len(exp.Runs()))
	return nil
}

func cmdPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("plan", "plan [-var-file FILE]... [-var name=value]... FILE", stderr)
	vars := addVarFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := oneArg(fs, "spec file", stderr); err != nil {
		return err
	}
	exp, err := loadSpec(fs.Arg(0), vars, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "experiment %s\nspec hash  %s\nbaseline   %s\n\n", exp.Name, exp.Hash, exp.Baseline)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tARM\tSEED\tMODE\tENV\tALGORITHM\tENV STEPS")
	for _, r := range exp.Runs() {
		c := r.Config
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%d\n", r.ID, r.Arm, r.Seed, c.Pipeline.Mode, c.Env.Kind, c.Algorithm.Name, c.Budget.EnvSteps)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%d run(s), at most %d in parallel\n", len(exp.Runs()), exp.MaxParallel)
	return nil
}
