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
// float64, Steps as int64, from format 2 Residual as an int64 0 or 1 and
// from format 3 ContextNoise as a float64, SelfForcing and SelfForcingFrom
// as int64s; older records read as Residual false and the three as 0), then binrec.Tail: the TrainConfig, the step
// count, the random state, the parameters and the two Adam moments. Equal states give equal bytes, and a restored
// trainer draws the same minibatches and noise as the one that was saved.
const (
	trainerMagic  = "EDM-TRN\x00"
	trainerFormat = 3
)

// MarshalBinary encodes the trainer's complete state.
func (t *Trainer) MarshalBinary() ([]byte, error) {
	c, e, tc := t.Net.cfg, t.EDM, t.Train
	w := binrec.NewWriter(trainerMagic, 256+12*len(t.Net.params))
	w.U32(trainerFormat)
	for _, v := range append([]int{c.ImageSize, c.Cameras, c.History, c.ActionDim, c.CondDim, c.GroupSize, len(c.Channels)}, c.Channels...) {
		w.I64(v)
	}
	for _, v := range []float64{e.SigmaData, e.PMean, e.PStd, e.SigmaMin, e.SigmaMax, e.Rho} {
		w.F64(v)
	}
	w.I64(e.Steps)
	w.I64(b2i(e.Residual))
	w.F64(e.ContextNoise)
	w.I64(e.SelfForcing)
	w.I64(e.SelfForcingFrom)
	if err := w.Tail(binrec.Tail{LR: tc.LR, BatchSize: tc.BatchSize, MaxGradNorm: tc.MaxGradNorm, Seed: tc.Seed,
		Steps: t.Steps, Rand: t.src, Params: t.Net.params, M: t.M, V: t.V}); err != nil {
		return nil, fmt.Errorf("edm: encode trainer: %w", err)
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
	format := r.U32()
	if format < 1 || format > trainerFormat {
		return fmt.Errorf("edm: decode trainer: format %d, this build reads 1 to %d", format, trainerFormat)
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
	if format >= 2 {
		e.Residual = r.I64() != 0
	}
	if format >= 3 {
		e.ContextNoise = r.F64()
		e.SelfForcing = r.I64()
		e.SelfForcingFrom = r.I64()
	}
	tail, err := r.Tail()
	if err != nil {
		return fmt.Errorf("edm: decode trainer: %w", err)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("edm: decode trainer: invalid config: %w", err)
	}
	net := NewNet[float32](c, nil, kernelsBackend(t))
	if len(tail.Params) != len(net.params) {
		return fmt.Errorf("edm: decode trainer: %d parameters, the config has %d", len(tail.Params), len(net.params))
	}
	copy(net.params, tail.Params)
	tc := TrainConfig{LR: tail.LR, BatchSize: tail.BatchSize, MaxGradNorm: tail.MaxGradNorm, Seed: tail.Seed}
	*t = Trainer{Net: net, EDM: e, Train: tc, M: tail.M, V: tail.V, Steps: tail.Steps, src: tail.Rand, rng: rand.New(tail.Rand)}
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

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
