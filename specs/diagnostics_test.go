package specs_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/accerl/accerl/specs"
)

// expectation is one "# ERROR: <summary substring>" marker.
type expectation struct {
	line    int
	summary string
	matched bool
}

// readExpectations collects the ERROR markers of a fixture. A line may carry
// several markers: "# ERROR: A # ERROR: B".
func readExpectations(t *testing.T, src []byte) []*expectation {
	t.Helper()
	const marker = "# ERROR:"
	var out []*expectation
	sc := bufio.NewScanner(bytes.NewReader(src))
	for line := 1; sc.Scan(); line++ {
		parts := strings.Split(sc.Text(), marker)
		for _, p := range parts[1:] {
			summary := strings.TrimSpace(p)
			if summary == "" {
				t.Fatalf("line %d: empty ERROR marker", line)
			}
			out = append(out, &expectation{line: line, summary: summary})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInvalidFixtures parses every spec under testdata/invalid and checks
// that the reported errors are exactly the ones its ERROR markers announce,
// each on its marked line, and that every diagnostic is fully formed.
func TestInvalidFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "invalid", "*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no fixtures found")
	}
	distinct := map[string]bool{}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := readExpectations(t, src)
			if len(want) == 0 {
				t.Fatal("fixture has no ERROR markers")
			}
			exp, diags := specs.Parse(path, src, nil)
			if exp != nil {
				t.Errorf("Parse returned an experiment despite errors")
			}
			if !diags.HasErrors() {
				t.Fatal("no errors reported")
			}
			for _, d := range diags {
				if d.Severity == hcl.DiagWarning {
					continue // advice about what is valid; the fixtures mark errors
				}
				checkWellFormed(t, path, d)
				if d.Subject == nil {
					continue
				}
				found := false
				for _, w := range want {
					if w.line == d.Subject.Start.Line && strings.Contains(d.Summary, w.summary) {
						w.matched = true
						found = true
					}
				}
				if !found {
					t.Errorf("unexpected diagnostic at line %d: %s: %s", d.Subject.Start.Line, d.Summary, d.Detail)
				}
			}
			for _, w := range want {
				if !w.matched {
					t.Errorf("line %d: expected an error containing %q, got none there", w.line, w.summary)
				}
				distinct[w.summary] = true
			}
		})
	}
	// The brief asks for at least 12 distinct mistakes across the fixtures.
	if len(distinct) < 12 {
		t.Errorf("fixtures cover %d distinct error summaries, want at least 12", len(distinct))
	}
}

func checkWellFormed(t *testing.T, path string, d *hcl.Diagnostic) {
	t.Helper()
	if d.Severity != hcl.DiagError {
		t.Errorf("diagnostic %q has severity %v, want error", d.Summary, d.Severity)
	}
	if d.Summary == "" || strings.ToUpper(d.Summary[:1]) != d.Summary[:1] || strings.HasSuffix(d.Summary, ".") {
		t.Errorf("summary %q is not a terse sentence-case phrase", d.Summary)
	}
	if strings.TrimSpace(d.Detail) == "" {
		t.Errorf("diagnostic %q has no detail", d.Summary)
	}
	if d.Subject == nil {
		t.Errorf("diagnostic %q has no subject", d.Summary)
		return
	}
	if d.Subject.Filename != path {
		t.Errorf("diagnostic %q: subject file %q, want %q", d.Summary, d.Subject.Filename, path)
	}
	if d.Subject.Start.Line < 1 || d.Subject.Start.Column < 1 {
		t.Errorf("diagnostic %q: subject %v has no line and column", d.Summary, d.Subject)
	}
}

// The old spelling advantage_norm = "batch" (which meant per minibatch) still validates,
// resolves to "minibatch", and warns at the value.
func TestDeprecatedAdvantageNormBatch(t *testing.T) {
	src := `experiment "e" {
  budget { env_steps = 1000 }
  env "cartpole" {}
  algorithm "ppo" { advantage_norm = "batch" }
}
`
	exp, diags := specs.Parse("e.hcl", []byte(src), nil)
	if diags.HasErrors() {
		t.Fatalf("unexpected errors: %v", diags)
	}
	if got := exp.Arms[0].Config.Algorithm.AdvantageNorm; got != specs.AdvantageNormMinibatch {
		t.Errorf("advantage_norm resolved to %q, want %q", got, specs.AdvantageNormMinibatch)
	}
	if len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || diags[0].Summary != "Deprecated value" ||
		diags[0].Subject == nil || diags[0].Subject.Start.Line != 4 || !strings.Contains(diags[0].Detail, `write "minibatch"`) {
		t.Errorf("diagnostics = %v, want one deprecation warning on line 4 naming \"minibatch\"", diags)
	}
}
