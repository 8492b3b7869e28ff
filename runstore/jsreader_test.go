package runstore

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// npmCache is where the independent reader is installed once; it is
// git-ignored (runstore/.gitignore) and safe to delete.
const npmCache = "testdata/.npm-cache"

// arrowJSMajor pins the apache-arrow npm package to one major version so
// that a new release cannot change the test silently.
const arrowJSMajor = "apache-arrow@21"

// readArrowJS prints what the apache-arrow JavaScript package sees in an
// IPC file: row count, column names and types, and a few columns as plain
// JSON numbers (BigInt converted, NaN as the string "NaN").
const readArrowJS = `
const fs = require('fs');
const { tableFromIPC } = require('apache-arrow');
const t = tableFromIPC(fs.readFileSync(process.argv[2]));
const plain = (v) => typeof v === 'bigint' ? Number(v) : (Number.isNaN(v) ? 'NaN' : v);
const col = (name) => Array.from(t.getChild(name) ?? [], plain);
const out = {
  rows: t.numRows,
  names: t.schema.fields.map((f) => f.name),
  types: t.schema.fields.map((f) => String(f.type)),
  table: t.schema.metadata.get('accerl.table'),
  cols: Object.fromEntries(process.argv.slice(3).map((n) => [n, col(n)])),
};
console.log(JSON.stringify(out));
`

// TestIndependentReader reads files written by WriteSegment with the
// apache-arrow JavaScript implementation, so the format is checked by a
// reader that shares no code with arrow-go.
func TestIndependentReader(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the node/npm reader check in -short mode")
	}
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		t.Skip("node and npm are needed for the independent reader check; install Node.js to run it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cache, err := filepath.Abs(npmCache)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cache, "node_modules", "apache-arrow", "package.json")); err != nil {
		if err := os.MkdirAll(cache, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, npm, "install", "--prefix", cache, "--no-audit", "--no-fund", "--loglevel=error", arrowJSMajor)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("npm install %s failed (offline?), skipping the independent reader check: %v\n%s", arrowJSMajor, err, out)
		}
	}
	script := filepath.Join(cache, "read_arrow.js")
	if err := os.WriteFile(script, []byte(readArrowJS), 0o644); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	metrics := []MetricsRow{metricsRow(4, 10), metricsRow(4, 11), metricsRow(4, 12)}
	metrics[1].EpisodeReturn = math.NaN()
	episodes := []EpisodeRow{{EnvSteps: 77, Return: 1.5, Length: 7, Success: math.NaN()}}
	if err := WriteSegment(dir, 4, metrics, episodes); err != nil {
		t.Fatal(err)
	}

	type jsView struct {
		Rows  int              `json:"rows"`
		Names []string         `json:"names"`
		Types []string         `json:"types"`
		Table string           `json:"table"`
		Cols  map[string][]any `json:"cols"`
	}
	read := func(path string, cols ...string) jsView {
		t.Helper()
		cmd := exec.CommandContext(ctx, node, append([]string{script, path}, cols...)...)
		cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(cache, "node_modules"))
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("node %s: %v\n%s", path, err, stderr)
		}
		var v jsView
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("node output %q: %v", out, err)
		}
		return v
	}

	m := read(filepath.Join(dir, MetricsDir, SegmentFile(4)), "segment", "step", "env_steps", "episode_return", "gpu_mem")
	if m.Rows != 3 || !slices.Equal(m.Names, MetricsColumns()) || m.Table != "metrics" {
		t.Errorf("metrics seen by apache-arrow JS: rows %d, table %q, names %v", m.Rows, m.Table, m.Names)
	}
	if m.Types[0] != "Int32" || m.Types[1] != "Int64" || m.Types[4] != "Float64" {
		t.Errorf("column types seen by JS: %v", m.Types)
	}
	// Values that JSON carries exactly: small integers, binary-exact floats and NaN.
	want := map[string][]any{
		"segment":        {4.0, 4.0, 4.0},
		"step":           {10.0, 11.0, 12.0},
		"env_steps":      {10000.0, 11000.0, 12000.0},
		"episode_return": {20.0, "NaN", 22.0},
		"gpu_mem":        {1e9 + 10, 1e9 + 11, 1e9 + 12},
	}
	for name, w := range want {
		if !slices.Equal(m.Cols[name], w) {
			t.Errorf("JS column %s = %v, want %v", name, m.Cols[name], w)
		}
	}
	e := read(filepath.Join(dir, EpisodesDir, SegmentFile(4)), "return", "success")
	if e.Rows != 1 || !slices.Equal(e.Names, EpisodeColumns()) || e.Table != "episodes" ||
		!slices.Equal(e.Cols["return"], []any{1.5}) || !slices.Equal(e.Cols["success"], []any{"NaN"}) {
		t.Errorf("episodes seen by apache-arrow JS: %+v", e)
	}
}
