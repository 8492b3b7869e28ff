package runstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// tbEvent is an Event as the test's own reader decodes it.
type tbEvent struct {
	wallTime    float64
	step        int64
	fileVersion string
	values      map[string]float32
	tags        []string // in file order
}

// readTFEvents is an independent reader of a TensorBoard event file, written
// from the format description rather than from the writer: TFRecord framing
// (uint64 length, masked CRC32C of the length, data, masked CRC32C of the
// data) around Event protos (wall_time 1 double, step 2 int64, file_version
// 3 string, summary 5 with repeated value 1 {tag 1 string, simple_value 2
// float}).
func readTFEvents(t *testing.T, path string) []tbEvent {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	mask := func(b []byte) uint32 {
		c := crc32.Checksum(b, table)
		return (c>>15 | c<<17) + 0xa282ead8
	}
	var events []tbEvent
	for off := 0; off < len(data); {
		if len(data)-off < 12 {
			t.Fatalf("%s: %d trailing bytes at offset %d, not a record header", path, len(data)-off, off)
		}
		n := binary.LittleEndian.Uint64(data[off:])
		if got, want := binary.LittleEndian.Uint32(data[off+8:]), mask(data[off:off+8]); got != want {
			t.Fatalf("%s: record at %d: length crc %#x, want %#x", path, off, got, want)
		}
		off += 12
		if uint64(len(data)-off) < n+4 {
			t.Fatalf("%s: record at %d: length %d runs past the end", path, off, n)
		}
		rec := data[off : off+int(n)]
		if got, want := binary.LittleEndian.Uint32(data[off+int(n):]), mask(rec); got != want {
			t.Fatalf("%s: record at %d: data crc %#x, want %#x", path, off, got, want)
		}
		off += int(n) + 4
		ev, err := decodeEvent(rec)
		if err != nil {
			t.Fatalf("%s: record %d: %v", path, len(events), err)
		}
		events = append(events, ev)
	}
	return events
}

func decodeEvent(b []byte) (tbEvent, error) {
	ev := tbEvent{values: map[string]float32{}}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ev, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.Fixed64Type:
			v, n := protowire.ConsumeFixed64(b)
			if n < 0 {
				return ev, protowire.ParseError(n)
			}
			ev.wallTime, b = math.Float64frombits(v), b[n:]
		case num == 2 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return ev, protowire.ParseError(n)
			}
			ev.step, b = int64(v), b[n:]
		case num == 3 && typ == protowire.BytesType:
			v, n := protowire.ConsumeString(b)
			if n < 0 {
				return ev, protowire.ParseError(n)
			}
			ev.fileVersion, b = v, b[n:]
		case num == 5 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return ev, protowire.ParseError(n)
			}
			if err := decodeSummary(v, &ev); err != nil {
				return ev, err
			}
			b = b[n:]
		default:
			return ev, fmt.Errorf("unexpected event field %d of wire type %d", num, typ)
		}
	}
	return ev, nil
}

func decodeSummary(b []byte, ev *tbEvent) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if num != 1 || typ != protowire.BytesType {
			return fmt.Errorf("unexpected summary field %d of wire type %d", num, typ)
		}
		val, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var tag string
		var simple float32
		var hasTag, hasValue bool
		for len(val) > 0 {
			num, typ, n := protowire.ConsumeTag(val)
			if n < 0 {
				return protowire.ParseError(n)
			}
			val = val[n:]
			switch {
			case num == 1 && typ == protowire.BytesType:
				s, n := protowire.ConsumeString(val)
				if n < 0 {
					return protowire.ParseError(n)
				}
				tag, hasTag, val = s, true, val[n:]
			case num == 2 && typ == protowire.Fixed32Type:
				v, n := protowire.ConsumeFixed32(val)
				if n < 0 {
					return protowire.ParseError(n)
				}
				simple, hasValue, val = math.Float32frombits(v), true, val[n:]
			default:
				return fmt.Errorf("unexpected value field %d of wire type %d", num, typ)
			}
		}
		if !hasTag || !hasValue {
			return fmt.Errorf("summary value without tag or simple_value")
		}
		if _, dup := ev.values[tag]; dup {
			return fmt.Errorf("tag %q twice in one event", tag)
		}
		ev.values[tag] = simple
		ev.tags = append(ev.tags, tag)
	}
	return nil
}

