package runstore

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// metricsRow returns a row whose every column holds a distinct value
// derived from step, so that a swapped or dropped column shows up.
func metricsRow(seg int32, step int64) MetricsRow {
	f := float64(step)
	return MetricsRow{
		Segment: seg, Step: step, EnvSteps: 1000 * step, Updates: step + 1, WallS: 0.5*f + 0.25,
		EpisodeReturn: 10 + f, Episodes: 2 * step, Success: 0.125, PolicyVersion: step + 7,
		Staleness: 1.5 + f, StepsPerS: 2000 + f, InferenceBatch: 32 + f, QueueWaitMs: 4.75 + f,
		TrainerBusy: 0.625, CPUUtil: 0.875, GPUUtil: 0.375, GPUMem: 1e9 + f, Horizon: 5 + f,
		WMValLoss: 0.03125 + f, PolicyLoss: -0.25 - f, ValueLoss: 1.75 + f, Entropy: 2.5 - f,
		ApproxKL: 0.01 + f, ClipFrac: 0.0625, GradNorm: 3.5 + f, GRPOEpisodes: 60 + step, GRPOMoved: 3 * step,
	}
}

// same compares rows through their %+v rendering: it prints every field,
// NaN as "NaN" and floats in shortest round-trip form, so equal strings mean
// bit-equal values (NaN payloads aside).
func same[R any](t *testing.T, what string, got, want []R) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d rows, want %d\ngot  %+v\nwant %+v", what, len(got), len(want), got, want)
	}
	for i := range got {
		if g, w := fmt.Sprintf("%+v", got[i]), fmt.Sprintf("%+v", want[i]); g != w {
			t.Errorf("%s row %d:\ngot  %s\nwant %s", what, i, g, w)
		}
	}
}

func checkedAlloc(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func TestColumnNames(t *testing.T) {
	// The lists from the package brief, typed out independently of schema.go.
	wantMetrics := []string{"segment", "step", "env_steps", "updates", "wall_s", "episode_return",
		"episodes", "success", "policy_version", "staleness", "steps_per_s", "inference_batch",
		"queue_wait_ms", "trainer_busy", "cpu_util", "gpu_util", "gpu_mem", "horizon", "wm_val_loss",
		"policy_loss", "value_loss", "entropy", "approx_kl", "clip_frac", "grad_norm",
		"low_weight_frac", "ess", "lag_clip_frac", "lag_low_weight_frac", "lag_ess", "eval_return", "eval_episodes", "eval_success", "value_only", "eval_sampled_return", "eval_sampled_success", "grpo_episodes", "grpo_moved",
		"grpo_imagined", "grpo_imagined_moved", "grpo_imagined_success"}
	if got := MetricsColumns(); !slices.Equal(got, wantMetrics) {
		t.Errorf("MetricsColumns() = %v\nwant %v", got, wantMetrics)
	}
	wantEpisodes := []string{"segment", "env_steps", "return", "length", "policy_version", "success"}
	if got := EpisodeColumns(); !slices.Equal(got, wantEpisodes) {
		t.Errorf("EpisodeColumns() = %v, want %v", got, wantEpisodes)
	}
}

func TestSegmentRoundTrip(t *testing.T) {
	mem := checkedAlloc(t)
	dir := t.TempDir()
	metrics := []MetricsRow{metricsRow(1, 0), metricsRow(1, 1), metricsRow(1, 2)}
	metrics[1].EpisodeReturn, metrics[1].Episodes = math.NaN(), 0 // no episode finished
	metrics[2].GPUUtil, metrics[2].GPUMem, metrics[2].WMValLoss = math.NaN(), math.NaN(), math.NaN()
	metrics[0].Entropy = math.Inf(-1)
	metrics[2].ApproxKL = math.Copysign(0, -1)
	// Evaluation columns: an evaluation point after update 0, none after
	// update 1 (the usual NaN/0), and one after update 2.
	metrics[0].EvalReturn, metrics[0].EvalEpisodes = 187.25, 10
	metrics[1].EvalReturn, metrics[1].EvalEpisodes = math.NaN(), 0
	metrics[2].EvalReturn, metrics[2].EvalEpisodes = -3.5, 7
	episodes := []EpisodeRow{
		{Segment: 1, EnvSteps: 200, Return: 21.5, Length: 22, PolicyVersion: 3, Success: 1},
		{Segment: 1, EnvSteps: 350, Return: -4.25, Length: 9, PolicyVersion: 4, Success: math.NaN()},
	}
	if err := writeSegment(mem, dir, 1, metrics, episodes, true); err != nil {
		t.Fatal(err)
	}
	gotM, gotE, err := readRun(mem, dir)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "metrics", gotM, metrics)
	same(t, "episodes", gotE, episodes)
	if math.Signbit(gotM[2].ApproxKL) != true {
		t.Errorf("negative zero lost its sign")
	}
	for _, name := range []string{"metrics/seg-000001.arrow", "episodes/seg-000001.arrow"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("expected file: %v", err)
		}
	}
}

