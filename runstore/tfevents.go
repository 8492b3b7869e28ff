package runstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"path/filepath"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// TensorBoardDir is the subdirectory of a run directory that holds its
// TensorBoard event files, one per segment (TensorBoardFile).
const TensorBoardDir = "tb"

// tbFileVersion is the file_version of the first event of every file, the
// value TensorFlow's own writers put there.
const tbFileVersion = "brain.Event:2"

// TensorBoardFile returns the name of a segment's event file,
// "events.out.tfevents.000001.accerl" for segment 1. TensorBoard reads every
// file in a directory whose name contains "tfevents"; the zero-padded
// segment keeps the files in segment order when sorted by name.
func TensorBoardFile(segment int32) string {
	return fmt.Sprintf("events.out.tfevents.%06d.accerl", segment)
}

// tbScalar is one metrics column written to the event files, under the tag
// group/column (TensorBoard groups its charts by the part before the slash).
type tbScalar struct {
	group, column string
	value         func(*MetricsRow) *float64
}

// tbScalars are the float columns of the metrics file that the event files
// carry, in the order they appear in each event: every float column but
// wall_s (TensorBoard has its own time axis). Integer counters (episodes,
// policy_version, ...) are left out.
var tbScalars = func() []tbScalar {
	groups := []struct{ group, column string }{
		{"return", "episode_return"},
		{"return", "success"},
		{"return", "eval_return"},
		{"loss", "policy_loss"},
		{"loss", "value_loss"},
		{"loss", "entropy"},
		{"loss", "approx_kl"},
		{"loss", "clip_frac"},
		{"loss", "grad_norm"},
		{"offpolicy", "staleness"},
		{"offpolicy", "low_weight_frac"},
		{"offpolicy", "ess"},
		{"offpolicy", "lag_clip_frac"},
		{"offpolicy", "lag_low_weight_frac"},
		{"offpolicy", "lag_ess"},
		{"worldmodel", "horizon"},
		{"worldmodel", "wm_val_loss"},
		{"throughput", "steps_per_s"},
		{"throughput", "inference_batch"},
		{"throughput", "queue_wait_ms"},
		{"throughput", "trainer_busy"},
		{"system", "cpu_util"},
		{"system", "gpu_util"},
		{"system", "gpu_mem"},
	}
	out := make([]tbScalar, len(groups))
	for i, g := range groups {
		var acc func(*MetricsRow) *float64
		for _, c := range metricsTable.cols {
			if c.name == g.column {
				acc = c.f64
			}
		}
		if acc == nil {
			panic(fmt.Sprintf("runstore: tensorboard scalar %q is not a float column of the metrics table", g.column))
		}
		out[i] = tbScalar{group: g.group, column: g.column, value: acc}
	}
	return out
}()

// WriteTensorBoard writes the metrics rows of one segment as the TensorBoard
// event file <runDir>/tb/TensorBoardFile(segment), replacing it atomically
// if it exists, so a retried segment rewrites its curves instead of
// duplicating them. WriteSegment calls it; it is exported for tools that
// rebuild the event files of an existing run.
//
// The file is a TFRecord stream of Event protocol buffers: first an event
// with file_version "brain.Event:2", then one event per metrics row with
// step = env_steps and a summary holding one simple_value per float column
// of tbScalars that is not NaN (rows with none are left out). The wall time
// of a row is the time of the write shifted back by the row's wall_s
// distance from the segment's last row, so TensorBoard's relative time axis
// matches wall_s.
func WriteTensorBoard(runDir string, segment int32, metrics []MetricsRow) error {
	now := float64(time.Now().UnixNano()) / 1e9
	last := math.Inf(-1)
	for i := range metrics {
		last = max(last, metrics[i].WallS)
	}
	path := filepath.Join(runDir, TensorBoardDir, TensorBoardFile(segment))
	var buf bytes.Buffer
	writeRecord(&buf, fileVersionEvent(now))
	for i := range metrics {
		wall := now
		if !math.IsNaN(metrics[i].WallS) && !math.IsInf(last, 0) {
			wall = now - (last - metrics[i].WallS)
		}
		if ev, ok := scalarsEvent(&metrics[i], wall); ok {
			writeRecord(&buf, ev)
		}
	}
	err := WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	})
	if err != nil {
		return fmt.Errorf("write tensorboard events %q: %w", path, err)
	}
	return nil
}

// Field numbers of tensorflow/core/util/event.proto and
// tensorflow/core/framework/summary.proto.
const (
	eventWallTime    protowire.Number = 1 // double
	eventStep        protowire.Number = 2 // int64
	eventFileVersion protowire.Number = 3 // string
	eventSummary     protowire.Number = 5 // Summary
	summaryValue     protowire.Number = 1 // repeated Summary.Value
	valueTag         protowire.Number = 1 // string
	valueSimpleValue protowire.Number = 2 // float
)

// fileVersionEvent encodes the Event that opens every event file.
func fileVersionEvent(wall float64) []byte {
	b := protowire.AppendTag(nil, eventWallTime, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(wall))
	b = protowire.AppendTag(b, eventFileVersion, protowire.BytesType)
	return protowire.AppendString(b, tbFileVersion)
}

// scalarsEvent encodes the Event of one metrics row, and false when the row
// has no scalar that is not NaN. Values are stored as float32, the type of
// simple_value.
func scalarsEvent(r *MetricsRow, wall float64) ([]byte, bool) {
	var summary []byte
	for _, s := range tbScalars {
		v := *s.value(r)
		if math.IsNaN(v) {
			continue
		}
		var val []byte
		val = protowire.AppendTag(val, valueTag, protowire.BytesType)
		val = protowire.AppendString(val, s.group+"/"+s.column)
		val = protowire.AppendTag(val, valueSimpleValue, protowire.Fixed32Type)
		val = protowire.AppendFixed32(val, math.Float32bits(float32(v)))
		summary = protowire.AppendTag(summary, summaryValue, protowire.BytesType)
		summary = protowire.AppendBytes(summary, val)
	}
	if summary == nil {
		return nil, false
	}
	b := protowire.AppendTag(nil, eventWallTime, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(wall))
	b = protowire.AppendTag(b, eventStep, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(r.EnvSteps))
	b = protowire.AppendTag(b, eventSummary, protowire.BytesType)
	b = protowire.AppendBytes(b, summary)
	return b, true
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is TFRecord's masked CRC32C: rotate right by 15 bits and add a
// constant, so that a CRC of data that itself holds CRCs stays well mixed
// (tensorflow/core/lib/hash/crc32c.h, Mask).
func maskedCRC(data []byte) uint32 {
	c := crc32.Checksum(data, castagnoli)
	return ((c >> 15) | (c << 17)) + 0xa282ead8
}

// writeRecord appends data to buf as one TFRecord: little-endian uint64
// length, masked CRC32C of those 8 bytes, the data, masked CRC32C of the
// data (tensorflow/core/lib/io/record_writer.cc).
func writeRecord(buf *bytes.Buffer, data []byte) {
	var head [12]byte
	binary.LittleEndian.PutUint64(head[:8], uint64(len(data)))
	binary.LittleEndian.PutUint32(head[8:], maskedCRC(head[:8]))
	buf.Write(head[:])
	buf.Write(data)
	binary.LittleEndian.PutUint32(head[:4], maskedCRC(data))
	buf.Write(head[:4])
}
