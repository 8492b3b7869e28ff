package runstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ParquetDir is the subdirectory of a run directory that ExportParquet
// writes, holding MetricsParquet and EpisodesParquet.
const ParquetDir = "parquet"

// File names of the Parquet export of a run.
const (
	MetricsParquet  = "metrics.parquet"
	EpisodesParquet = "episodes.parquet"
)

// ExportParquet writes every committed segment of the run in runDir (as
// ReadRun reads them) to <runDir>/parquet/metrics.parquet and
// <runDir>/parquet/episodes.parquet, replacing them atomically. The
// columns are those of the Arrow files, in the same order and sort, after
// two leading columns: arm (string) and seed (uint64), taken from the
// run's manifest.json or, without one, from the <arm>/seed-<n> path (null
// when neither says). Float columns hold null where the Arrow files hold
// NaN ("not applicable"), so SQL aggregates skip them instead of turning
// NaN. Files are Snappy-compressed, one row group per file, and carry the
// accerl.table and accerl.schema_version key-value metadata.
func ExportParquet(runDir string) error {
	return exportParquet(memory.DefaultAllocator, runDir)
}

func exportParquet(mem memory.Allocator, runDir string) error {
	metrics, episodes, err := readRun(mem, runDir)
	if err != nil {
		return fmt.Errorf("export parquet: %w", err)
	}
	id, err := runIdentity(runDir)
	if err != nil {
		return fmt.Errorf("export parquet of %q: %w", runDir, err)
	}
	dir := filepath.Join(runDir, ParquetDir)
	if err := writeParquet(mem, filepath.Join(dir, MetricsParquet), metricsTable, id, metrics); err != nil {
		return fmt.Errorf("export parquet of %q: %w", runDir, err)
	}
	if err := writeParquet(mem, filepath.Join(dir, EpisodesParquet), episodesTable, id, episodes); err != nil {
		return fmt.Errorf("export parquet of %q: %w", runDir, err)
	}
	return nil
}

// runID is the arm and seed a run's exported rows carry; ok false means
// unknown (both columns null).
type runID struct {
	arm  string
	seed uint64
	ok   bool
}

// runIdentity reads the run's arm and seed from its manifest, or from the
// directory names RunDir builds when there is no manifest.
func runIdentity(runDir string) (runID, error) {
	var m RunManifest
	err := ReadJSON(filepath.Join(runDir, RunFile), &m)
	if err == nil {
		return runID{arm: m.Arm, seed: m.Seed, ok: true}, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return runID{}, err
	}
	abs, err := filepath.Abs(runDir)
	if err != nil {
		return runID{}, err
	}
	digits, ok := strings.CutPrefix(filepath.Base(abs), "seed-")
	if !ok {
		return runID{}, nil
	}
	seed, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return runID{}, nil
	}
	return runID{arm: filepath.Base(filepath.Dir(abs)), seed: seed, ok: true}, nil
}

// parquetSchema is t's schema with the arm and seed columns in front and
// every float column nullable.
func parquetSchema[R any](t *table[R]) *arrow.Schema {
	fields := []arrow.Field{
		{Name: "arm", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "seed", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	}
	for _, c := range t.cols {
		fields = append(fields, arrow.Field{Name: c.name, Type: c.dataType(), Nullable: c.f64 != nil})
	}
	md := t.schema.Metadata()
	return arrow.NewSchema(fields, &md)
}

// parquetRecord builds the record batch of rows for the Parquet file: NaN
// becomes null. The caller releases it.
func parquetRecord[R any](mem memory.Allocator, schema *arrow.Schema, t *table[R], id runID, rows []R) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Reserve(len(rows))
	arm, seed := b.Field(0).(*array.StringBuilder), b.Field(1).(*array.Uint64Builder)
	for range rows {
		if id.ok {
			arm.Append(id.arm)
			seed.Append(id.seed)
		} else {
			arm.AppendNull()
			seed.AppendNull()
		}
	}
	for i, c := range t.cols {
		switch fb := b.Field(i + 2).(type) {
		case *array.Int32Builder:
			for j := range rows {
				fb.Append(*c.i32(&rows[j]))
			}
		case *array.Int64Builder:
			for j := range rows {
				fb.Append(*c.i64(&rows[j]))
			}
		case *array.Float64Builder:
			for j := range rows {
				if v := *c.f64(&rows[j]); math.IsNaN(v) {
					fb.AppendNull()
				} else {
					fb.Append(v)
				}
			}
		default:
			panic(fmt.Sprintf("runstore: column %q has unsupported builder %T", c.name, fb))
		}
	}
	return b.NewRecordBatch()
}

// writeParquet writes rows as a one-row-group Parquet file at path, atomically.
func writeParquet[R any](mem memory.Allocator, path string, t *table[R], id runID, rows []R) error {
	schema := parquetSchema(t)
	rec := parquetRecord(mem, schema, t, id, rows)
	defer rec.Release()
	props := parquet.NewWriterProperties(
		parquet.WithAllocator(mem),
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(max(int64(len(rows)), 1)),
		parquet.WithCreatedBy("accerl"),
	)
	err := WriteFileAtomic(path, func(w io.Writer) error {
		// The Parquet writer closes a sink that is an io.Closer; WriteFileAtomic
		// still has to sync and rename the file, so hide its Close.
		fw, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{w}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
		if err != nil {
			return err
		}
		if err := fw.Write(rec); err != nil {
			fw.Close()
			return err
		}
		return fw.Close()
	})
	if err != nil {
		return fmt.Errorf("write %s parquet %q: %w", t.name, path, err)
	}
	return nil
}