func TestSegmentFillsZeroSegment(t *testing.T) {
	dir := t.TempDir()
	m := metricsRow(0, 4)
	e := EpisodeRow{EnvSteps: 10, Return: 1}
	if err := WriteSegment(dir, 3, []MetricsRow{m}, []EpisodeRow{e}); err != nil {
		t.Fatal(err)
	}
	gotM, gotE, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if gotM[0].Segment != 3 || gotE[0].Segment != 3 {
		t.Errorf("segments = %d, %d; want 3, 3", gotM[0].Segment, gotE[0].Segment)
	}
	if m.Segment != 0 {
		t.Errorf("WriteSegment modified the caller's row")
	}
}

func TestSegmentRetryReplacesRows(t *testing.T) {
	dir := t.TempDir()
	first := []MetricsRow{metricsRow(1, 0), metricsRow(1, 1), metricsRow(1, 2)}
	firstEp := []EpisodeRow{{Segment: 1, EnvSteps: 5, Return: 1}, {Segment: 1, EnvSteps: 6, Return: 2}}
	seg2 := []MetricsRow{metricsRow(2, 3), metricsRow(2, 4)}
	seg2Ep := []EpisodeRow{{Segment: 2, EnvSteps: 9, Return: 3}}
	if err := WriteSegment(dir, 1, first, firstEp); err != nil {
		t.Fatal(err)
	}
	if err := WriteSegment(dir, 2, seg2, seg2Ep); err != nil {
		t.Fatal(err)
	}
	// Segment 1 is retried and this time logs two rows and no episode.
	retry := []MetricsRow{metricsRow(1, 0), metricsRow(1, 1)}
	retry[0].WallS, retry[1].WallS = 99, 100
	if err := WriteSegment(dir, 1, retry, nil); err != nil {
		t.Fatal(err)
	}
	gotM, gotE, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "metrics", gotM, append(slices.Clone(retry), seg2...))
	same(t, "episodes", gotE, seg2Ep)
}

func TestReadRunSortsAndIgnoresStrayFiles(t *testing.T) {
	dir := t.TempDir()
	// Segment 10 written before 9, rows within a segment out of order.
	s10 := []MetricsRow{metricsRow(10, 21), metricsRow(10, 20)}
	s9 := []MetricsRow{metricsRow(9, 19), metricsRow(9, 18)}
	e10 := []EpisodeRow{{Segment: 10, EnvSteps: 700, Return: 7}, {Segment: 10, EnvSteps: 600, Return: 6}}
	e9 := []EpisodeRow{{Segment: 9, EnvSteps: 500, Return: 5}}
	if err := WriteSegment(dir, 10, s10, e10); err != nil {
		t.Fatal(err)
	}
	if err := WriteSegment(dir, 9, s9, e9); err != nil {
		t.Fatal(err)
	}
	// Debris a crash or an editor may leave: none of it is a segment file.
	for _, name := range []string{
		"metrics/.seg-000011.arrow.12345.tmp", "metrics/seg-000011.arrow.tmp", "metrics/seg-11.arrow",
		"metrics/seg-000000.arrow", "metrics/seg-00001a.arrow", "metrics/notes.txt",
		"episodes/.seg-000011.arrow.999.tmp",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An episodes file whose metrics file is not yet renamed into place:
	// the segment is uncommitted and must not show up.
	if err := writeTable(memory.DefaultAllocator, filepath.Join(dir, EpisodesDir, SegmentFile(12)),
		episodesTable, []EpisodeRow{{Segment: 12, EnvSteps: 900, Return: 9}}); err != nil {
		t.Fatal(err)
	}
	gotM, gotE, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "metrics", gotM, []MetricsRow{metricsRow(9, 18), metricsRow(9, 19), metricsRow(10, 20), metricsRow(10, 21)})
	same(t, "episodes", gotE, []EpisodeRow{e9[0], e10[1], e10[0]})
}

