package specs

import "github.com/hashicorp/hcl/v2"

// Names in the metrics block.
const (
	blockMetrics    = "metrics"
	attrTensorBoard = "tensorboard"
)

// Metrics sets what a run writes besides its Arrow metrics and episodes files.
type Metrics struct {
	// NoTensorBoard turns off the TensorBoard event files (<run>/tb/), which every run
	// writes by default (`metrics { tensorboard = false }`). Stored negated so that the
	// default is the zero value and specs without a metrics block keep their hash.
	NoTensorBoard bool `json:"no_tensorboard,omitempty"`
}

var metricsSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrTensorBoard},
	},
}

// decodeMetrics applies a metrics block onto m.
func (d *decoder) decodeMetrics(block *hcl.Block, m *Metrics) {
	c := d.content(block.Body, metricsSchema)
	on := !m.NoTensorBoard
	d.setBool(c.Attributes, blockMetrics, attrTensorBoard, &on)
	m.NoTensorBoard = !on
}
