package kernels

import "math/rand/v2"

// Network is an actor-critic that a [PolicyLearner] trains and an inference
// service runs: the state-vector [Policy] (an MLP over observation vectors)
// and package vla's pixel policy (a transformer over camera frames and a
// language instruction) implement it.
//
// Every method that takes observations reads n rows of obs (row-major
// n×ObsDim). A network that also reads frames (FrameNetwork) takes those of
// the same rows from the last SetFrames call; all others ignore frames.
//
// The parameters are one flat float64 slice, Params, that the optimiser
// updates in place; a network that computes in another precision keeps its
// working copy in step through SyncParams, which the learner calls after
// every in-place change. Gradients are the same layout (Grads).
type Network interface {
	// Config describes the network's input width and action head; only
	// ObsDim, Head, ActionDims, Bins, Low and High are meaningful for a
	// network that is not a Policy.
	Config() PolicyConfig
	TokensPerStep() int
	EnvActionDims() int

	NumParams() int
	Params() []float64
	Grads() []float64
	ZeroGrads()
	SetParams(v []float64)
	// SyncParams makes the network compute with Params after they were
	// changed in place.
	SyncParams()
	// ParamName names the tensor of parameter i and its index inside it.
	ParamName(i int) string

	ActActions(obs []float64, n int, rng *rand.Rand, a Actions, logp, values []float64)
	Greedy(obs []float64, n int, a Actions)
	EnvActions(a Actions, n int, out []float64)
	Values(obs []float64, n int, out []float64)
	// Evaluate and Backward are the training passes (see [Policy.Evaluate]).
	Evaluate(obs []float64, n int, a Actions, logp, entropy, values []float64)
	Backward(dlogp, dentropy, dvalues []float64)

	// CloneNetwork returns a deep copy that shares nothing with the
	// network (an inference replica, an evaluation copy).
	CloneNetwork() Network
}

// FrameNetwork is a Network that reads each observation's frame too (the
// camera images and the instruction of a pixel environment).
type FrameNetwork interface {
	Network
	// SetFrames gives the frames of the rows of the next calls, frames[i]
	// for row i; they must stay valid and unchanged while used.
	SetFrames(frames [][]byte)
}

// TemperedNetwork is a Network whose training pass can evaluate rows at temperatures of
// their own (the VLA policy): the log-probabilities of actions that were sampled at
// another temperature than the network's ([Batch.Temperatures]).
type TemperedNetwork interface {
	Network
	// SetTemperatures gives the temperatures of the rows of the next Evaluate calls,
	// temps[i] for row i (0: the network's own); nil evaluates every row at its own.
	SetTemperatures(temps []float64)
}

var _ Network = (*Policy)(nil)

// SyncParams implements [Network]: a Policy computes with Params itself.
func (p *Policy) SyncParams() {}

// ParamName implements [Network].
func (p *Policy) ParamName(i int) string { return p.paramName(i) }

// CloneNetwork implements [Network].
func (p *Policy) CloneNetwork() Network { return p.Clone() }

// setTemperatures hands per-row temperatures (nil: none) to m when it takes them; the
// learner checked that a batch with temperatures has a network that does (checkBatch).
func setTemperatures(m Network, temps []float64) {
	if t, ok := m.(TemperedNetwork); ok {
		t.SetTemperatures(temps)
	}
}

// setFrames hands frames to m when it reads them.
func setFrames(m Network, frames [][]byte) {
	if f, ok := m.(FrameNetwork); ok {
		f.SetFrames(frames)
	}
}
