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
// written by stateWriter and read back by stateReader; the tag keeps one
// kind's state from being loaded into another.

const stateVersion = 1

// stateWriter appends fields to a byte slice.
type stateWriter struct{ b []byte }

func newStateWriter(tag string) *stateWriter {
	w := &stateWriter{}
	w.bytes([]byte(tag))
	w.b = append(w.b, stateVersion)
	return w
}

func (w *stateWriter) u64(v uint64)   { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *stateWriter) f64(v float64)  { w.u64(math.Float64bits(v)) }
func (w *stateWriter) int(v int)      { w.u64(uint64(int64(v))) }
func (w *stateWriter) bool(v bool)    { w.b = append(w.b, boolByte(v)) }
func (w *stateWriter) bytes(p []byte) { w.u64(uint64(len(p))); w.b = append(w.b, p...) }

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// stateReader consumes fields; the first problem sticks in err.
type stateReader struct {
	b   []byte
	err error
}

var errShortState = errors.New("state is truncated")

func newStateReader(data []byte, tag string) *stateReader {
	r := &stateReader{b: data}
	if got := string(r.bytes()); r.err == nil && got != tag {
		r.err = fmt.Errorf("state is for %q, not %q", got, tag)
	}
	if v := r.byte(); r.err == nil && v != stateVersion {
		r.err = fmt.Errorf("state version %d, want %d", v, stateVersion)
	}
	return r
}

func (r *stateReader) take(n int) []byte {
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

func (r *stateReader) byte() byte {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *stateReader) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (r *stateReader) f64() float64 { return math.Float64frombits(r.u64()) }
func (r *stateReader) int() int     { return int(int64(r.u64())) }

func (r *stateReader) bool() bool {
	switch b := r.byte(); b {
	case 0:
		return false
	case 1:
		return true
	default:
		if r.err == nil {
			r.err = fmt.Errorf("invalid boolean byte %d", b)
		}
		return false
	}
}

func (r *stateReader) bytes() []byte {
	n := r.u64()
	if r.err == nil && n > uint64(len(r.b)) {
		r.err = errShortState
		return nil
	}
	return r.take(int(n))
}

// done reports the first error, or trailing bytes.
func (r *stateReader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d unexpected trailing bytes", len(r.b))
	}
	return r.err
}

// roundObs rounds v to float32 precision, as Gymnasium's np.float32
// observations are.
func roundObs(v float64) float64 { return float64(float32(v)) }
