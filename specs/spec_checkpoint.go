package specs

import (
	"github.com/accerl/accerl/jsondur"
	"github.com/hashicorp/hcl/v2"
)

// Names in the checkpoint block.
const (
	blockCheckpoint = "checkpoint"
	attrEvery       = "every"
	attrKeep        = "keep"
	attrHeartbeat   = "heartbeat_timeout"
)

// Checkpoint sets how a run is cut into training segments.
type Checkpoint struct {
	// Every is the number of trainer updates per training segment; each
	// segment ends with a checkpoint. >= 1.
	Every int `json:"every"`
	// Keep is how many of the newest checkpoints are kept on disk. >= 1.
	Keep int `json:"keep"`
	// HeartbeatTimeout is how long a training segment may go without a heartbeat
	// before Temporal declares its worker dead and retries the segment elsewhere
	// (from the previous checkpoint). Segments heartbeat after every update and at
	// least every 2 s (a quarter of this when shorter) while they evaluate or write,
	// so it bounds only how soon a dead worker is noticed. > 0.
	HeartbeatTimeout jsondur.Duration `json:"heartbeat_timeout"`
}

var checkpointSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrEvery},
		{Name: attrKeep},
		{Name: attrHeartbeat},
	},
}

// decodeCheckpoint applies a checkpoint block onto c.
func (d *decoder) decodeCheckpoint(block *hcl.Block, c *Checkpoint) {
	content := d.content(block.Body, checkpointSchema)
	d.setInt(content.Attributes, blockCheckpoint, attrEvery, &c.Every, atLeast(1))
	d.setInt(content.Attributes, blockCheckpoint, attrKeep, &c.Keep, atLeast(1))
	d.setDuration(content.Attributes, blockCheckpoint, attrHeartbeat, &c.HeartbeatTimeout, true)
}
