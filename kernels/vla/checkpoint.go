package vla

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// Checkpoint encodings. A model and an optimizer state are each one
// self-contained little-endian record:
//
//	magic (8 bytes) | version uint32 | element size uint32 (4 or 8) | body | CRC-32C of everything before it (uint32)
//
// The model's body is its Config (the int fields in declaration order as
// int64, then SlimHead as one byte) followed by ParamCount parameters; the
// optimizer's is LR, Beta1, Beta2, Eps as float64, the step T as int64, the
// moment length n as int64, then M and V (n values each). Parameters and
// moments are stored as their IEEE-754 bits, so the encoding of a state is
// a deterministic function of it (equal states, equal bytes, equal
// checksums) and a restored state continues bit for bit.
const (
	netMagic         = "VLA-NET\x00"
	adamMagic        = "VLA-ADAM"
	checkpointFormat = 1 // version of both records
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes the configuration and all parameters (the frozen
// LM-head rows included; not the gradients).
func (m *Net[F]) MarshalBinary() ([]byte, error) {
	c := m.cfg
	ints := configInts(&c)
	b := make([]byte, 0, 16+8*len(ints)+1+elemSize[F]()*len(m.params)+4)
	b = appendHeader(b, netMagic, elemSize[F]())
	for _, v := range ints {
		b = binary.LittleEndian.AppendUint64(b, uint64(int64(*v)))
	}
	slim := byte(0)
	if c.SlimHead {
		slim = 1
	}
	b = append(b, slim)
	b = appendFloats(b, m.params)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// UnmarshalBinary replaces the model by the one MarshalBinary encoded in
// data: configuration and parameters; gradients are zero and the scratch is
// dropped. A float32 model keeps its backend (or gets [kernels.NewCPU] if
// it has none). The record must have been written by a Net of the same
// element type.
func (m *Net[F]) UnmarshalBinary(data []byte) error {
	r, err := openRecord(data, netMagic, elemSize[F]())
	if err != nil {
		return fmt.Errorf("vla: decode model: %w", err)
	}
	var c Config
	for _, v := range configInts(&c) {
		*v = int(int64(r.u64()))
	}
	switch r.byte() {
	case 0:
	case 1:
		c.SlimHead = true
	default:
		return errors.New("vla: decode model: corrupt slim-head flag")
	}
	if r.err != nil {
		return fmt.Errorf("vla: decode model: %w", r.err)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("vla: decode model: invalid config: %w", err)
	}
	n := c.ParamCount()
	if r.left() != n*elemSize[F]() {
		return fmt.Errorf("vla: decode model: %d bytes of parameters, want %d for %d parameters", r.left(), n*elemSize[F](), n)
	}
	fresh := newNet[F](c, m.be)
	readFloats(r, fresh.params)
	*m = *fresh
	return nil
}

// MarshalBinary encodes the optimizer: hyper-parameters, step and both
// moments.
func (a *Adam[F]) MarshalBinary() ([]byte, error) {
	if len(a.M) != len(a.V) {
		return nil, fmt.Errorf("vla: encode Adam: moments of %d and %d values", len(a.M), len(a.V))
	}
	b := make([]byte, 0, 16+6*8+2*elemSize[F]()*len(a.M)+4)
	b = appendHeader(b, adamMagic, elemSize[F]())
	for _, v := range []float64{a.LR, a.Beta1, a.Beta2, a.Eps} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(int64(a.T)))
	b = binary.LittleEndian.AppendUint64(b, uint64(int64(len(a.M))))
	b = appendFloats(b, a.M)
	b = appendFloats(b, a.V)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// UnmarshalBinary replaces the optimizer by the one MarshalBinary encoded
// in data (same element type).
func (a *Adam[F]) UnmarshalBinary(data []byte) error {
	r, err := openRecord(data, adamMagic, elemSize[F]())
	if err != nil {
		return fmt.Errorf("vla: decode Adam: %w", err)
	}
	var hp [4]float64
	for i := range hp {
		hp[i] = math.Float64frombits(r.u64())
	}
	t, n := int64(r.u64()), int64(r.u64())
	if r.err != nil {
		return fmt.Errorf("vla: decode Adam: %w", r.err)
	}
	if t < 0 || n < 0 || int64(r.left()) != 2*n*int64(elemSize[F]()) {
		return fmt.Errorf("vla: decode Adam: step %d, %d moments in %d bytes", t, n, r.left())
	}
	out := Adam[F]{LR: hp[0], Beta1: hp[1], Beta2: hp[2], Eps: hp[3], T: int(t), M: make([]F, n), V: make([]F, n)}
	readFloats(r, out.M)
	readFloats(r, out.V)
	*a = out
	return nil
}

// configInts lists the int fields of c in declaration order, the order of
// the encoding (append new fields at the end and bump checkpointFormat).
func configInts(c *Config) []*int {
	return []*int{&c.ImageSize, &c.Patch, &c.Cameras, &c.Dim, &c.Layers, &c.Heads, &c.MLPRatio,
		&c.MaxInstr, &c.WordVocab, &c.VocabSize, &c.ActionDims, &c.Bins, &c.ProprioDim}
}

func elemSize[F Float]() int {
	if isF32[F]() {
		return 4
	}
	return 8
}

func appendHeader(b []byte, magic string, elem int) []byte {
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint32(b, checkpointFormat)
	return binary.LittleEndian.AppendUint32(b, uint32(elem))
}

func appendFloats[F Float](b []byte, x []F) []byte {
	if isF32[F]() {
		for _, v := range x {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		}
		return b
	}
	for _, v := range x {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(v)))
	}
	return b
}

// record reads a checked record's body; a read past the end sets err.
type record struct {
	b   []byte
	err error
}

// openRecord checks the checksum, magic, version and element size of data
// and returns a reader of its body.
func openRecord(data []byte, magic string, elem int) (*record, error) {
	if len(data) < len(magic)+12 {
		return nil, fmt.Errorf("%d bytes is too short for a checkpoint record", len(data))
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return nil, fmt.Errorf("checksum %08x, want %08x: the record is corrupt or truncated", got, sum)
	}
	if string(body[:len(magic)]) != magic {
		return nil, fmt.Errorf("magic %q, want %q", body[:len(magic)], magic)
	}
	r := &record{b: body[len(magic):]}
	if v := r.u32(); v != checkpointFormat {
		return nil, fmt.Errorf("format version %d, this build reads %d", v, checkpointFormat)
	}
	if e := int(r.u32()); e != elem {
		return nil, fmt.Errorf("written with %d-byte elements, this is a %d-byte model", e, elem)
	}
	return r, nil
}

func (r *record) take(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.err = errors.New("record ends early")
		return make([]byte, n)
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *record) u32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *record) u64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }
func (r *record) byte() byte  { return r.take(1)[0] }
func (r *record) left() int   { return len(r.b) }

// readFloats fills x from the record (the caller has checked the length).
func readFloats[F Float](r *record, x []F) {
	if isF32[F]() {
		for i := range x {
			x[i] = F(math.Float32frombits(r.u32()))
		}
		return
	}
	for i := range x {
		x[i] = F(math.Float64frombits(r.u64()))
	}
}
