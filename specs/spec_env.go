package specs

import (
	"github.com/accerl/accerl/jsondur"
	"github.com/hashicorp/hcl/v2"
)

// Names in the env block and its latency block.
const (
	blockEnv            = "env"
	attrMaxEpisodeSteps = "max_episode_steps"

	// Tabletop suites only.
	attrSuite     = "suite"
	attrTask      = "task"
	attrTasks     = "tasks"
	attrImageSize = "image_size"
	attrCameras   = "cameras"
	attrPixels    = "pixels"

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
	// EnvPendulum, EnvMountainCarContinuous, EnvTabletop; for env "remote", the world
	// its servers simulate (spec_remote.go).
	Kind string `json:"kind"`
	// MaxEpisodeSteps truncates an episode after this many steps. In a
	// resolved Experiment it is always >= 1: when no block of the arm sets
	// it, it is DefaultMaxEpisodeSteps(Kind).
	MaxEpisodeSteps int `json:"max_episode_steps"`
	// Latency adds simulated per-step delay, standing in for a slow simulator.
	Latency Latency `json:"latency"`

	// The tabletop manipulation suites (Kind EnvTabletop) only; empty for the other kinds,
	// which keeps their resolved JSON, and so their spec hashes, as they were.
	//
	// Suite is "spatial", "object", "goal" or "long" (LIBERO's four suites). Tasks are the
	// task indices (0–9) the rollout workers sample from, each episode's task drawn with
	// weight (failures in its last 100 episodes) + 1; a resolved tabletop arm always lists
	// them (task = 3 is [3], tasks = "all" or no task attribute is all ten). ImageSize is the
	// cameras' resolution (a power of two, 16–256, default 64) and Cameras the cameras a pixel
	// policy sees (default both, "agentview" and "wrist").
	Suite     string   `json:"suite,omitempty"`
	Tasks     []int    `json:"tasks,omitempty"`
	ImageSize int      `json:"image_size,omitempty"`
	Cameras   []string `json:"cameras,omitempty"`
	// Pixels renders the cameras at every step and carries the frames (RGB bytes, each step's
	// once) through inference, the replay buffer and checkpoints beside the state
	// observation, for pixel policies and world models. Rendering costs simulator time
	// (about 20× a physics step at 64×64). Omitted from the JSON while false.
	Pixels bool `json:"pixels,omitempty"`

	// Remote, when set, steps the environments on dm_env_rpc servers (env "remote") instead
	// of in process; nil, and absent from the JSON, for a local env.
	Remote *Remote `json:"remote,omitempty"`
}

// Latency is the simulated duration of one simulator step.
type Latency struct {
	// Kind is LatencyNone (no delay), LatencyConstant (Median every step) or
	// LatencyLognormal (exp(N(ln Median, Sigma²)) per step).
	Kind string `json:"kind"`
	// Median is the constant delay or the lognormal median; JSON "7ms".
	Median jsondur.Duration `json:"median"`
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
		{Name: attrSuite},
		{Name: attrTask},
		{Name: attrTasks},
		{Name: attrImageSize},
		{Name: attrCameras},
		{Name: attrPixels},
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
	if kind == EnvRemote {
		d.decodeRemote(block, e)
		return
	}
	e.Remote = nil // a local env block replaces an inherited remote one
	if _, known := DefaultMaxEpisodeSteps(kind); known {
		e.Kind = kind
		d.src.record(pathEnvKind, kindRange)
	} else {
		d.errorf(kindRange, nil, "Unknown environment kind",
			"There is no environment kind %q. Use one of: %s.", kind, quoteList(envKinds()))
	}
	c := d.content(block.Body, envSchema)
	d.setInt(c.Attributes, blockEnv, attrMaxEpisodeSteps, &e.MaxEpisodeSteps, atLeast(1))
	if kind == EnvTabletop {
		d.decodeTabletop(c.Attributes, e)
	} else {
		for _, name := range []string{attrSuite, attrTask, attrTasks, attrImageSize, attrCameras, attrPixels} {
			if attr, ok := c.Attributes[name]; ok {
				d.errorf(attr.NameRange, nil, "Unsupported argument",
					"env.%s applies to the tabletop suites only (env \"tabletop\"), not to %q. Remove it.", name, kind)
			}
		}
	}
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
