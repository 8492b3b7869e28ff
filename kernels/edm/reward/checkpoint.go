package reward

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/kernels/internal/binrec"
)

// A trainer checkpoint is one little-endian record (package binrec):
//
//	"REW-TRN\x00" | format uint32 | body | CRC-32C (Castagnoli) of everything before it, uint32
//
// body: the Config (ImageSize, Patch, Cameras, Dim, Hidden as int64), the
// TrainConfig (LR, Focal.Gamma, Focal.Alpha, MaxGradNorm as float64,
// BatchSize as int64, Seed as uint64), the step count (int64), the PCG
// random state (its MarshalBinary bytes behind a uint32 length), Adam's
// step count T (int64) and Eps (float64), the parameter count n (int64),
// then n parameters and n first and n second Adam moments as float64 bits
// (the model trains in float64, so binrec.Tail's float32 arrays would not
// restore it exactly). Equal states give equal bytes, and a restored
// trainer draws the same minibatches as the one that was saved.
const (
	trainerMagic  = "REW-TRN\x00"
	trainerFormat = 1
)

// MarshalBinary encodes the trainer's complete state.
func (t *Trainer) MarshalBinary() ([]byte, error) {
	c, tc := t.Model.cfg, t.Train
	rs, err := t.src.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("reward: encode trainer: random state: %w", err)
	}
	n := len(t.Model.params)
	w := binrec.NewWriter(trainerMagic, 256+len(rs)+24*n)
	w.U32(trainerFormat)
	for _, v := range []int{c.ImageSize, c.Patch, c.Cameras, c.Dim, c.Hidden} {
		w.I64(v)
	}
	for _, v := range []float64{tc.LR, tc.Focal.Gamma, tc.Focal.Alpha, tc.MaxGradNorm} {
		w.F64(v)
	}
	w.I64(tc.BatchSize)
	w.U64(tc.Seed)
	w.I64(t.Steps)
	w.U32(uint32(len(rs)))
	w = append(w, rs...)
	w.I64(t.Adam.T)
	w.F64(t.Adam.Eps)
	w.I64(n)
	for _, s := range [][]float64{t.Model.params, t.Adam.M, t.Adam.V} {
		for _, v := range s {
			w.F64(v)
		}
	}
	return w.Seal(), nil
}

// UnmarshalBinary replaces the trainer by the one encoded in data.
func (t *Trainer) UnmarshalBinary(data []byte) error {
	r, err := binrec.Open(data, trainerMagic, "reward: decode trainer")
	if err != nil {
		return err
	}
	if v := r.U32(); v != trainerFormat {
		return fmt.Errorf("reward: decode trainer: format %d, this build reads %d", v, trainerFormat)
	}
	var c Config
	for _, p := range []*int{&c.ImageSize, &c.Patch, &c.Cameras, &c.Dim, &c.Hidden} {
		*p = r.I64()
	}
	var tc TrainConfig
	for _, p := range []*float64{&tc.LR, &tc.Focal.Gamma, &tc.Focal.Alpha, &tc.MaxGradNorm} {
		*p = r.F64()
	}
	tc.BatchSize = r.I64()
	tc.Seed = r.U64()
	steps := r.I64()
	rs := r.Take(int(r.U32()))
	adamT, eps := r.I64(), r.F64()
	n := r.I64()
	if r.Err != nil {
		return fmt.Errorf("reward: decode trainer: %w", r.Err)
	}
	if err := errors.Join(c.Validate(), tc.Validate()); err != nil {
		return fmt.Errorf("reward: decode trainer: invalid settings: %w", err)
	}
	m := New(c, rand.New(rand.NewPCG(0, 0)))
	if n != len(m.params) || len(r.B) != 24*n {
		return fmt.Errorf("reward: decode trainer: %d parameters in %d bytes, the config has %d", n, len(r.B), len(m.params))
	}
	src := new(rand.PCG)
	if err := src.UnmarshalBinary(rs); err != nil {
		return fmt.Errorf("reward: decode trainer: random state: %w", err)
	}
	opt := kernels.NewAdam(n, tc.LR)
	opt.Eps, opt.T = eps, adamT
	for _, s := range [][]float64{m.params, opt.M, opt.V} {
		for i := range s {
			s[i] = r.F64()
		}
	}
	*t = Trainer{Model: m, Train: tc, Adam: opt, Steps: steps, src: src, rng: rand.New(src)}
	return nil
}
