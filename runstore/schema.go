package runstore

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// SchemaVersion is the value of the "accerl.schema_version" metadata key in
// every metrics and episodes file this package writes. Bump it when a
// column changes meaning; adding a column does not need a bump because
// readers look columns up by name.
const SchemaVersion = "1"

// Metadata keys stored in the Arrow schema of every file.
const (
	metaTable   = "accerl.table"
	metaVersion = "accerl.schema_version"
)

// column describes one column of a table of rows of type R: its name in the
// file and a pointer accessor into a row for exactly one of the supported
// Go types. One accessor serves both writing and reading.
type column[R any] struct {
	name     string
	required bool // a key column: a file without it is rejected
	i32      func(*R) *int32
	i64      func(*R) *int64
	f64      func(*R) *float64
}

func (c column[R]) dataType() arrow.DataType {
	switch {
	case c.i32 != nil:
		return arrow.PrimitiveTypes.Int32
	case c.i64 != nil:
		return arrow.PrimitiveTypes.Int64
	default:
		return arrow.PrimitiveTypes.Float64
	}
}

// table is the schema of one kind of file (metrics or episodes).
type table[R any] struct {
	name   string // value of the accerl.table metadata key and the run subdirectory
	cols   []column[R]
	schema *arrow.Schema
}

func newTable[R any](name string, cols []column[R]) *table[R] {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.dataType()}
	}
	md := arrow.NewMetadata([]string{metaTable, metaVersion}, []string{name, SchemaVersion})
	return &table[R]{name: name, cols: cols, schema: arrow.NewSchema(fields, &md)}
}

// metricsTable is the schema of metrics/seg-NNNNNN.arrow. Column order is
// the field order of MetricsRow.
var metricsTable = newTable("metrics", []column[MetricsRow]{
	{name: "segment", required: true, i32: func(r *MetricsRow) *int32 { return &r.Segment }},
	{name: "step", required: true, i64: func(r *MetricsRow) *int64 { return &r.Step }},
	{name: "env_steps", i64: func(r *MetricsRow) *int64 { return &r.EnvSteps }},
	{name: "updates", i64: func(r *MetricsRow) *int64 { return &r.Updates }},
	{name: "wall_s", f64: func(r *MetricsRow) *float64 { return &r.WallS }},
	{name: "episode_return", f64: func(r *MetricsRow) *float64 { return &r.EpisodeReturn }},
	{name: "episodes", i64: func(r *MetricsRow) *int64 { return &r.Episodes }},
	{name: "success", f64: func(r *MetricsRow) *float64 { return &r.Success }},
	{name: "policy_version", i64: func(r *MetricsRow) *int64 { return &r.PolicyVersion }},
	{name: "staleness", f64: func(r *MetricsRow) *float64 { return &r.Staleness }},
	{name: "steps_per_s", f64: func(r *MetricsRow) *float64 { return &r.StepsPerS }},
	{name: "inference_batch", f64: func(r *MetricsRow) *float64 { return &r.InferenceBatch }},
	{name: "queue_wait_ms", f64: func(r *MetricsRow) *float64 { return &r.QueueWaitMs }},
	{name: "trainer_busy", f64: func(r *MetricsRow) *float64 { return &r.TrainerBusy }},
	{name: "cpu_util", f64: func(r *MetricsRow) *float64 { return &r.CPUUtil }},
	{name: "gpu_util", f64: func(r *MetricsRow) *float64 { return &r.GPUUtil }},
	{name: "gpu_mem", f64: func(r *MetricsRow) *float64 { return &r.GPUMem }},
	{name: "horizon", f64: func(r *MetricsRow) *float64 { return &r.Horizon }},
	{name: "wm_val_loss", f64: func(r *MetricsRow) *float64 { return &r.WMValLoss }},
	{name: "policy_loss", f64: func(r *MetricsRow) *float64 { return &r.PolicyLoss }},
	{name: "value_loss", f64: func(r *MetricsRow) *float64 { return &r.ValueLoss }},
	{name: "entropy", f64: func(r *MetricsRow) *float64 { return &r.Entropy }},
	{name: "approx_kl", f64: func(r *MetricsRow) *float64 { return &r.ApproxKL }},
	{name: "clip_frac", f64: func(r *MetricsRow) *float64 { return &r.ClipFrac }},
	{name: "grad_norm", f64: func(r *MetricsRow) *float64 { return &r.GradNorm }},
	{name: "low_weight_frac", f64: func(r *MetricsRow) *float64 { return &r.LowWeightFrac }},
	{name: "ess", f64: func(r *MetricsRow) *float64 { return &r.ESS }},
	{name: "lag_clip_frac", f64: func(r *MetricsRow) *float64 { return &r.LagClipFrac }},
	{name: "lag_low_weight_frac", f64: func(r *MetricsRow) *float64 { return &r.LagLowWeight }},
	{name: "lag_ess", f64: func(r *MetricsRow) *float64 { return &r.LagESS }},
	{name: "eval_return", f64: func(r *MetricsRow) *float64 { return &r.EvalReturn }},
	{name: "eval_episodes", i64: func(r *MetricsRow) *int64 { return &r.EvalEpisodes }},
	{name: "eval_success", f64: func(r *MetricsRow) *float64 { return &r.EvalSuccess }},
	{name: "value_only", i64: func(r *MetricsRow) *int64 { return &r.ValueOnly }},
	{name: "eval_sampled_return", f64: func(r *MetricsRow) *float64 { return &r.EvalSampledReturn }},
	{name: "eval_sampled_success", f64: func(r *MetricsRow) *float64 { return &r.EvalSampledSuccess }},
	{name: "grpo_episodes", i64: func(r *MetricsRow) *int64 { return &r.GRPOEpisodes }},
	{name: "grpo_moved", i64: func(r *MetricsRow) *int64 { return &r.GRPOMoved }},
	{name: "grpo_imagined", i64: func(r *MetricsRow) *int64 { return &r.GRPOImagined }},
	{name: "grpo_imagined_moved", i64: func(r *MetricsRow) *int64 { return &r.GRPOImaginedMoved }},
	{name: "grpo_imagined_success", i64: func(r *MetricsRow) *int64 { return &r.GRPOImaginedSuccess }},
})

