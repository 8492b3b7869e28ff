package kernels

import (
	"fmt"
	"math"
)

// ObsLearner trains an [ObsModel] with Adam, one minibatch per Fit. Opt
// and the model's parameters are the whole training state (checkpoints
// save Opt.M, Opt.V and Opt.T). Not safe for concurrent use.
type ObsLearner struct {
	Model *ObsModel
	Opt   *Adam
	// MaxGradNorm > 0 clips the global gradient norm before the Adam step
	// ([ClipGradNorm]); 0 disables clipping.
	MaxGradNorm float64

	undo adamUndo
}

// NewObsLearner returns a learner with Adam at learning rate lr (see
// [NewAdam]) and no gradient clipping.
func NewObsLearner(m *ObsModel, lr float64) *ObsLearner {
	return &ObsLearner{Model: m, Opt: NewAdam(m.NumParams(), lr)}
}

// Fit takes one Adam step on the batch's normalised-delta MSE and returns
// the loss before the step. A non-finite loss, gradient or parameter
// leaves the model and optimizer as they were and returns an error naming
// the tensor ("gradient of obs.2.weight[5] is NaN").
func (l *ObsLearner) Fit(b ObsBatch) (float64, error) {
	m := l.Model
	m.ZeroGrads()
	loss := m.LossAndGrad(b)
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, fmt.Errorf("fit observation model: loss is %v", loss)
	}
	if err := adamFit(m.params, m.grads, l.Opt, l.MaxGradNorm, m.paramName, &l.undo); err != nil {
		return loss, fmt.Errorf("fit observation model: %w", err)
	}
	return loss, nil
}

// RewardLearner trains a [RewardModel] with Adam, one minibatch per Fit.
// Not safe for concurrent use.
type RewardLearner struct {
	Model *RewardModel
	Opt   *Adam
	// MaxGradNorm > 0 clips the global gradient norm; 0 disables clipping.
	MaxGradNorm float64

	undo adamUndo
}

// NewRewardLearner returns a learner with Adam at learning rate lr and no
// gradient clipping.
func NewRewardLearner(m *RewardModel, lr float64) *RewardLearner {
	return &RewardLearner{Model: m, Opt: NewAdam(m.NumParams(), lr)}
}

// Fit takes one Adam step on the batch's reward and termination losses and
// returns them as they were before the step. A non-finite loss, gradient
// or parameter leaves the model and optimizer unchanged and returns an
// error naming the tensor.
func (l *RewardLearner) Fit(b RewardBatch) (RewardLoss, error) {
	m := l.Model
	m.ZeroGrads()
	loss := m.LossAndGrad(b)
	for _, t := range []struct {
		name string
		v    float64
	}{{"reward loss", loss.Reward}, {"termination loss", loss.Term}} {
		if math.IsNaN(t.v) || math.IsInf(t.v, 0) {
			return loss, fmt.Errorf("fit reward model: %s is %v", t.name, t.v)
		}
	}
	if err := adamFit(m.params, m.grads, l.Opt, l.MaxGradNorm, m.paramName, &l.undo); err != nil {
		return loss, fmt.Errorf("fit reward model: %w", err)
	}
	return loss, nil
}

// adamUndo keeps what one Adam step changes, so that a step producing a
// non-finite parameter can be taken back.
type adamUndo struct{ params, m, v []float64 }

// adamFit checks the gradients, optionally clips them, takes one Adam step
// and checks the parameters, restoring params and opt on failure. name
// names a flat index for the error message.
func adamFit(params, grads []float64, opt *Adam, maxNorm float64, name func(int) string, u *adamUndo) error {
	if i, ok := allFinite(grads); !ok {
		return fmt.Errorf("gradient of %s is %v", name(i), grads[i])
	}
	if maxNorm > 0 {
		if norm := ClipGradNorm(grads, maxNorm); math.IsInf(norm, 0) || math.IsNaN(norm) {
			return fmt.Errorf("gradient norm is %v", norm)
		}
	}
	u.params = append(u.params[:0], params...)
	u.m = append(u.m[:0], opt.M...)
	u.v = append(u.v[:0], opt.V...)
	opt.Step(params, grads)
	if i, ok := allFinite(params); !ok {
		bad := params[i]
		copy(params, u.params)
		copy(opt.M, u.m)
		copy(opt.V, u.v)
		opt.T--
		return fmt.Errorf("parameter %s became %v", name(i), bad)
	}
	return nil
}
