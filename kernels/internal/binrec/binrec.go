// Package binrec holds the little-endian record format that the kernels'
// trainer checkpoints share:
//
//	magic (8 bytes) | body | CRC-32C (Castagnoli) of everything before it, uint32
//
// A [Writer] appends fixed-width fields to a byte slice and [Writer.Seal]
// appends the checksum; [Open] verifies the checksum and the magic and
// returns a [Reader] over the body. Each caller defines its own magic,
// format number and body.
package binrec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Writer appends little-endian fields.
type Writer []byte

// NewWriter returns a writer whose record starts with magic, with room
// for size more bytes.
func NewWriter(magic string, size int) Writer {
	return append(make(Writer, 0, len(magic)+size+4), magic...)
}

// U32 appends v.
func (w *Writer) U32(v uint32) { *w = binary.LittleEndian.AppendUint32(*w, v) }

// U64 appends v.
func (w *Writer) U64(v uint64) { *w = binary.LittleEndian.AppendUint64(*w, v) }

// I64 appends v as an int64.
func (w *Writer) I64(v int) { w.U64(uint64(int64(v))) }

// F64 appends v's float64 bits.
func (w *Writer) F64(v float64) { w.U64(math.Float64bits(v)) }

// F32s appends every value's float32 bits.
func (w *Writer) F32s(s []float32) {
	for _, v := range s {
		w.U32(math.Float32bits(v))
	}
}

// Seal appends the CRC-32C of the record so far and returns the record.
func (w Writer) Seal() []byte {
	return binary.LittleEndian.AppendUint32(w, crc32.Checksum(w, crcTable))
}

// Open checks that data is a sealed record that starts with magic and
// returns a reader over what lies between the magic and the checksum.
// what names the record in the errors ("edm: decode trainer").
func Open(data []byte, magic, what string) (*Reader, error) {
	if len(data) < len(magic)+8 {
		return nil, fmt.Errorf("%s: %d bytes is too short", what, len(data))
	}
	body := data[:len(data)-4]
	if got, want := crc32.Checksum(body, crcTable), binary.LittleEndian.Uint32(data[len(data)-4:]); got != want {
		return nil, fmt.Errorf("%s: checksum %08x, want %08x: the record is corrupt or truncated", what, got, want)
	}
	if string(body[:len(magic)]) != magic {
		return nil, fmt.Errorf("%s: magic %q, want %q", what, body[:len(magic)], magic)
	}
	return &Reader{B: body[len(magic):]}, nil
}

// Reader consumes little-endian fields; reading past the end sets Err and
// yields zeros.
type Reader struct {
	B   []byte
	Err error
}

// Take consumes n bytes.
func (r *Reader) Take(n int) []byte {
	if r.Err != nil || n < 0 || len(r.B) < n {
		r.Err = errors.New("record ends early")
		return make([]byte, max(n, 0))
	}
	p := r.B[:n]
	r.B = r.B[n:]
	return p
}

// U32 consumes a uint32.
func (r *Reader) U32() uint32 { return binary.LittleEndian.Uint32(r.Take(4)) }

// U64 consumes a uint64.
func (r *Reader) U64() uint64 { return binary.LittleEndian.Uint64(r.Take(8)) }

// I64 consumes an int64.
func (r *Reader) I64() int { return int(int64(r.U64())) }

// F64 consumes a float64.
func (r *Reader) F64() float64 { return math.Float64frombits(r.U64()) }

// F32s fills s with float32 values.
func (r *Reader) F32s(s []float32) {
	for i := range s {
		s[i] = math.Float32frombits(r.U32())
	}
}

// Tail is what every trainer record ends with, in this order: the
// optimisation settings (LR float64, BatchSize int64, MaxGradNorm float64,
// Seed uint64), the step count (int64), the PCG random state (its
// MarshalBinary bytes behind a uint32 length), the parameter count n
// (int64), then n parameters, n first and n second Adam moments as
// float32 bits.
type Tail struct {
	LR          float64
	BatchSize   int
	MaxGradNorm float64
	Seed        uint64
	Steps       int
	Rand        *rand.PCG
	Params      []float32
	M, V        []float32
}

// Tail appends t.
func (w *Writer) Tail(t Tail) error {
	rs, err := t.Rand.MarshalBinary()
	if err != nil {
		return fmt.Errorf("random state: %w", err)
	}
	w.F64(t.LR)
	w.I64(t.BatchSize)
	w.F64(t.MaxGradNorm)
	w.U64(t.Seed)
	w.I64(t.Steps)
	w.U32(uint32(len(rs)))
	*w = append(*w, rs...)
	w.I64(len(t.Params))
	for _, s := range [][]float32{t.Params, t.M, t.V} {
		w.F32s(s)
	}
	return nil
}

// Tail consumes the rest of the record as a Tail; its three arrays must
// fill it exactly.
func (r *Reader) Tail() (Tail, error) {
	var t Tail
	t.LR, t.BatchSize, t.MaxGradNorm, t.Seed = r.F64(), r.I64(), r.F64(), r.U64()
	t.Steps = r.I64()
	rs := r.Take(int(r.U32()))
	n := r.I64()
	if r.Err != nil {
		return t, r.Err
	}
	if n < 0 || len(r.B) != 12*n {
		return t, fmt.Errorf("%d parameters in %d bytes", n, len(r.B))
	}
	t.Rand = new(rand.PCG)
	if err := t.Rand.UnmarshalBinary(rs); err != nil {
		return t, fmt.Errorf("random state: %w", err)
	}
	t.Params, t.M, t.V = make([]float32, n), make([]float32, n), make([]float32, n)
	for _, s := range [][]float32{t.Params, t.M, t.V} {
		r.F32s(s)
	}
	return t, nil
}
