package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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

func addVarFlag(fs *flag.FlagSet) varFlags {
	v := varFlags{}
	fs.Var(v, "var", "set a spec variable: -var name=value (repeatable); value is an HCL expression or a bare word")
	return v
}

// loadSpec parses and validates path. On errors it prints every diagnostic with
// file:line:col and source context to stderr and returns exitCode(1).
func loadSpec(path string, vars varFlags, stderr io.Writer) (*specs.Experiment, error) {
	p := specs.NewParser()
	exp, diags := p.ParseFile(path, vars)
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
			pos = fmt.Sprintf("%s:%d:%d", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		fmt.Fprintf(w, "%s: %s: %s\n", pos, sev, d.Summary)
		if d.Detail != "" {
			for _, line := range strings.Split(d.Detail, "\n") {
				fmt.Fprintf(w, "    %s\n", line)
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
	start := rng.Start.Column - 1
	end := len(line)
	if rng.End.Line == rng.Start.Line {
		end = rng.End.Column - 1
	}
	start = min(max(start, 0), len(line))
	end = min(max(end, start+1), len(line)+1)
	prefix := fmt.Sprintf("%5d | ", rng.Start.Line)
	fmt.Fprintf(w, "%s%s\n", prefix, line)
	pad := strings.Map(func(r rune) rune {
		if r == '\t' {
			return '\t'
		}
		return ' '
	}, line[:start])
	fmt.Fprintf(w, "%s%s%s\n", strings.Repeat(" ", len(prefix)), pad, strings.Repeat("^", max(1, end-start)))
}

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate", "validate [-var name=value]... FILE", stderr)
	vars := addVarFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitCode(2)
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
	fs := newFlagSet("plan", "plan [-var name=value]... FILE", stderr)
	vars := addVarFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitCode(2)
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
