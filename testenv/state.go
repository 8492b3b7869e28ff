package testenv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The binary state format of every environment is
//
//	tag (length-prefixed string) | version (1 byte) | fields (little-endian)
//
// written by StateWriter and read back by StateReader; the tag keeps one
// kind's state from being loaded into another.

const stateVersion = 1

// StateWriter appends the fields of an environment's binary state to a byte slice. Start it
// with NewStateWriter and take the result with Data. Every environment's MarshalBinary in
// testenv and its sub-packages uses it, so they share one format.
type StateWriter struct{ b []byte }

// NewStateWriter starts a state with its tag (the environment kind) and the format version.
func NewStateWriter(tag string) *StateWriter {
	w := &StateWriter{}
	w.Bytes([]byte(tag))
	w.b = append(w.b, stateVersion)
	return w
}

// Data returns the encoded state.
func (w *StateWriter) Data() []byte { return w.b }

// U64, F64, Int, Bool, Byte and Bytes append one field (little-endian; Bytes length-prefixed).
func (w *StateWriter) U64(v uint64)   { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *StateWriter) F64(v float64)  { w.U64(math.Float64bits(v)) }
func (w *StateWriter) Int(v int)      { w.U64(uint64(int64(v))) }
func (w *StateWriter) Bool(v bool)    { w.b = append(w.b, boolByte(v)) }
func (w *StateWriter) Byte(v byte)    { w.b = append(w.b, v) }
func (w *StateWriter) Bytes(p []byte) { w.U64(uint64(len(p))); w.b = append(w.b, p...) }

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// StateReader consumes the fields StateWriter wrote; the first problem sticks and Err (or
// Done) reports it.
type StateReader struct {
	b   []byte
	err error
}

var errShortState = errors.New("state is truncated")

// NewStateReader starts reading data, checking its tag and format version.
func NewStateReader(data []byte, tag string) *StateReader {
	r := &StateReader{b: data}
	if got := string(r.Bytes()); r.err == nil && got != tag {
		r.err = fmt.Errorf("state is for %q, not %q", got, tag)
	}
	if v := r.Byte(); r.err == nil && v != stateVersion {
		r.err = fmt.Errorf("state version %d, want %d", v, stateVersion)
	}
	return r
}

func (r *StateReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = errShortState
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

// Byte, U64, F64, Int, Bool and Bytes read one field; after a problem they return zero values.
func (r *StateReader) Byte() byte {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *StateReader) U64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (r *StateReader) F64() float64 { return math.Float64frombits(r.U64()) }
func (r *StateReader) Int() int     { return int(int64(r.U64())) }

func (r *StateReader) Bool() bool {
	switch b := r.Byte(); b {
	case 0:
		return false
	case 1:
		return true
	default:
		r.Fail(fmt.Errorf("invalid boolean byte %d", b))
		return false
	}
}

func (r *StateReader) Bytes() []byte {
	n := r.U64()
	if r.err == nil && n > uint64(len(r.b)) {
		r.err = errShortState
		return nil
	}
	return r.take(int(n))
}

// Count reads a length and checks that it is within 0..limit.
func (r *StateReader) Count(limit int) int {
	n := r.Int()
	if r.err == nil && (n < 0 || n > limit) {
		r.err = fmt.Errorf("count %d out of range 0..%d", n, limit)
		return 0
	}
	return n
}

// Fail records err as the reader's problem unless it already has one.
func (r *StateReader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Err reports the first problem.
func (r *StateReader) Err() error { return r.err }

// Done reports the first problem, or trailing bytes.
func (r *StateReader) Done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d unexpected trailing bytes", len(r.b))
	}
	return r.err
}

// roundObs rounds v to float32 precision, as Gymnasium's np.float32
// observations are.
func roundObs(v float64) float64 { return float64(float32(v)) }
