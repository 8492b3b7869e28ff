package pixelwm

import (
	"context"
	"testing"
	"time"

	"github.com/accerl/accerl/kernels/edm/reward"
)

// TestRewardModelLearns trains M_rew on the frames of 20 noisy-expert
// spatial episodes (both cameras at 32×32, 8 lingering steps) and checks
// the two learning signals of a smoke test: the focal loss on all the
// training frames falls, and the success accuracy at threshold ½ beats
// always answering the majority class.
func TestRewardModelLearns(t *testing.T) {
	start := time.Now()
	in := CollectInput{Suite: "spatial", Episodes: 20, Behaviour: BehaviourExpertNoisy, Noise: 0.3, ImageSize: 32, Linger: 8, Seed: 3}
	eps, err := Collect(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	ex := RewardExamples(eps)
	tc := reward.DefaultTrainConfig(1)
	tr, err := reward.NewTrainer(reward.DefaultConfig(), tc)
	if err != nil {
		t.Fatal(err)
	}
	before := tr.EvalLoss(ex, 256)
	for range 400 {
		if _, err := tr.Step(ex); err != nil {
			t.Fatal(err)
		}
	}
	after := tr.EvalLoss(ex, 256)
	var steps [][][]uint8
	var ys []bool
	for _, e := range ex {
		steps, ys = append(steps, e.Frames), append(ys, e.Success)
	}
	p, _ := tr.Model.Predict(steps)
	s := reward.Score(p, ys, 0.5)
	t.Logf("%d frames (%.1f%% success): focal loss %.4f → %.4f; success accuracy %.3f vs majority %.3f, precision %.2f, recall %.2f (%.1fs)",
		len(ex), 100*s.Positives, before, after, s.Accuracy, s.Majority, s.Precision, s.Recall, time.Since(start).Seconds())
	if !(after < 0.7*before) {
		t.Errorf("focal loss %.4f → %.4f, want a fall of at least 30%%", before, after)
	}
	if !(s.Accuracy > s.Majority) {
		t.Errorf("success accuracy %.3f does not beat the majority-class rate %.3f", s.Accuracy, s.Majority)
	}
}
