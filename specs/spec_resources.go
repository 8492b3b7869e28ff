package specs

import "github.com/hashicorp/hcl/v2"

// Names in the resources block.
const (
	blockResources = "resources"
	attrGPU        = "gpu"
)

// Resources says what hardware a run's training segments need.
type Resources struct {
	// GPU > 0 schedules the run's segments (and its world-model pretraining) on the "gpu"
	// task queue, which `accerl worker --queue gpu` serves on a GPU host; `accerl run`'s own
	// worker serves it too, on the CPU when the machine has no GPU. 0 (the default) keeps
	// everything on the "cpu" queue.
	GPU int `json:"gpu,omitempty"`
}

var resourcesSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrGPU},
	},
}

// decodeResources applies a resources block onto r.
func (d *decoder) decodeResources(block *hcl.Block, r *Resources) {
	c := d.content(block.Body, resourcesSchema)
	d.setInt(c.Attributes, blockResources, attrGPU, &r.GPU, between(0, 1))
}
