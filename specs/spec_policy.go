package specs

import "github.com/hashicorp/hcl/v2"

// Names in the policy block.
const (
	blockPolicy    = "policy"
	attrAction     = "action"
	attrHidden     = "hidden"
	attrActivation = "activation"
	attrBins       = "bins"
	attrInitLogStd = "init_log_std"
	attrChunk      = "action_chunk"
	attrExecute    = "execute_steps"
)

// Policy describes the actor-critic network.
type Policy struct {
	// Action is the action head: ActionCategorical, ActionTokens (continuous
	// actions discretised into Bins tokens per dimension) or ActionGaussian.
	Action string `json:"action"`
	// Hidden lists the width of each hidden layer; at least one, each >= 1.
	Hidden []int `json:"hidden"`
	// Activation is the hidden-layer nonlinearity: ActivationTanh or
	// ActivationReLU.
	Activation string `json:"activation"`
	// Bins is the number of tokens per action dimension for the tokens
	// head. >= 2.
	Bins int `json:"bins"`
	// InitLogStd is the gaussian head's initial log standard deviation
	// (state-independent, learned).
	InitLogStd float64 `json:"init_log_std"`
	// ActionChunk is how many future actions one policy query writes (K, as ACT, OpenVLA-OFT
	// and AcceRL's action chunks do); 0 or 1 is one action per query. With K > 1 the policy
	// writes K·D values (gaussian head only), the environment runs the first ExecuteSteps
	// of them open loop, and the step's reward is their sum: an env step of the run is one
	// executed chunk. Omitted from the JSON while 0, so specs without it keep their hash.
	ActionChunk int `json:"action_chunk,omitempty"`
	// ExecuteSteps is how many actions of each chunk run before the next query
	// (1 ≤ ExecuteSteps ≤ ActionChunk; 0 means all of them).
	ExecuteSteps int `json:"execute_steps,omitempty"`
	// VLA, when set (a vla block), makes the policy the micro-VLA over the cameras'
	// frames instead of the MLP over the state vector (see VLA).
	VLA *VLA `json:"vla,omitempty"`
}

// Chunk returns the effective action chunk K (at least 1) and how many of its actions run
// per query.
func (p Policy) Chunk() (k, execute int) {
	k = max(1, p.ActionChunk)
	execute = p.ExecuteSteps
	if execute <= 0 || execute > k {
		execute = k
	}
	return k, execute
}

// RLChunk is the action chunk the RL stage acts with: Chunk's, or with
// policy.vla.executed_only only its executed actions (execute, execute).
func (p Policy) RLChunk() (k, execute int) {
	k, execute = p.Chunk()
	if p.VLA != nil && p.VLA.ExecutedOnly {
		k = execute
	}
	return k, execute
}

var policySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrAction},
		{Name: attrHidden},
		{Name: attrActivation},
		{Name: attrBins},
		{Name: attrInitLogStd},
		{Name: attrChunk},
		{Name: attrExecute},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: blockVLA}},
}

// decodePolicy applies a policy block onto p.
func (d *decoder) decodePolicy(block *hcl.Block, p *Policy) {
	c := d.content(block.Body, policySchema)
	d.setEnum(c.Attributes, blockPolicy, attrAction, &p.Action, actions())
	d.setInts(c.Attributes, blockPolicy, attrHidden, &p.Hidden, atLeast(1))
	d.setEnum(c.Attributes, blockPolicy, attrActivation, &p.Activation, activations())
	d.setInt(c.Attributes, blockPolicy, attrBins, &p.Bins, atLeast(2))
	d.setFloat(c.Attributes, blockPolicy, attrInitLogStd, &p.InitLogStd, between(-20, 5))
	d.setInt(c.Attributes, blockPolicy, attrChunk, &p.ActionChunk, between(1, maxActionChunk))
	d.setInt(c.Attributes, blockPolicy, attrExecute, &p.ExecuteSteps, between(1, maxActionChunk))
	if b := d.single(c.Blocks, blockVLA); b != nil {
		d.decodeVLA(b, &p.VLA)
	}
}

// maxActionChunk bounds policy.action_chunk: AcceRL and OpenVLA-OFT use 8 to 25 actions per
// chunk; 64 leaves room while keeping the head's width sane.
const maxActionChunk = 64
