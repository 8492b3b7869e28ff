package edm

import (
	"fmt"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/kernels/internal/binrec"
)

// A trainer checkpoint is one little-endian record (package binrec):
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

// MarshalBinary encodes the trainer's complete state.
func (t *Trainer) MarshalBinary() ([]byte, error) {
	rs, err := t.src.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("edm: encode trainer: random state: %w", err)
	}
	c, e, tc := t.Net.cfg, t.EDM, t.Train
	n := len(t.Net.params)
	w := binrec.NewWriter(trainerMagic, 128+len(rs)+12*n)
	w.U32(trainerFormat)
	for _, v := range append([]int{c.ImageSize, c.Cameras, c.History, c.ActionDim, c.CondDim, c.GroupSize, len(c.Channels)}, c.Channels...) {
		w.I64(v)
	}
	for _, v := range []float64{e.SigmaData, e.PMean, e.PStd, e.SigmaMin, e.SigmaMax, e.Rho} {
		w.F64(v)
	}
	w.I64(e.Steps)
	w.F64(tc.LR)
	w.I64(tc.BatchSize)
	w.F64(tc.MaxGradNorm)
	w.U64(tc.Seed)
	w.I64(t.Steps)
	w.U32(uint32(len(rs)))
	w = append(w, rs...)
	w.I64(n)
	for _, s := range [][]float32{t.Net.params, t.M, t.V} {
		w.F32s(s)
	}
	return w.Seal(), nil
}

// UnmarshalBinary replaces the trainer by the one encoded in data. The
// model keeps the trainer's backend ([kernels.NewCPU] for a zero Trainer).
func (t *Trainer) UnmarshalBinary(data []byte) error {
	r, err := binrec.Open(data, trainerMagic, "edm: decode trainer")
	if err != nil {
		return err
	}
	if v := r.U32(); v != trainerFormat {
		return fmt.Errorf("edm: decode trainer: format %d, this build reads %d", v, trainerFormat)
	}
	var c Config
	for _, p := range []*int{&c.ImageSize, &c.Cameras, &c.History, &c.ActionDim, &c.CondDim, &c.GroupSize} {
		*p = r.I64()
	}
	levels := r.I64()
	if r.Err != nil || levels < 0 || levels > 16 {
		return fmt.Errorf("edm: decode trainer: corrupt config (%d levels)", levels)
	}
	c.Channels = make([]int, levels)
	for i := range c.Channels {
		c.Channels[i] = r.I64()
	}
	var e EDM
	for _, p := range []*float64{&e.SigmaData, &e.PMean, &e.PStd, &e.SigmaMin, &e.SigmaMax, &e.Rho} {
		*p = r.F64()
	}
	e.Steps = r.I64()
	var tc TrainConfig
	tc.LR, tc.BatchSize, tc.MaxGradNorm, tc.Seed = r.F64(), r.I64(), r.F64(), r.U64()
	steps := r.I64()
	rs := r.Take(int(r.U32()))
	n := r.I64()
	if r.Err != nil {
		return fmt.Errorf("edm: decode trainer: %w", r.Err)
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
	if n != len(net.params) || len(r.B) != 12*n {
		return fmt.Errorf("edm: decode trainer: %d parameters in %d bytes, the config has %d", n, len(r.B), len(net.params))
	}
	m, v := make([]float32, n), make([]float32, n)
	for _, s := range [][]float32{net.params, m, v} {
		r.F32s(s)
	}
	*t = Trainer{Net: net, EDM: e, Train: tc, M: m, V: v, Steps: steps, src: src, rng: rand.New(src)}
	return nil
}

// kernelsBackend returns the backend of t's model, nil (NewNet's default)
// for a zero Trainer.
func kernelsBackend(t *Trainer) kernels.Backend {
	if t.Net == nil {
		return nil
	}
	return t.Net.be
}
