package edm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels"
)

// A trainer checkpoint is one little-endian record:
//
//	"EDM-TRN\x00" | format uint32 | body | CRC-32C (Castagnoli) of everything before it, uint32
//
// body: the Config (ImageSize, Cameras, History, ActionDim, CondDim,
// GroupSize, len(Channels), Channels… as int64), the EDM settings (six
// float64 and Steps as int64), the TrainConfig (LR float64, BatchSize
// int64, MaxGradNorm float64, Seed uint64), the step count (int64), the
// PCG random state (its MarshalBinary bytes behind a uint32 length), the
// parameter count n (int64), then n parameters, n first and n second Adam
// moments as float32 bits. Equal states give equal bytes, and a restored
// trainer draws the same minibatches and noise as the one that was saved.
const (
	trainerMagic  = "EDM-TRN\x00"
	trainerFormat = 1
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes the trainer's complete state.
func (t *Trainer) MarshalBinary() ([]byte, error) {
	rs, err := t.src.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("edm: encode trainer: random state: %w", err)
	}
	c, e, tc := t.Net.cfg, t.EDM, t.Train
	n := len(t.Net.params)
	w := make(writer, 0, 128+len(rs)+12*n)
	w = append(w, trainerMagic...)
	w.u32(trainerFormat)
	for _, v := range append([]int{c.ImageSize, c.Cameras, c.History, c.ActionDim, c.CondDim, c.GroupSize, len(c.Channels)}, c.Channels...) {
		w.i64(v)
	}
	for _, v := range []float64{e.SigmaData, e.PMean, e.PStd, e.SigmaMin, e.SigmaMax, e.Rho} {
		w.f64(v)
	}
	w.i64(e.Steps)
	w.f64(tc.LR)
	w.i64(tc.BatchSize)
	w.f64(tc.MaxGradNorm)
	w.u64(tc.Seed)
	w.i64(t.Steps)
	w.u32(uint32(len(rs)))
	w = append(w, rs...)
	w.i64(n)
	for _, s := range [][]float32{t.Net.params, t.M, t.V} {
		for _, v := range s {
			w.u32(math.Float32bits(v))
		}
	}
	w.u32(crc32.Checksum(w, crcTable))
	return w, nil
}

// UnmarshalBinary replaces the trainer by the one encoded in data. The
// model keeps the trainer's backend ([kernels.NewCPU] for a zero Trainer).
func (t *Trainer) UnmarshalBinary(data []byte) error {
	if len(data) < len(trainerMagic)+8 {
		return fmt.Errorf("edm: decode trainer: %d bytes is too short", len(data))
	}
	body := data[:len(data)-4]
	if got, want := crc32.Checksum(body, crcTable), binary.LittleEndian.Uint32(data[len(data)-4:]); got != want {
		return fmt.Errorf("edm: decode trainer: checksum %08x, want %08x: the record is corrupt or truncated", got, want)
	}
	if string(body[:len(trainerMagic)]) != trainerMagic {
		return fmt.Errorf("edm: decode trainer: magic %q, want %q", body[:len(trainerMagic)], trainerMagic)
	}
	r := &reader{b: body[len(trainerMagic):]}
	if v := r.u32(); v != trainerFormat {
		return fmt.Errorf("edm: decode trainer: format %d, this build reads %d", v, trainerFormat)
	}
	var c Config
	for _, p := range []*int{&c.ImageSize, &c.Cameras, &c.History, &c.ActionDim, &c.CondDim, &c.GroupSize} {
		*p = r.i64()
	}
	levels := r.i64()
	if r.err != nil || levels < 0 || levels > 16 {
		return fmt.Errorf("edm: decode trainer: corrupt config (%d levels)", levels)
	}
	c.Channels = make([]int, levels)
	for i := range c.Channels {
		c.Channels[i] = r.i64()
	}
	var e EDM
	for _, p := range []*float64{&e.SigmaData, &e.PMean, &e.PStd, &e.SigmaMin, &e.SigmaMax, &e.Rho} {
		*p = r.f64()
	}
	e.Steps = r.i64()
	var tc TrainConfig
	tc.LR, tc.BatchSize, tc.MaxGradNorm, tc.Seed = r.f64(), r.i64(), r.f64(), r.u64()
	steps := r.i64()
	rs := r.take(int(r.u32()))
	n := r.i64()
	if r.err != nil {
		return fmt.Errorf("edm: decode trainer: %w", r.err)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("edm: decode trainer: invalid config: %w", err)
	}
	src := new(rand.PCG)
	if err := src.UnmarshalBinary(rs); err != nil {
		return fmt.Errorf("edm: decode trainer: random state: %w", err)
	}
	be := kernelsBackend(t)
	net := NewNet[float32](c, nil, be)
	if n != len(net.params) || len(r.b) != 12*n {
		return fmt.Errorf("edm: decode trainer: %d parameters in %d bytes, the config has %d", n, len(r.b), len(net.params))
	}
	m, v := make([]float32, n), make([]float32, n)
	for _, s := range [][]float32{net.params, m, v} {
		for i := range s {
			s[i] = math.Float32frombits(r.u32())
		}
	}
	*t = Trainer{Net: net, EDM: e, Train: tc, M: m, V: v, Steps: steps, src: src, rng: rand.New(src)}
	return nil
}

// writer appends little-endian fields.
type writer []byte

func (w *writer) u32(v uint32)  { *w = binary.LittleEndian.AppendUint32(*w, v) }
func (w *writer) u64(v uint64)  { *w = binary.LittleEndian.AppendUint64(*w, v) }
func (w *writer) i64(v int)     { w.u64(uint64(int64(v))) }
func (w *writer) f64(v float64) { w.u64(math.Float64bits(v)) }

// reader consumes little-endian fields; reading past the end sets err and
// yields zeros.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errors.New("record ends early")
		return make([]byte, max(n, 0))
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) u32() uint32  { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *reader) u64() uint64  { return binary.LittleEndian.Uint64(r.take(8)) }
func (r *reader) i64() int     { return int(int64(r.u64())) }
func (r *reader) f64() float64 { return math.Float64frombits(r.u64()) }

// kernelsBackend returns the backend of t's model, nil (NewNet's default)
// for a zero Trainer.
func kernelsBackend(t *Trainer) kernels.Backend {
	if t.Net == nil {
		return nil
	}
	return t.Net.be
}
