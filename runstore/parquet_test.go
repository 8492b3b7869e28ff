package runstore

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// exportFixture writes a run with two segments, NaN in not-applicable
// columns, and a stray uncommitted episodes file, under <dir>/arm-a/seed-7.
// It returns the run directory and the rows ReadRun sees.
func exportFixture(t *testing.T, withManifest bool) (string, []MetricsRow, []EpisodeRow) {
	t.Helper()
	runDir := RunDir(t.TempDir(), "arm-a", 7)
	seg1 := []MetricsRow{metricsRow(1, 0), metricsRow(1, 1), metricsRow(1, 2)}
	seg1[0].EpisodeReturn, seg1[0].Success, seg1[0].GPUUtil = math.NaN(), math.NaN(), math.NaN()
	for i := range seg1 {
		seg1[i].EvalReturn = math.NaN()
	}
	seg1[2].EvalReturn = 42.5
	seg2 := []MetricsRow{metricsRow(2, 4), metricsRow(2, 3)} // written out of order
	seg2[1].EpisodeReturn = math.NaN()
	ep1 := []EpisodeRow{{EnvSteps: 10, Return: 1.5, Length: 10, PolicyVersion: 1, Success: math.NaN()}}
	ep2 := []EpisodeRow{{EnvSteps: 30, Return: -2, Length: 20, PolicyVersion: 3, Success: 1}, {EnvSteps: 20, Return: 4, Length: 5, PolicyVersion: 2, Success: 0}}
	if err := WriteSegment(runDir, 1, seg1, ep1); err != nil {
		t.Fatal(err)
	}
	if err := WriteSegment(runDir, 2, seg2, ep2); err != nil {
		t.Fatal(err)
	}
	// Segment 3 is being written: episodes but no metrics file yet. It must not be exported.
	if err := writeTable(checkedAlloc(t), filepath.Join(runDir, EpisodesDir, SegmentFile(3)), episodesTable, []EpisodeRow{{Segment: 3, EnvSteps: 99}}); err != nil {
		t.Fatal(err)
	}
	if withManifest {
		if err := WriteJSON(filepath.Join(runDir, RunFile), RunManifest{Arm: "from-manifest", Seed: 11}); err != nil {
			t.Fatal(err)
		}
	}
	m, e, err := ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	return runDir, m, e
}

// readParquet reads a Parquet file back with pqarrow's file reader.
func readParquet(t *testing.T, path string) arrow.Table {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	pf, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, checkedAlloc(t))
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tbl.Release)
	if kv := pf.MetaData().KeyValueMetadata(); kv.FindValue("accerl.table") == nil {
		t.Errorf("%s: no accerl.table metadata", path)
	}
	return tbl
}

// pqColumn returns column name of tbl as one array (the files have one row group).
func pqColumn(t *testing.T, tbl arrow.Table, name string) arrow.Array {
	t.Helper()
	idx := tbl.Schema().FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("column %q: %d matches in %s", name, len(idx), tbl.Schema())
	}
	ch := tbl.Column(idx[0]).Data()
	if len(ch.Chunks()) != 1 {
		t.Fatalf("column %q: %d chunks", name, len(ch.Chunks()))
	}
	return ch.Chunk(0)
}

// checkParquetTable compares every column of a Parquet table with the
// rows, through the table's own accessors: NaN must read as null and every
// other value bit for bit.
func checkParquetTable[R any](t *testing.T, tbl arrow.Table, tab *table[R], rows []R, arm string, seed uint64) {
	t.Helper()
	if got, want := tbl.NumRows(), int64(len(rows)); got != want {
		t.Fatalf("%s: %d rows, want %d", tab.name, got, want)
	}
	want := append([]string{"arm", "seed"}, tab.columnNames()...)
	var names []string
	for _, f := range tbl.Schema().Fields() {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("%s columns %q, want %q", tab.name, names, want)
	}
	arms := pqColumn(t, tbl, "arm").(*array.String)
	seeds := pqColumn(t, tbl, "seed").(*array.Uint64)
	for j := range rows {
		if arms.Value(j) != arm || seeds.Value(j) != seed {
			t.Errorf("%s row %d: arm %q seed %d, want %q %d", tab.name, j, arms.Value(j), seeds.Value(j), arm, seed)
		}
	}
	for _, c := range tab.cols {
		arr := pqColumn(t, tbl, c.name)
		for j := range rows {
			r := &rows[j]
			switch a := arr.(type) {
			case *array.Int32:
				if a.IsNull(j) || a.Value(j) != *c.i32(r) {
					t.Errorf("%s row %d %s: %v, want %d", tab.name, j, c.name, a.ValueStr(j), *c.i32(r))
				}
			case *array.Int64:
				if a.IsNull(j) || a.Value(j) != *c.i64(r) {
					t.Errorf("%s row %d %s: %v, want %d", tab.name, j, c.name, a.ValueStr(j), *c.i64(r))
				}
			case *array.Float64:
				v := *c.f64(r)
				switch {
				case math.IsNaN(v) && !a.IsNull(j):
					t.Errorf("%s row %d %s: %v, want null for NaN", tab.name, j, c.name, a.Value(j))
				case !math.IsNaN(v) && (a.IsNull(j) || math.Float64bits(a.Value(j)) != math.Float64bits(v)):
					t.Errorf("%s row %d %s: %v, want %v", tab.name, j, c.name, a.ValueStr(j), v)
				}
			default:
				t.Fatalf("%s column %s: unexpected array %T", tab.name, c.name, arr)
			}
		}
	}
}

func TestExportParquetRoundTrip(t *testing.T) {
	runDir, metrics, episodes := exportFixture(t, false)
	if len(metrics) != 5 || len(episodes) != 3 {
		t.Fatalf("fixture: %d metrics, %d episodes rows", len(metrics), len(episodes))
	}
	if err := exportParquet(checkedAlloc(t), runDir); err != nil {
		t.Fatal(err)
	}
	checkParquetTable(t, readParquet(t, filepath.Join(runDir, "parquet", "metrics.parquet")), metricsTable, metrics, "arm-a", 7)
	checkParquetTable(t, readParquet(t, filepath.Join(runDir, "parquet", "episodes.parquet")), episodesTable, episodes, "arm-a", 7)
}

func TestExportParquetManifestIdentity(t *testing.T) {
	runDir, metrics, _ := exportFixture(t, true)
	if err := ExportParquet(runDir); err != nil {
		t.Fatal(err)
	}
	checkParquetTable(t, readParquet(t, filepath.Join(runDir, ParquetDir, MetricsParquet)), metricsTable, metrics, "from-manifest", 11)
}

func TestExportParquetEmptyRun(t *testing.T) {
	runDir := filepath.Join(t.TempDir(), "not-a-seed-dir")
	if err := ExportParquet(runDir); err != nil {
		t.Fatal(err)
	}
	tbl := readParquet(t, filepath.Join(runDir, ParquetDir, MetricsParquet))
	if tbl.NumRows() != 0 {
		t.Fatalf("%d rows from a run with no segment", tbl.NumRows())
	}
}
