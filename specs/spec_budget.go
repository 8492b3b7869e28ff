package specs

import (
	"github.com/accerl/accerl/jsondur"
	"github.com/hashicorp/hcl/v2"
)

// Names in the budget block.
const (
	blockBudget  = "budget"
	attrEnvSteps = "env_steps"
	attrWallTime = "wall_time"
)

// Budget bounds how much one run may consume.
type Budget struct {
	// EnvSteps is the number of environment steps a run collects in total,
	// summed over all workers and environments. Required, > 0.
	EnvSteps int64 `json:"env_steps"`
	// WallTime stops a run after this much wall-clock time; 0 is unlimited.
	// It is encoded in JSON as a string with units ("30m0s").
	WallTime jsondur.Duration `json:"wall_time"`
}

var budgetSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrEnvSteps},
		{Name: attrWallTime},
	},
}

// decodeBudget applies a budget block onto b.
func (d *decoder) decodeBudget(block *hcl.Block, b *Budget) {
	c := d.content(block.Body, budgetSchema)
	d.setInt64(c.Attributes, blockBudget, attrEnvSteps, &b.EnvSteps, atLeast(1))
	d.setDuration(c.Attributes, blockBudget, attrWallTime, &b.WallTime, false)
}
