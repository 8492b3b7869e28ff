package specs_test

import (
	"fmt"
	"testing"
)

var sprintf = fmt.Sprintf

// metrics { tensorboard = false } turns the event files off; without the block they are on
// and the resolved JSON (and so the hash) does not mention them; an ablation can turn them
// back on.
func TestMetricsTensorBoard(t *testing.T) {
	const src = `
experiment "m" {
  budget { env_steps = 1000 }
  env "cartpole" {}
  %s
  ablation "on" {
    metrics { tensorboard = true }
  }
}`
	plain := mustParse(t, sprintf(src, ""), nil)
	off := mustParse(t, sprintf(src, "metrics { tensorboard = false }"), nil)
	if plain.Arms[0].Config.Metrics.NoTensorBoard || !off.Arms[0].Config.Metrics.NoTensorBoard || off.Arms[1].Config.Metrics.NoTensorBoard {
		t.Errorf("tensorboard off: plain %v, off %v, ablation on %v", plain.Arms[0].Config.Metrics, off.Arms[0].Config.Metrics, off.Arms[1].Config.Metrics)
	}
	if plain.Hash == off.Hash {
		t.Error("turning the event files off did not change the spec's hash")
	}
	if plain.Arms[0].Config.Metrics != off.Arms[1].Config.Metrics {
		t.Error("the ablation that turns them back on differs from the default")
	}
}
