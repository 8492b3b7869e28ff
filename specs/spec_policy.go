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
}

var policySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrAction},
		{Name: attrHidden},
		{Name: attrActivation},
		{Name: attrBins},
		{Name: attrInitLogStd},
	},
}

// decodePolicy applies a policy block onto p.
func (d *decoder) decodePolicy(block *hcl.Block, p *Policy) {
	c := d.content(block.Body, policySchema)
	d.setEnum(c.Attributes, blockPolicy, attrAction, &p.Action, actions())
	d.setInts(c.Attributes, blockPolicy, attrHidden, &p.Hidden, atLeast(1))
	d.setEnum(c.Attributes, blockPolicy, attrActivation, &p.Activation, activations())
	d.setInt(c.Attributes, blockPolicy, attrBins, &p.Bins, atLeast(2))
	d.setFloat(c.Attributes, blockPolicy, attrInitLogStd, &p.InitLogStd, between(-20, 5))
}
