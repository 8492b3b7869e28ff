package contract

import "testing"

// TestPretrainPolicyProgressString: the status line of a running PretrainPolicy names the
// phase, and while cloning the epoch and, once one has finished, its loss.
func TestPretrainPolicyProgressString(t *testing.T) {
	for _, c := range []struct {
		p    PretrainPolicyProgress
		want string
	}{
		{PretrainPolicyProgress{Phase: PhaseDemos, Epochs: 40}, "recording demos"},
		{PretrainPolicyProgress{Phase: PhaseClone, Epoch: 0, Epochs: 40}, "cloning (epoch 0/40)"},
		{PretrainPolicyProgress{Phase: PhaseClone, Epoch: 7, Epochs: 40, Loss: 3.02771}, "cloning (epoch 7/40, loss 3.028)"},
		{PretrainPolicyProgress{Phase: PhaseEvaluate, Epoch: 40, Epochs: 40, Loss: 2.689}, "evaluating the clone"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}
