//go:build cgo && (linux || darwin) && (amd64 || arm64)

package runstore

import (
	"database/sql"
	"math"
	"path/filepath"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" database/sql driver
)

// nonNaNMean is the mean of the values that are not NaN, and their count.
func nonNaNMean(vs []float64) (float64, int) {
	var sum float64
	n := 0
	for _, v := range vs {
		if !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	return sum / float64(n), n
}

// TestExportParquetDuckDB reads the exported files with DuckDB, an
// independent Parquet reader and the SQL engine the export is for: row
// counts and the mean of a column with not-applicable values must match
// the Arrow files (nulls skipped, no NaN poisoning the average).
func TestExportParquetDuckDB(t *testing.T) {
	runDir, metrics, episodes := exportFixture(t, false)
	if err := ExportParquet(runDir); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	var returns, successes []float64
	for _, r := range metrics {
		returns = append(returns, r.EpisodeReturn)
	}
	for _, e := range episodes {
		successes = append(successes, e.Success)
	}
	wantReturn, nReturn := nonNaNMean(returns)
	wantSuccess, nSuccess := nonNaNMean(successes)
	if nReturn == len(metrics) || nSuccess == len(episodes) {
		t.Fatal("fixture has no NaN to turn into nulls")
	}

	metricsPath := filepath.Join(runDir, ParquetDir, MetricsParquet)
	var count, nonNull, nanCount int
	var avg float64
	if err := db.QueryRow(`SELECT count(*), avg(episode_return), count(episode_return), count(*) FILTER (WHERE isnan(episode_return)) FROM read_parquet(?)`, metricsPath).
		Scan(&count, &avg, &nonNull, &nanCount); err != nil {
		t.Fatal(err)
	}
	// Tolerance: DuckDB may sum in another order; a few ulps of numbers near 10.
	if count != len(metrics) || nonNull != nReturn || nanCount != 0 || math.Abs(avg-wantReturn) > 1e-12 {
		t.Errorf("metrics.parquet: count %d, avg(episode_return) %v over %d, %d NaN; Arrow files: %d rows, mean %v over %d",
			count, avg, nonNull, nanCount, len(metrics), wantReturn, nReturn)
	}

	episodesPath := filepath.Join(runDir, ParquetDir, EpisodesParquet)
	var arm string
	var seed uint64
	if err := db.QueryRow(`SELECT count(*), avg(success), count(success), any_value(arm), any_value(seed) FROM read_parquet(?)`, episodesPath).
		Scan(&count, &avg, &nonNull, &arm, &seed); err != nil {
		t.Fatal(err)
	}
	if count != len(episodes) || nonNull != nSuccess || math.Abs(avg-wantSuccess) > 1e-12 || arm != "arm-a" || seed != 7 {
		t.Errorf("episodes.parquet: count %d, avg(success) %v over %d, arm %q seed %d; Arrow files: %d rows, mean %v over %d, arm-a seed 7",
			count, avg, nonNull, arm, seed, len(episodes), wantSuccess, nSuccess)
	}

	// The glob a user writes over an experiment directory sees every run.
	glob := filepath.Join(filepath.Dir(filepath.Dir(runDir)), "*", "*", ParquetDir, MetricsParquet)
	var maxStep int64
	if err := db.QueryRow(`SELECT count(*), max(step) FROM read_parquet(?) WHERE arm = 'arm-a' AND seed = 7`, glob).Scan(&count, &maxStep); err != nil {
		t.Fatal(err)
	}
	if count != len(metrics) || maxStep != metrics[len(metrics)-1].Step {
		t.Errorf("glob %s: %d rows, max step %d; want %d, %d", glob, count, maxStep, len(metrics), metrics[len(metrics)-1].Step)
	}
}
