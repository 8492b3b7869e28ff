package engine

import (
	"math/rand/v2"

	"github.com/accerl/accerl/kernels"
)

// Policy is the network the inference service runs; *kernels.Policy
// satisfies it. ActActions fills a (the head's slice: Tokens or
// Continuous), logp (n×ActionShape.LogProbs) and values (n) for n
// observations laid out row-major in obs, sampling with rng; EnvActions
// turns n such actions into environment actions (n×ActionShape.Env). Neither
// need be safe for concurrent use: only the service goroutine calls them.
type Policy interface {
	ActActions(obs []float64, n int, rng *rand.Rand, a kernels.Actions, logp, values []float64)
	EnvActions(a kernels.Actions, n int, out []float64)
	SetParams(p []float64)
}

// RowSampler is a Policy that can act on a batch whose row i samples with rngs[i] alone and
// comes out bit for bit as it would in a batch of any other size (vla.Policy: a transformer
// whose one-row calls would otherwise cost nearly what a batch costs); its Greedy, if it is a
// kernels.Network, must be as independent of the batch. With it, a PerRequestRNG service
// evaluates each batch in one call instead of one row at a time, and Evaluate plays several
// episodes side by side.
type RowSampler interface {
	Policy
	ActActionsRows(obs []float64, n int, rngs []*rand.Rand, a kernels.Actions, logp, values []float64)
}

// FrameReader is a Policy that also reads each observation's frame (a pixel policy over an
// environment with frames, FrameEnv). Before every ActActions call the service passes the
// frames of the batch's observations, frames[i] for row i; they stay valid during that call
// only.
type FrameReader interface {
	Policy
	SetFrames(frames [][]byte)
}

// ActionShape says how many values one step's action occupies in each form
// a Policy produces.
type ActionShape struct {
	// Tokens is the number of ints per step in kernels.Actions.Tokens:
	// 1 for a categorical head, ActionDims for a tokens head, 0 for a
	// gaussian head.
	Tokens int `json:"tokens"`
	// Reals is the number of floats per step in kernels.Actions.Continuous:
	// ActionDims for a gaussian head, 0 otherwise.
	Reals int `json:"reals"`
	// LogProbs is the number of log-probabilities per step
	// (kernels.Policy.TokensPerStep).
	LogProbs int `json:"log_probs"`
	// Env is the length of the environment action
	// (kernels.Policy.EnvActionDims).
	Env int `json:"env"`
}

// categoricalShape is the shape of one discrete action index.
var categoricalShape = ActionShape{Tokens: 1, LogProbs: 1, Env: 1}

// ShapeOf returns the action shape of p's head.
func ShapeOf(p kernels.Network) ActionShape {
	s := ActionShape{LogProbs: p.TokensPerStep(), Env: p.EnvActionDims()}
	if p.Config().Head == kernels.HeadGaussian {
		s.Reals = p.EnvActionDims()
	} else {
		s.Tokens = p.TokensPerStep()
	}
	return s
}
