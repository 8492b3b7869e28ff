package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -var-file sets spec variables from name = value lines; -var wins over it, and a name the
// spec does not declare is reported at its file:line.
func TestVarFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	spec := filepath.Join("..", "..", "examples", "quickstart.hcl")
	vars := write("small.tfvars", "# a smaller budget\nsteps = 12000\n")
	if status, stdout, stderr := runArgs(t, "plan", "-var-file", vars, spec); status != 0 || !strings.Contains(stdout, "12000") {
		t.Errorf("plan -var-file (steps = 12000): status %d\n%s\n%s", status, stdout, stderr)
	}
	if status, stdout, stderr := runArgs(t, "plan", spec, "-var", "steps=9000", "-var-file", vars); status != 0 || !strings.Contains(stdout, "9000") || strings.Contains(stdout, "12000") {
		t.Errorf("plan -var steps=9000 -var-file (steps = 12000): status %d, want -var to win\n%s\n%s", status, stdout, stderr)
	}
	bad := write("bad.tfvars", "steps = 12000\n\nstpes = 5\n")
	for _, cmd := range []string{"validate", "plan", "run"} {
		status, _, stderr := runArgs(t, cmd, "-var-file", bad, spec)
		if status != 1 || !strings.Contains(stderr, bad+":3:1: error: Value for undeclared variable") || !strings.Contains(stderr, `"stpes" was given in the variables file `+bad) {
			t.Errorf("%s -var-file with an unknown variable on line 3: status %d, stderr:\n%s", cmd, status, stderr)
		}
	}
	if status, _, stderr := runArgs(t, "validate", "-var-file", filepath.Join(dir, "none.tfvars"), spec); status != 1 || !strings.Contains(stderr, "Failed to read variables file") {
		t.Errorf("validate -var-file of a missing file: status %d, stderr:\n%s", status, stderr)
	}
	block := write("block.tfvars", "steps = 1\nenv \"x\" {}\n")
	if status, _, stderr := runArgs(t, "validate", "-var-file", block, spec); status != 1 || !strings.Contains(stderr, block+":2:") {
		t.Errorf("validate -var-file with a block: status %d, stderr:\n%s", status, stderr)
	}
}