// A truncated segment file does not hide the others: ReadRun returns their rows and names
// the bad file and its segment.
func TestReadRunTruncatedSegment(t *testing.T) {
	dir := t.TempDir()
	for seg := int32(1); seg <= 3; seg++ {
		rows := []MetricsRow{metricsRow(seg, int64(seg))}
		eps := []EpisodeRow{{Segment: seg, EnvSteps: int64(10 * seg), Return: float64(seg)}}
		if err := WriteSegment(dir, seg, rows, eps); err != nil {
			t.Fatal(err)
		}
	}
	bad := filepath.Join(dir, MetricsDir, SegmentFile(2))
	b, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	gotM, gotE, err := ReadRun(dir)
	var u UnreadableSegments
	if !errors.As(err, &u) || len(u) != 1 || u[0].Path != bad || u[0].Segment != 2 || !strings.Contains(err.Error(), bad) {
		t.Fatalf("ReadRun with %s truncated: %v, want UnreadableSegments naming it (segment 2)", bad, err)
	}
	same(t, "metrics", gotM, []MetricsRow{metricsRow(1, 1), metricsRow(3, 3)})
	same(t, "episodes", gotE, []EpisodeRow{{Segment: 1, EnvSteps: 10, Return: 1}, {Segment: 3, EnvSteps: 30, Return: 3}})
}

func TestReadRunEmptyDir(t *testing.T) {
	m, e, err := ReadRun(filepath.Join(t.TempDir(), "not-started"))
	if err != nil || len(m) != 0 || len(e) != 0 {
		t.Errorf("ReadRun(missing) = %d, %d, %v; want no rows and no error", len(m), len(e), err)
	}
}

func TestWriteSegmentRejects(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		seg     int32
		metrics []MetricsRow
		eps     []EpisodeRow
		want    string
	}{
		{"segment zero", 0, nil, nil, "numbered from 1"},
		{"metrics segment mismatch", 2, []MetricsRow{metricsRow(3, 1)}, nil, "row has segment 3"},
		{"episode segment mismatch", 2, nil, []EpisodeRow{{Segment: 1}}, "row has segment 1"},
		{"duplicate step", 2, []MetricsRow{metricsRow(2, 1), metricsRow(2, 1)}, nil, "duplicate metrics step 1"},
	}
	for _, c := range cases {
		err := WriteSegment(dir, c.seg, c.metrics, c.eps)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("rejected writes left files: %v", entries)
	}
}

func TestParseSegmentFile(t *testing.T) {
	cases := map[string]int32{
		"seg-000001.arrow": 1, "seg-123456.arrow": 123456, "seg-1234567.arrow": 1234567,
		"seg-000000.arrow": 0, "seg-0000001.arrow": 0, "seg-00001.arrow": 0, "seg-000001.arrow.tmp": 0,
		".seg-000001.arrow.1.tmp": 0, "seg-+00001.arrow": 0, "seg-000001.feather": 0,
	}
	for name, want := range cases {
		got, ok := parseSegmentFile(name)
		if ok != (want != 0) || got != want {
			t.Errorf("parseSegmentFile(%q) = %d, %v; want %d", name, got, ok, want)
		}
		if ok && SegmentFile(got) != name {
			t.Errorf("SegmentFile(%d) = %q, want %q", got, SegmentFile(got), name)
		}
	}
}

