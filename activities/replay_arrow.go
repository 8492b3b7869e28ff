package activities

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/accerl/accerl/activities/engine"
)

// replayFile is the checkpoint file that holds the replay buffer.
const replayFile = "replay.arrow"

// The replay buffer is stored as an Arrow IPC file with one row per trajectory chunk, so
// that any Arrow reader can inspect what a run was about to train on. Per-step values are
// list columns. versions is the policy version that acted at each step, staleness the
// checkpoint's policy version minus that (what the trainer would see if it sampled now).
// A null list means the chunk has no such field (e.g. next_obs of a terminated chunk).
var replaySchema = arrow.NewSchema([]arrow.Field{
	{Name: "env", Type: arrow.PrimitiveTypes.Int64},
	{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
	{Name: "obs", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
	{Name: "actions", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
	{Name: "cont_actions", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
	{Name: "log_probs", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
	{Name: "values", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
	{Name: "rewards", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
	{Name: "versions", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
	{Name: "staleness", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
	{Name: "terminated", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "truncated", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "next_obs", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
	{Name: "terminal_obs", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
	{Name: "success", Type: arrow.FixedWidthTypes.Boolean},
	// frames holds each step's frame (the environment's camera images as raw bytes, e.g. the
	// tabletop suites' RGB images, H×W×3 per camera, cameras concatenated), one binary value
	// per step; next_frame and terminal_frame those of next_obs and terminal_obs. Null
	// without frames.
	{Name: "frames", Type: arrow.ListOf(arrow.BinaryTypes.Binary), Nullable: true},
	{Name: "next_frame", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "terminal_frame", Type: arrow.BinaryTypes.Binary, Nullable: true},
	// start identifies the start of the chunk's episode, a hash of its first observation
	// (engine.Chunk.Start: algorithm.repeat_starts compares the plays of one start).
	{Name: "start", Type: arrow.PrimitiveTypes.Uint64},
}, nil)

// replaySchemaV1 is the schema of checkpoints written before the success column; such a
// file reads back with every chunk's Success false. replaySchemaV2 is that of checkpoints
// written before the frame columns (no frames), replaySchemaV3 before the start column
// (every chunk's Start 0).
var (
	replaySchemaV1 = arrow.NewSchema(replaySchema.Fields()[:14], nil)
	replaySchemaV2 = arrow.NewSchema(replaySchema.Fields()[:15], nil)
	replaySchemaV3 = arrow.NewSchema(replaySchema.Fields()[:18], nil)
)

// encodeReplay writes chunks (oldest first) as an Arrow IPC file; version is the policy
// version of the checkpoint, for the staleness column.
func encodeReplay(chunks []*engine.Chunk, version int64) ([]byte, error) {
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, replaySchema)
	defer b.Release()
	frames := false
	for _, c := range chunks {
		b.Field(0).(*array.Int64Builder).Append(int64(c.Env))
		b.Field(1).(*array.Int64Builder).Append(c.Seq)
		appendFloats(b.Field(2), c.Obs)
		appendInts(b.Field(3), c.Actions)
		appendFloats(b.Field(4), c.ContActions)
		appendFloats(b.Field(5), c.LogProbs)
		appendFloats(b.Field(6), c.Values)
		appendFloats(b.Field(7), c.Rewards)
		appendInt64s(b.Field(8), c.Versions)
		stale := make([]int64, len(c.Versions))
		for i, v := range c.Versions {
			stale[i] = version - v
		}
		appendInt64s(b.Field(9), stale)
		b.Field(10).(*array.BooleanBuilder).Append(c.Terminated)
		b.Field(11).(*array.BooleanBuilder).Append(c.Truncated)
		appendFloats(b.Field(12), c.NextObs)
		appendFloats(b.Field(13), c.TerminalObs)
		b.Field(14).(*array.BooleanBuilder).Append(c.Success)
		appendFrames(b.Field(15), c.Frames, c.Len())
		frames = frames || len(c.Frames) > 0
		appendBinary(b.Field(16), c.NextFrame)
		appendBinary(b.Field(17), c.TerminalFrame)
		b.Field(18).(*array.Uint64Builder).Append(c.Start)
	}
	var opts []ipc.Option
	if frames {
		// Frames are most of the file and compress well (flat-shaded renders): ZSTD, which
		// every Arrow reader decompresses transparently.
		opts = append(opts, ipc.WithZstd())
	}
	data, err := writeIPC(b, mem, opts...)
	if err != nil {
		return nil, fmt.Errorf("encode replay: %w", err)
	}
	return data, nil
}

// writeIPC finishes b's record batch and returns it as an Arrow IPC file.
func writeIPC(b *array.RecordBuilder, mem memory.Allocator, opts ...ipc.Option) ([]byte, error) {
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, append([]ipc.Option{ipc.WithSchema(rec.Schema()), ipc.WithAllocator(mem)}, opts...)...)
	if err != nil {
		return nil, err
	}
	if err := w.Write(rec); err != nil {
		_ = w.Close()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeReplay reads the chunks back in order.
func decodeReplay(data []byte) ([]*engine.Chunk, error) {
	mem := memory.NewGoAllocator()
	r, err := ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("decode replay: %w", err)
	}
	defer func() { _ = r.Close() }()
	hasStart := r.Schema().Equal(replaySchema)
	hasFrames := hasStart || r.Schema().Equal(replaySchemaV3)
	hasSuccess := hasFrames || r.Schema().Equal(replaySchemaV2)
	if !hasSuccess && !r.Schema().Equal(replaySchemaV1) {
		return nil, fmt.Errorf("decode replay: unexpected schema %v", r.Schema())
	}
	var chunks []*engine.Chunk
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			return nil, fmt.Errorf("decode replay: %w", err)
		}
		col := func(j int) arrow.Array { return rec.Column(j) }
		for row := 0; row < int(rec.NumRows()); row++ {
			c := &engine.Chunk{
				Env:         int(col(0).(*array.Int64).Value(row)),
				Seq:         col(1).(*array.Int64).Value(row),
				Obs:         floatsAt(col(2), row),
				Actions:     intsAt(col(3), row),
				ContActions: floatsAt(col(4), row),
				LogProbs:    floatsAt(col(5), row),
				Values:      floatsAt(col(6), row),
				Rewards:     floatsAt(col(7), row),
				Versions:    int64sAt(col(8), row),
				Terminated:  col(10).(*array.Boolean).Value(row),
				Truncated:   col(11).(*array.Boolean).Value(row),
				NextObs:     floatsAt(col(12), row),
				TerminalObs: floatsAt(col(13), row),
			}
			if hasSuccess {
				c.Success = col(14).(*array.Boolean).Value(row)
			}
			if hasFrames {
				c.Frames = framesAt(col(15), row)
				c.NextFrame = binaryAt(col(16), row)
				c.TerminalFrame = binaryAt(col(17), row)
			}
			if hasStart {
				c.Start = col(18).(*array.Uint64).Value(row)
			}
			chunks = append(chunks, c)
		}
	}
	return chunks, nil
}

func appendFloats(b array.Builder, x []float64) {
	lb := b.(*array.ListBuilder)
	if x == nil {
		lb.AppendNull()
		return
	}
	lb.Append(true)
	lb.ValueBuilder().(*array.Float64Builder).AppendValues(x, nil)
}

func appendInt64s(b array.Builder, x []int64) {
	lb := b.(*array.ListBuilder)
	if x == nil {
		lb.AppendNull()
		return
	}
	lb.Append(true)
	lb.ValueBuilder().(*array.Int64Builder).AppendValues(x, nil)
}

func appendInts(b array.Builder, x []int) {
	if x == nil {
		appendInt64s(b, nil)
		return
	}
	y := make([]int64, len(x))
	for i, v := range x {
		y[i] = int64(v)
	}
	appendInt64s(b, y)
}

// appendFrames appends a chunk's frames (steps frames of equal length, concatenated) as one
// list of binary values, null when there are none.
func appendFrames(b array.Builder, frames []byte, steps int) {
	lb := b.(*array.ListBuilder)
	if len(frames) == 0 || steps == 0 {
		lb.AppendNull()
		return
	}
	lb.Append(true)
	vb := lb.ValueBuilder().(*array.BinaryBuilder)
	n := len(frames) / steps
	for t := range steps {
		vb.Append(frames[t*n : (t+1)*n])
	}
}

func appendBinary(b array.Builder, x []byte) {
	bb := b.(*array.BinaryBuilder)
	if x == nil {
		bb.AppendNull()
		return
	}
	bb.Append(x)
}

// framesAt concatenates row's frames (nil for a null row).
func framesAt(a arrow.Array, row int) []byte {
	lo, hi, ok := listRange(a, row)
	if !ok {
		return nil
	}
	vals := a.(*array.List).ListValues().(*array.Binary)
	var out []byte
	for i := lo; i < hi; i++ {
		out = append(out, vals.Value(int(i))...)
	}
	return out
}

func binaryAt(a arrow.Array, row int) []byte {
	b := a.(*array.Binary)
	if b.IsNull(row) {
		return nil
	}
	return append([]byte{}, b.Value(row)...)
}

// listRange returns the value range of row in a list column, ok false when the row is null.
func listRange(a arrow.Array, row int) (lo, hi int64, ok bool) {
	l := a.(*array.List)
	if l.IsNull(row) {
		return 0, 0, false
	}
	lo, hi = l.ValueOffsets(row)
	return lo, hi, true
}

func floatsAt(a arrow.Array, row int) []float64 {
	lo, hi, ok := listRange(a, row)
	if !ok {
		return nil
	}
	vals := a.(*array.List).ListValues().(*array.Float64).Float64Values()
	return append([]float64{}, vals[lo:hi]...)
}

func int64sAt(a arrow.Array, row int) []int64 {
	lo, hi, ok := listRange(a, row)
	if !ok {
		return nil
	}
	vals := a.(*array.List).ListValues().(*array.Int64).Int64Values()
	return append([]int64{}, vals[lo:hi]...)
}

func intsAt(a arrow.Array, row int) []int {
	x := int64sAt(a, row)
	if x == nil {
		return nil
	}
	out := make([]int, len(x))
	for i, v := range x {
		out[i] = int(v)
	}
	return out
}

// snapshotFiles lays an engine snapshot out as checkpoint files: the replay buffer as Arrow
// IPC (replay.arrow), with a world model its B_real and B_img too (b_real.arrow,
// b_img.arrow), and everything else as JSON (engine.json).
func snapshotFiles(snap *engine.Snapshot) (map[string][]byte, error) {
	replay, err := encodeReplay(snap.Replay, snap.PolicyVersion)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{replayFile: replay}
	rest := *snap
	rest.Replay = nil
	if wm := snap.WorldModel; wm != nil {
		if files[realFile], err = encodeReal(wm); err != nil {
			return nil, err
		}
		if files[imaginedFile], err = encodeReplay(wm.Img, snap.PolicyVersion); err != nil {
			return nil, fmt.Errorf("B_img: %w", err)
		}
		w := *wm
		w.RealHist, w.RealAct, w.RealNext, w.RealLabel, w.RealTerm, w.Img = nil, nil, nil, nil, nil, nil
		rest.WorldModel = &w
	}
	if px := snap.PixelWM; px != nil {
		// The online pixel world model's trainer records (a few MB) as files of their own
		// rather than base64 inside engine.json.
		for name, b := range map[string][]byte{pixelObsStateFile: px.Obs, pixelRewStateFile: px.Rew, pixelProprioStateFile: px.Proprio} {
			files[name] = b
		}
		rest.PixelWM = &engine.PixelWMState{ObsFits: px.ObsFits, RewFits: px.RewFits}
	}
	if files[engineStateFile], err = json.Marshal(&rest); err != nil {
		return nil, fmt.Errorf("encode engine state: %w", err)
	}
	return files, nil
}

// Files of a checkpoint's online pixel world model (engine.PixelWMState's trainer records).
const (
	pixelObsStateFile     = "pixel_wm_obs.bin"
	pixelRewStateFile     = "pixel_wm_rew.bin"
	pixelProprioStateFile = "pixel_wm_proprio.bin"
)

// LoadSnapshot rebuilds an engine snapshot from a checkpoint's verified files (see
// checkpoint.Load): engine.json plus the Arrow files snapshotFiles writes. A checkpoint
// written before a buffer moved to Arrow has it in engine.json instead, and loads as well.
func LoadSnapshot(files map[string][]byte) (*engine.Snapshot, error) {
	var snap engine.Snapshot
	if err := json.Unmarshal(files[engineStateFile], &snap); err != nil {
		return nil, fmt.Errorf("decode engine state: %w", err)
	}
	if data, ok := files[replayFile]; ok {
		chunks, err := decodeReplay(data)
		if err != nil {
			return nil, err
		}
		snap.Replay = chunks
	}
	if wm := snap.WorldModel; wm != nil {
		if data, ok := files[realFile]; ok {
			if err := decodeReal(data, wm); err != nil {
				return nil, err
			}
		}
		if data, ok := files[imaginedFile]; ok {
			chunks, err := decodeReplay(data)
			if err != nil {
				return nil, fmt.Errorf("B_img: %w", err)
			}
			wm.Img = chunks
		}
	}
	if px := snap.PixelWM; px != nil {
		for _, f := range []struct {
			name string
			dst  *[]byte
		}{{pixelObsStateFile, &px.Obs}, {pixelRewStateFile, &px.Rew}, {pixelProprioStateFile, &px.Proprio}} {
			if b, ok := files[f.name]; ok {
				*f.dst = b
			} else if len(*f.dst) == 0 {
				return nil, fmt.Errorf("decode engine state: the online pixel world model's %s is missing", f.name)
			}
		}
	}
	return &snap, nil
}