// wantScalars lists, independently of the writer's table, the tag each
// float column should appear under.
var wantScalars = map[string]func(*MetricsRow) float64{
	"return/episode_return":         func(r *MetricsRow) float64 { return r.EpisodeReturn },
	"return/success":                func(r *MetricsRow) float64 { return r.Success },
	"return/eval_return":            func(r *MetricsRow) float64 { return r.EvalReturn },
	"loss/policy_loss":              func(r *MetricsRow) float64 { return r.PolicyLoss },
	"loss/value_loss":               func(r *MetricsRow) float64 { return r.ValueLoss },
	"loss/entropy":                  func(r *MetricsRow) float64 { return r.Entropy },
	"loss/approx_kl":                func(r *MetricsRow) float64 { return r.ApproxKL },
	"loss/clip_frac":                func(r *MetricsRow) float64 { return r.ClipFrac },
	"loss/grad_norm":                func(r *MetricsRow) float64 { return r.GradNorm },
	"offpolicy/staleness":           func(r *MetricsRow) float64 { return r.Staleness },
	"offpolicy/low_weight_frac":     func(r *MetricsRow) float64 { return r.LowWeightFrac },
	"offpolicy/ess":                 func(r *MetricsRow) float64 { return r.ESS },
	"offpolicy/lag_clip_frac":       func(r *MetricsRow) float64 { return r.LagClipFrac },
	"offpolicy/lag_low_weight_frac": func(r *MetricsRow) float64 { return r.LagLowWeight },
	"offpolicy/lag_ess":             func(r *MetricsRow) float64 { return r.LagESS },
	"worldmodel/horizon":            func(r *MetricsRow) float64 { return r.Horizon },
	"worldmodel/wm_val_loss":        func(r *MetricsRow) float64 { return r.WMValLoss },
	"throughput/steps_per_s":        func(r *MetricsRow) float64 { return r.StepsPerS },
	"throughput/inference_batch":    func(r *MetricsRow) float64 { return r.InferenceBatch },
	"throughput/queue_wait_ms":      func(r *MetricsRow) float64 { return r.QueueWaitMs },
	"throughput/trainer_busy":       func(r *MetricsRow) float64 { return r.TrainerBusy },
	"system/cpu_util":               func(r *MetricsRow) float64 { return r.CPUUtil },
	"system/gpu_util":               func(r *MetricsRow) float64 { return r.GPUUtil },
	"system/gpu_mem":                func(r *MetricsRow) float64 { return r.GPUMem },
}

// checkEvents compares the events of one file with the rows written: the
// file-version event first, then one event per row that has a value, with
// step = env_steps and every non-NaN scalar as float32.
func checkEvents(t *testing.T, events []tbEvent, rows []MetricsRow) {
	t.Helper()
	if len(events) == 0 || events[0].fileVersion != "brain.Event:2" || len(events[0].values) != 0 {
		t.Fatalf("first event %+v, want file_version brain.Event:2 and no summary", events)
	}
	var withValues []MetricsRow
	for _, r := range rows {
		for _, get := range wantScalars {
			if !math.IsNaN(get(&r)) {
				withValues = append(withValues, r)
				break
			}
		}
	}
	events = events[1:]
	if len(events) != len(withValues) {
		t.Fatalf("%d scalar events, want %d (rows with a value)", len(events), len(withValues))
	}
	for i, ev := range events {
		r := &withValues[i]
		if ev.step != r.EnvSteps {
			t.Errorf("event %d: step %d, want env_steps %d", i, ev.step, r.EnvSteps)
		}
		for tag, get := range wantScalars {
			v := get(r)
			got, ok := ev.values[tag]
			switch {
			case math.IsNaN(v) && ok:
				t.Errorf("event %d: NaN column written as %s = %v", i, tag, got)
			case !math.IsNaN(v) && !ok:
				t.Errorf("event %d: %s missing, want %v", i, tag, v)
			case ok && got != float32(v):
				t.Errorf("event %d: %s = %v, want %v", i, tag, got, float32(v))
			}
		}
		if len(ev.values) > len(wantScalars) {
			t.Errorf("event %d: unexpected tags in %v", i, ev.tags)
		}
		// Wall times keep the rows' wall_s spacing. Tolerance: a float64 of
		// ~1.8e9 seconds resolves 2.4e-7 s, and two roundings add up.
		if i > 0 {
			got, want := ev.wallTime-events[0].wallTime, r.WallS-withValues[0].WallS
			if math.Abs(got-want) > 1e-6 {
				t.Errorf("event %d: wall time %.6f s after the first, want %.6f", i, got, want)
			}
		}
	}
}

func TestTensorBoardRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rows := []MetricsRow{metricsRow(1, 0), metricsRow(1, 1), metricsRow(1, 2), metricsRow(1, 3)}
	// Not-applicable columns and a row with no value at all (left out).
	rows[0].Success, rows[0].GPUUtil, rows[0].GPUMem, rows[0].EvalReturn = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	for _, s := range tbScalars {
		*s.value(&rows[1]) = math.NaN()
	}
	rows[2].EvalReturn = math.NaN()
	rows[3].EvalReturn, rows[3].EpisodeReturn = 123.5, math.NaN()
	if err := WriteSegment(dir, 1, rows, nil); err != nil {
		t.Fatal(err)
	}
	events := readTFEvents(t, filepath.Join(dir, "tb", "events.out.tfevents.000001.accerl"))
	checkEvents(t, events, rows)
}

func TestTensorBoardRetryReplacesSegment(t *testing.T) {
	dir := t.TempDir()
	seg1 := []MetricsRow{metricsRow(1, 0), metricsRow(1, 1), metricsRow(1, 2)}
	seg2 := []MetricsRow{metricsRow(2, 3)}
	if err := WriteSegment(dir, 1, seg1, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteSegment(dir, 2, seg2, nil); err != nil {
		t.Fatal(err)
	}
	retry := []MetricsRow{metricsRow(1, 0), metricsRow(1, 1)}
	retry[1].EpisodeReturn = -7
	if err := WriteSegment(dir, 1, retry, nil); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "tb"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"events.out.tfevents.000001.accerl", "events.out.tfevents.000002.accerl"}; !slices.Equal(names, want) {
		t.Fatalf("tb holds %q, want %q (one file per segment, no temporary left)", names, want)
	}
	checkEvents(t, readTFEvents(t, filepath.Join(dir, "tb", names[0])), retry)
	checkEvents(t, readTFEvents(t, filepath.Join(dir, "tb", names[1])), seg2)
}

func TestTensorBoardEmptySegment(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSegment(dir, 3, nil, nil); err != nil {
		t.Fatal(err)
	}
	events := readTFEvents(t, filepath.Join(dir, "tb", TensorBoardFile(3)))
	checkEvents(t, events, nil)
}

// TestMaskedCRCKnownAnswer pins CRC32C to the check value of the
// Castagnoli polynomial ("123456789" → 0xe3069283, RFC 3720 B.4 lists the
// same polynomial) and the mask to its definition.
func TestMaskedCRCKnownAnswer(t *testing.T) {
	if got := crc32.Checksum([]byte("123456789"), crc32.MakeTable(crc32.Castagnoli)); got != 0xe3069283 {
		t.Fatalf("crc32c check value %#x", got)
	}
	c := uint32(0xe3069283)
	if got, want := maskedCRC([]byte("123456789")), ((c>>15)|(c<<17))+0xa282ead8; got != want {
		t.Fatalf("masked crc %#x, want %#x", got, want)
	}
}

func TestTensorBoardWriteError(t *testing.T) {
	dir := t.TempDir()
	// A file where the tb directory should be makes the write fail; the
	// segment must not commit (no metrics file).
	if err := os.WriteFile(filepath.Join(dir, "tb"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteSegment(dir, 1, []MetricsRow{metricsRow(1, 0)}, nil); err == nil {
		t.Fatal("WriteSegment succeeded with tb blocked")
	}
	if _, err := os.Stat(filepath.Join(dir, MetricsDir, SegmentFile(1))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("metrics file after a failed tensorboard write: %v", err)
	}
}