// episodesTable is the schema of episodes/seg-NNNNNN.arrow.
var episodesTable = newTable("episodes", []column[EpisodeRow]{
	{name: "segment", required: true, i32: func(r *EpisodeRow) *int32 { return &r.Segment }},
	{name: "env_steps", required: true, i64: func(r *EpisodeRow) *int64 { return &r.EnvSteps }},
	{name: "return", f64: func(r *EpisodeRow) *float64 { return &r.Return }},
	{name: "length", i64: func(r *EpisodeRow) *int64 { return &r.Length }},
	{name: "policy_version", i64: func(r *EpisodeRow) *int64 { return &r.PolicyVersion }},
	{name: "success", f64: func(r *EpisodeRow) *float64 { return &r.Success }},
})

// MetricsColumns returns the column names of a metrics file in file order.
func MetricsColumns() []string { return metricsTable.columnNames() }

// EpisodeColumns returns the column names of an episodes file in file order.
func EpisodeColumns() []string { return episodesTable.columnNames() }

func (t *table[R]) columnNames() []string {
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.name
	}
	return names
}

// record builds one record batch holding rows. The caller releases it.
func (t *table[R]) record(mem memory.Allocator, rows []R) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, t.schema)
	defer b.Release()
	b.Reserve(len(rows))
	for i, c := range t.cols {
		switch fb := b.Field(i).(type) {
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
				fb.Append(*c.f64(&rows[j]))
			}
		default:
			panic(fmt.Sprintf("runstore: column %q has unsupported builder %T", c.name, fb))
		}
	}
	return b.NewRecordBatch()
}

// appendRows decodes rec and appends its rows to dst. Columns are looked up
// by name, so files with extra columns (written by a newer version) read
// fine; a missing non-key column reads as NaN (floats) or 0 (integers).
// A null reads as NaN in a float column and is an error elsewhere.
func (t *table[R]) appendRows(dst []R, rec arrow.RecordBatch) ([]R, error) {
	n := int(rec.NumRows())
	start := len(dst)
	var zero R
	for range n {
		dst = append(dst, zero)
	}
	rows := dst[start:]
	schema := rec.Schema()
	for _, c := range t.cols {
		idx := schema.FieldIndices(c.name)
		if len(idx) == 0 {
			if c.required {
				return nil, fmt.Errorf("%s table: missing key column %q", t.name, c.name)
			}
			if c.f64 != nil {
				for j := range rows {
					*c.f64(&rows[j]) = math.NaN()
				}
			}
			continue
		}
		arr := rec.Column(idx[0])
		if !arrow.TypeEqual(arr.DataType(), c.dataType()) {
			return nil, fmt.Errorf("%s table: column %q has type %s, want %s", t.name, c.name, arr.DataType(), c.dataType())
		}
		if arr.NullN() > 0 && c.f64 == nil {
			return nil, fmt.Errorf("%s table: integer column %q has %d nulls", t.name, c.name, arr.NullN())
		}
		switch a := arr.(type) {
		case *array.Int32:
			for j := range rows {
				*c.i32(&rows[j]) = a.Value(j)
			}
		case *array.Int64:
			for j := range rows {
				*c.i64(&rows[j]) = a.Value(j)
			}
		case *array.Float64:
			for j := range rows {
				v := a.Value(j)
				if a.IsNull(j) {
					v = math.NaN()
				}
				*c.f64(&rows[j]) = v
			}
		default:
			return nil, fmt.Errorf("%s table: column %q has unsupported array %T", t.name, c.name, arr)
		}
	}
	return dst, nil
}
