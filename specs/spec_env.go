package specs

import (
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Names in the env block and its latency block.
const (
	blockEnv            = "env"
	attrMaxEpisodeSteps = "max_episode_steps"

	blockLatency     = "latency"
	attrKind         = "kind"
	attrMedian       = "median"
	attrSigma        = "sigma"
	attrSlowFraction = "slow_fraction"
	attrSlowFactor   = "slow_factor"
)

// pathEnvKind is the sources path recorded for the env block's label.
const pathEnvKind = blockEnv + "." + attrKind

// Env selects the environment each rollout worker simulates.
type Env struct {
	// Kind is the env block's label, one of EnvCartPole, EnvAcrobot,
	// EnvPendulum, EnvMountainCarContinuous.
	Kind string `json:"kind"`
	// MaxEpisodeSteps truncates an episode after this many steps. In a
	// resolved Experiment it is always >= 1: when no block of the arm sets
	// it, it is DefaultMaxEpisodeSteps(Kind).
	MaxEpisodeSteps int `json:"max_episode_steps"`
	// Latency adds simulated per-step delay, standing in for a slow simulator.
	Latency Latency `json:"latency"`
}

// Latency is the simulated duration of one simulator step.
type Latency struct {
	// Kind is LatencyNone (no delay), LatencyConstant (Median every step) or
	// LatencyLognormal (exp(N(ln Median, Sigma²)) per step).
	Kind string `json:"kind"`
	// Median is the constant delay or the lognormal median; JSON nanoseconds.
	Median time.Duration `json:"median"`
	// Sigma is the lognormal shape parameter; larger is heavier-tailed. >= 0.
	Sigma float64 `json:"sigma"`
	// SlowFraction is the fraction of rollout workers that are slow, in [0,1].
	SlowFraction float64 `json:"slow_fraction"`
	// SlowFactor multiplies the delay of slow workers. >= 1.
	SlowFactor float64 `json:"slow_factor"`
}

var envSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrMaxEpisodeSteps},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: blockLatency},
	},
}

var latencySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrKind},
		{Name: attrMedian},
		{Name: attrSigma},
		{Name: attrSlowFraction},
		{Name: attrSlowFactor},
	},
}

// decodeEnv applies an env block (label: kind) onto e.
func (d *decoder) decodeEnv(block *hcl.Block, e *Env) {
	kind, kindRange := block.Labels[0], block.LabelRanges[0]
	if _, known := DefaultMaxEpisodeSteps(kind); known {
		e.Kind = kind
		d.src.record(pathEnvKind, kindRange)
	} else {
		d.errorf(kindRange, nil, "Unknown environment kind",
			"There is no environment kind %q. Use one of: %s.", kind, quoteList(envKinds()))
	}
	c := d.content(block.Body, envSchema)
	d.setInt(c.Attributes, blockEnv, attrMaxEpisodeSteps, &e.MaxEpisodeSteps, atLeast(1))
	if lb := d.single(c.Blocks, blockLatency); lb != nil {
		d.decodeLatency(lb, &e.Latency)
	}
}

// decodeLatency applies a latency block onto l.
func (d *decoder) decodeLatency(block *hcl.Block, l *Latency) {
	const prefix = blockEnv + "." + blockLatency
	c := d.content(block.Body, latencySchema)
	d.setEnum(c.Attributes, prefix, attrKind, &l.Kind, latencyKinds())
	d.setDuration(c.Attributes, prefix, attrMedian, &l.Median, false)
	d.setFloat(c.Attributes, prefix, attrSigma, &l.Sigma, atLeast(0))
	d.setFloat(c.Attributes, prefix, attrSlowFraction, &l.SlowFraction, between(0, 1))
	d.setFloat(c.Attributes, prefix, attrSlowFactor, &l.SlowFactor, atLeast(1))
}
