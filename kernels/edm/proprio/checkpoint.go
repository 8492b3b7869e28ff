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
// lengths given by the config), then binrec.Tail: the TrainConfig, the
// step count, the random state, the parameters and the two Adam moments. Equal states give equal bytes, and a restored
// trainer draws the same minibatches as the one that was saved.
const (
	trainerMagic  = "PRP-TRN\x00"
	trainerFormat = 1
)

// MarshalBinary encodes the trainer's complete state.
func (t *Trainer) MarshalBinary() ([]byte, error) {
	c, nm, tc := t.Model.cfg, t.Model.norm, t.Train
	w := binrec.NewWriter(trainerMagic, 256+16*c.In()+12*len(t.Model.params))
	w.U32(trainerFormat)
	for _, v := range append([]int{c.History, c.ProprioDim, c.ActionDim, len(c.Hidden)}, c.Hidden...) {
		w.I64(v)
	}
	for _, s := range [][]float64{nm.InMean, nm.InStd, nm.OutMean, nm.OutStd} {
		for _, v := range s {
			w.F64(v)
		}
	}
	if err := w.Tail(binrec.Tail{LR: tc.LR, BatchSize: tc.BatchSize, MaxGradNorm: tc.MaxGradNorm, Seed: tc.Seed,
		Steps: t.Steps, Rand: t.src, Params: t.Model.params, M: t.M, V: t.V}); err != nil {
		return nil, fmt.Errorf("proprio: encode trainer: %w", err)
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
	nm := Norm{InMean: make([]float64, c.In()), InStd: make([]float64, c.In()),
		OutMean: make([]float64, c.ProprioDim), OutStd: make([]float64, c.ProprioDim)}
	for _, s := range [][]float64{nm.InMean, nm.InStd, nm.OutMean, nm.OutStd} {
		for i := range s {
			s[i] = r.F64()
		}
	}
	tail, err := r.Tail()
	if err != nil {
		return fmt.Errorf("proprio: decode trainer: %w", err)
	}
	m := NewModel[float32](c, nm, nil)
	if len(tail.Params) != len(m.params) {
		return fmt.Errorf("proprio: decode trainer: %d parameters, the config has %d", len(tail.Params), len(m.params))
	}
	copy(m.params, tail.Params)
	tc := TrainConfig{LR: tail.LR, BatchSize: tail.BatchSize, MaxGradNorm: tail.MaxGradNorm, Seed: tail.Seed}
	*t = Trainer{Model: m, Train: tc, M: tail.M, V: tail.V, Steps: tail.Steps, src: tail.Rand, rng: rand.New(tail.Rand), be: kernels.NewCPU(1)}
	return nil
}
