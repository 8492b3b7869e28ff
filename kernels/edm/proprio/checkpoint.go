package proprio

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/kernels/internal/binrec"
)

// A trainer checkpoint is one little-endian record (package binrec):
//
//	"PRP-TRN\x00" | format uint32 | body | CRC-32C (Castagnoli) of everything before it, uint32
//
// body: the Config (History, ProprioDim, ActionDim, len(Hidden), Hidden…
// as int64), the Norm (InMean, InStd, OutMean, OutStd as float64, their
// lengths given by the config), the TrainConfig (LR float64, BatchSize
// int64, MaxGradNorm float64, Seed uint64), the step count (int64), the
// PCG random state (its MarshalBinary bytes behind a uint32 length), the
// parameter count n (int64), then n parameters, n first and n second Adam
// moments as float32 bits. Equal states give equal bytes, and a restored
// trainer draws the same minibatches as the one that was saved.
const (
	trainerMagic  = "PRP-TRN\x00"
	trainerFormat = 1
)

// MarshalBinary encodes the trainer's complete state.
func (t *Trainer) MarshalBinary() ([]byte, error) {
	rs, err := t.src.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("proprio: encode trainer: random state: %w", err)
	}
	c, nm, tc := t.Model.cfg, t.Model.norm, t.Train
	n := len(t.Model.params)
	w := binrec.NewWriter(trainerMagic, 128+len(rs)+16*c.In()+12*n)
	w.U32(trainerFormat)
	for _, v := range append([]int{c.History, c.ProprioDim, c.ActionDim, len(c.Hidden)}, c.Hidden...) {
		w.I64(v)
	}
	for _, s := range [][]float64{nm.InMean, nm.InStd, nm.OutMean, nm.OutStd} {
		for _, v := range s {
			w.F64(v)
		}
	}
	w.F64(tc.LR)
	w.I64(tc.BatchSize)
	w.F64(tc.MaxGradNorm)
	w.U64(tc.Seed)
	w.I64(t.Steps)
	w.U32(uint32(len(rs)))
	w = append(w, rs...)
	w.I64(n)
	for _, s := range [][]float32{t.Model.params, t.M, t.V} {
		w.F32s(s)
	}
	return w.Seal(), nil
}

// UnmarshalBinary replaces the trainer by the one encoded in data.
func (t *Trainer) UnmarshalBinary(data []byte) error {
	r, err := binrec.Open(data, trainerMagic, "proprio: decode trainer")
	if err != nil {
		return err
	}
	if v := r.U32(); v != trainerFormat {
		return fmt.Errorf("proprio: decode trainer: format %d, this build reads %d", v, trainerFormat)
	}
	var c Config
	c.History, c.ProprioDim, c.ActionDim = r.I64(), r.I64(), r.I64()
	layers := r.I64()
	if r.Err != nil || layers < 0 || layers > 16 {
		return fmt.Errorf("proprio: decode trainer: corrupt config (%d hidden layers)", layers)
	}
	c.Hidden = make([]int, layers)
	for i := range c.Hidden {
		c.Hidden[i] = r.I64()
	}
	if err := c.Validate(); err != nil || r.Err != nil {
		return fmt.Errorf("proprio: decode trainer: invalid config %+v: %w", c, errors.Join(err, r.Err))
	}
	var nm Norm
	for _, p := range []struct {
		s *[]float64
		n int
	}{{&nm.InMean, c.In()}, {&nm.InStd, c.In()}, {&nm.OutMean, c.ProprioDim}, {&nm.OutStd, c.ProprioDim}} {
		*p.s = make([]float64, p.n)
		for i := range *p.s {
			(*p.s)[i] = r.F64()
		}
	}
	var tc TrainConfig
	tc.LR, tc.BatchSize, tc.MaxGradNorm, tc.Seed = r.F64(), r.I64(), r.F64(), r.U64()
	steps := r.I64()
	rs := r.Take(int(r.U32()))
	n := r.I64()
	if r.Err != nil {
		return fmt.Errorf("proprio: decode trainer: %w", r.Err)
	}
	src := new(rand.PCG)
	if err := src.UnmarshalBinary(rs); err != nil {
		return fmt.Errorf("proprio: decode trainer: random state: %w", err)
	}
	m := NewModel[float32](c, nm, nil)
	if n != len(m.params) || len(r.B) != 12*n {
		return fmt.Errorf("proprio: decode trainer: %d parameters in %d bytes, the config has %d", n, len(r.B), len(m.params))
	}
	mo, v := make([]float32, n), make([]float32, n)
	for _, s := range [][]float32{m.params, mo, v} {
		r.F32s(s)
	}
	*t = Trainer{Model: m, Train: tc, M: mo, V: v, Steps: steps, src: src, rng: rand.New(src), be: kernels.NewCPU(1)}
	return nil
}
