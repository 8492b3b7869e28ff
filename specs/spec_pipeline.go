package specs

import (
	"github.com/accerl/accerl/jsondur"
	"github.com/hashicorp/hcl/v2"
)

// Names in the pipeline block and its inference block.
const (
	blockPipeline      = "pipeline"
	attrMode           = "mode"
	attrWorkers        = "workers"
	attrEnvsPerWorker  = "envs_per_worker"
	attrChunkSteps     = "chunk_steps"
	attrReplayCapacity = "replay_capacity"
	attrMaxStaleness   = "max_staleness"
	attrLag            = "lag"

	blockInference = "inference"
	attrMaxBatch   = "max_batch"
	attrMaxWait    = "max_wait"
)

// Pipeline shapes the data plane: rollout workers, replay and inference.
type Pipeline struct {
	// Mode is ModeAsync (collection and training decoupled by replay) or
	// ModeSync (collect from every worker, then update, lock-step).
	Mode string `json:"mode"`
	// Workers is the number of rollout workers. >= 1.
	Workers int `json:"workers"`
	// EnvsPerWorker is the number of environments each worker steps. >= 1.
	EnvsPerWorker int `json:"envs_per_worker"`
	// ChunkSteps is the number of steps per trajectory chunk pushed to
	// replay. >= 1 and <= ReplayCapacity.
	ChunkSteps int `json:"chunk_steps"`
	// ReplayCapacity is the replay buffer size in steps; >= the algorithm's
	// BatchSteps.
	ReplayCapacity int `json:"replay_capacity"`
	// MaxStaleness drops samples more than this many policy versions old;
	// 0 keeps all. >= 0.
	MaxStaleness int `json:"max_staleness"`
	// Lag is an artificial policy lag in versions, for ablations. >= 0.
	Lag int `json:"lag"`
	// Inference configures the batched inference service.
	Inference Inference `json:"inference"`
}

// Inference configures dynamic batching in the inference service: a batch
// runs when MaxBatch requests are queued or when the oldest has waited
// MaxWait, whichever comes first.
type Inference struct {
	// MaxBatch is the largest batch. >= 1.
	MaxBatch int `json:"max_batch"`
	// MaxWait bounds the oldest request's wait; JSON "5ms". > 0.
	MaxWait jsondur.Duration `json:"max_wait"`
}

var pipelineSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrMode},
		{Name: attrWorkers},
		{Name: attrEnvsPerWorker},
		{Name: attrChunkSteps},
		{Name: attrReplayCapacity},
		{Name: attrMaxStaleness},
		{Name: attrLag},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: blockInference},
	},
}

var inferenceSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrMaxBatch},
		{Name: attrMaxWait},
	},
}

// decodePipeline applies a pipeline block onto p.
func (d *decoder) decodePipeline(block *hcl.Block, p *Pipeline) {
	c := d.content(block.Body, pipelineSchema)
	a := c.Attributes
	const prefix = blockPipeline
	d.setEnum(a, prefix, attrMode, &p.Mode, pipelineModes())
	d.setInt(a, prefix, attrWorkers, &p.Workers, atLeast(1))
	d.setInt(a, prefix, attrEnvsPerWorker, &p.EnvsPerWorker, atLeast(1))
	d.setInt(a, prefix, attrChunkSteps, &p.ChunkSteps, atLeast(1))
	d.setInt(a, prefix, attrReplayCapacity, &p.ReplayCapacity, atLeast(1))
	d.setInt(a, prefix, attrMaxStaleness, &p.MaxStaleness, atLeast(0))
	d.setInt(a, prefix, attrLag, &p.Lag, atLeast(0))
	if ib := d.single(c.Blocks, blockInference); ib != nil {
		d.decodeInference(ib, &p.Inference)
	}
}

// decodeInference applies an inference block onto in.
func (d *decoder) decodeInference(block *hcl.Block, in *Inference) {
	const prefix = blockPipeline + "." + blockInference
	c := d.content(block.Body, inferenceSchema)
	d.setInt(c.Attributes, prefix, attrMaxBatch, &in.MaxBatch, atLeast(1))
	d.setDuration(c.Attributes, prefix, attrMaxWait, &in.MaxWait, true)
}