// TestReadForeignSchema reads a file written by a different (newer or
// older) writer: an extra column is ignored, missing value columns read as
// NaN/0, and a file of the wrong table or with a wrong column type is
// rejected.
func TestReadForeignSchema(t *testing.T) {
	mem := checkedAlloc(t)
	dir := t.TempDir()
	write := func(name string, fields []arrow.Field, md map[string]string, fill func(b *array.RecordBuilder)) string {
		t.Helper()
		meta := arrow.MetadataFrom(md)
		schema := arrow.NewSchema(fields, &meta)
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		fill(b)
		rec := b.NewRecordBatch()
		defer rec.Release()
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(mem))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fields := []arrow.Field{
		{Name: "future_col", Type: arrow.BinaryTypes.String},
		{Name: "step", Type: arrow.PrimitiveTypes.Int64},
		{Name: "segment", Type: arrow.PrimitiveTypes.Int32},
		{Name: "wall_s", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}
	path := write("foreign.arrow", fields, nil, func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).AppendValues([]string{"a", "b"}, nil)
		b.Field(1).(*array.Int64Builder).AppendValues([]int64{5, 6}, nil)
		b.Field(2).(*array.Int32Builder).AppendValues([]int32{2, 2}, nil)
		b.Field(3).(*array.Float64Builder).AppendValues([]float64{1.5, 0}, []bool{true, false})
	})
	rows, err := readTable(mem, path, metricsTable, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Step != 5 || rows[1].Segment != 2 || rows[0].WallS != 1.5 ||
		!math.IsNaN(rows[1].WallS) || !math.IsNaN(rows[0].GradNorm) || rows[0].EnvSteps != 0 {
		t.Errorf("foreign rows = %+v", rows)
	}
	// A file from before the evaluation columns: no row is an evaluation
	// point, and the return reads as "none".
	for i, r := range rows {
		if r.EvalEpisodes != 0 || !math.IsNaN(r.EvalReturn) || !math.IsNaN(r.EvalSuccess) {
			t.Errorf("row %d of a file without evaluation columns: eval_episodes %d, eval_return %v, eval_success %v; want 0, NaN and NaN",
				i, r.EvalEpisodes, r.EvalReturn, r.EvalSuccess)
		}
	}

	wrongTable := write("episodes.arrow", fields[1:3], map[string]string{metaTable: "episodes"}, func(b *array.RecordBuilder) {})
	if _, err := readTable(mem, wrongTable, metricsTable, nil); err == nil || !strings.Contains(err.Error(), `holds a "episodes" table`) {
		t.Errorf("wrong table: err = %v", err)
	}
	badType := write("bad.arrow", []arrow.Field{
		{Name: "segment", Type: arrow.PrimitiveTypes.Int64}, {Name: "step", Type: arrow.PrimitiveTypes.Int64},
	}, nil, func(b *array.RecordBuilder) {})
	if _, err := readTable(mem, badType, metricsTable, nil); err == nil || !strings.Contains(err.Error(), `column "segment" has type int64`) {
		t.Errorf("bad type: err = %v", err)
	}
	noKey := write("nokey.arrow", fields[1:2], nil, func(b *array.RecordBuilder) {})
	if _, err := readTable(mem, noKey, metricsTable, nil); err == nil || !strings.Contains(err.Error(), `missing key column "segment"`) {
		t.Errorf("missing key: err = %v", err)
	}
}

func TestLastEpisodesReadsNewestSegmentsOnly(t *testing.T) {
	dir := t.TempDir()
	// Segments 1-3 with 3 episodes each; returns are 10*segment + index.
	for s := int32(1); s <= 3; s++ {
		var eps []EpisodeRow
		for i := 0; i < 3; i++ {
			eps = append(eps, EpisodeRow{EnvSteps: int64(100*s) + int64(i), Return: float64(10*s) + float64(i)})
		}
		if err := WriteSegment(dir, s, []MetricsRow{{Step: int64(s)}}, eps); err != nil {
			t.Fatal(err)
		}
	}
	// Segment 1's episodes file is unreadable: the last 4 episodes must not need it.
	if err := os.WriteFile(filepath.Join(dir, EpisodesDir, SegmentFile(1)), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LastEpisodes(dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{22, 30, 31, 32}
	if len(got) != len(want) {
		t.Fatalf("got %d episodes, want %d", len(got), len(want))
	}
	for i, e := range got {
		if e.Return != want[i] {
			t.Errorf("episode %d return %v, want %v", i, e.Return, want[i])
		}
	}
	if _, err := LastEpisodes(dir, 10); err == nil {
		t.Error("asking for more than segments 2-3 hold reads segment 1, which is corrupt: want an error")
	}
}
