package reports

import (
	"os"
	"testing"
)

func TestZZDbg(t *testing.T) {
	dir := writeExperiment(t, fixtureRuns())
	rep, err := Generate(dir, Options{BootstrapReps: 100, SmoothWindow: 10, Target: new(fixtureTarget)})
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(rep.Markdown)
	os.WriteFile("/tmp/fixture_report.md", md, 0o644)
	os.RemoveAll("/tmp/fixture_out")
	os.CopyFS("/tmp/fixture_out", os.DirFS(dir))
}
