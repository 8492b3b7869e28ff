package specs

import "github.com/hashicorp/hcl/v2"

// Names in the debug block.
const (
	blockDebug      = "debug"
	attrNaNAtUpdate = "nan_at_update"
)

// Debug holds test-only hooks. Nothing in it belongs in a real experiment: it exists so
// that accerl's own tests can provoke failures on purpose and check how runs survive them.
type Debug struct {
	// NaNAtUpdate, when > 0, makes the trainer inject a NaN at that run-wide update number,
	// so that the update fails with a non-finite error (and every retry fails the same way).
	NaNAtUpdate int64 `json:"nan_at_update"`
}

var debugSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrNaNAtUpdate},
	},
}

// decodeDebug applies a debug block onto dbg.
func (d *decoder) decodeDebug(block *hcl.Block, dbg *Debug) {
	c := d.content(block.Body, debugSchema)
	var n int
	if _, ok := c.Attributes[attrNaNAtUpdate]; ok {
		d.setInt(c.Attributes, blockDebug, attrNaNAtUpdate, &n, atLeast(0))
		dbg.NaNAtUpdate = int64(n)
	}
}
