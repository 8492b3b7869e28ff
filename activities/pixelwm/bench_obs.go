package pixelwm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"time"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/runstore"
)

// benchObs is the record of a trained M_obs that BenchConfig.ObsCheckpoint keeps beside the
// trainer's own checkpoint (the file with ".json" appended): the data it learnt from and
// its training curve, which the trainer record does not carry. A later bench with the same
// data and M_obs settings restores the trainer instead of training it again, so that
// measurements of what comes after M_obs (M_rew, its examples, the evaluations) need not
// pay for its minutes each time.
type benchObs struct {
	Collect   CollectInput `json:"collect"`
	HeldEvery int          `json:"held_every"`
	Steps     int          `json:"obs_train_steps"`
	Seconds   float64      `json:"obs_train_seconds"`
	Loss      []float64    `json:"obs_loss_curve"`
}

// trainObs trains M_obs on samples for its budget or steps, or restores it from
// c.ObsCheckpoint when rec (readObsRecord's) says there is one (and trains it on to
// c.ObsSteps), recording what it did in res.
func (c BenchConfig) trainObs(ctx context.Context, budget time.Duration, samples []edm.Sample, rec *benchObs, res *BenchResult, say func(string, ...any)) (*edm.Trainer, error) {
	obs, err := loadBenchObs(c, rec)
	if err != nil {
		return nil, err
	}
	if obs == nil {
		if obs, err = edm.NewTrainer(c.Obs, c.EDM, c.ObsTrain, nil); err != nil {
			return nil, err
		}
	}
	res.ObsParams, res.ObsSamples = len(obs.Net.Params()), len(samples)
	say("M_obs: %d parameters, %d transitions (frame change σ %.4f), residual %v, σ_data %g, context noise ≤ %g, self-forcing ≤ %d from step %d, training %s",
		res.ObsParams, len(samples), res.ObsChangeStd, c.EDM.Residual, c.EDM.SigmaData, c.EDM.ContextNoise, c.EDM.SelfForcing, c.EDM.SelfForcingFrom, trainingLength(budget, c.ObsSteps))
	steps, done := c.ObsSteps, 0
	if rec != nil {
		res.ObsLoss, res.ObsSeconds, res.ObsRestored = rec.Loss, rec.Seconds, c.ObsCheckpoint
		say("M_obs: restored after %d steps (%.0fs of training) from %s", obs.Steps, rec.Seconds, c.ObsCheckpoint)
		if obs.Steps == c.ObsSteps {
			res.ObsSteps = obs.Steps
			return obs, nil
		}
		// Train on to c.ObsSteps: the trainer resumes exactly where it stopped.
		done = obs.Steps
		steps = c.ObsSteps - done
	}
	loss, sec, err := trainFor(ctx, budget, steps, res.ObsLossEvery, func() (float64, error) { return obs.Step(samples) },
		func(step int, loss, sec float64) { say("M_obs step %d  EDM loss %.4f  (%.0fs)", done+step, loss, sec) })
	if err != nil {
		return nil, err
	}
	res.ObsLoss, res.ObsSeconds, res.ObsSteps = append(res.ObsLoss, loss...), res.ObsSeconds+sec, obs.Steps
	if c.ObsCheckpoint != "" {
		if err := saveBenchObs(c, obs, benchObs{Collect: c.Collect, HeldEvery: c.HeldEvery, Steps: obs.Steps, Seconds: res.ObsSeconds, Loss: res.ObsLoss}); err != nil {
			return nil, err
		}
		say("M_obs: saved to %s", c.ObsCheckpoint)
	}
	return obs, nil
}

// readObsRecord reads the record of c.ObsCheckpoint, before any data is collected or
// loaded: nil when there is no checkpoint, an error when the checkpoint has no readable
// record or the record names other offline data or another split than c's (so that a
// mistaken flag does not collect other episodes into the data directory first).
func (c BenchConfig) readObsRecord() (*benchObs, error) {
	if c.ObsCheckpoint == "" {
		return nil, nil
	}
	if _, err := os.Stat(c.ObsCheckpoint); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	side, err := os.ReadFile(c.ObsCheckpoint + ".json")
	if err != nil {
		return nil, fmt.Errorf("M_obs checkpoint %s: its record: %w (delete the checkpoint to train again)", c.ObsCheckpoint, err)
	}
	var rec benchObs
	if err := json.Unmarshal(side, &rec); err != nil {
		return nil, fmt.Errorf("M_obs checkpoint %s: its record %s.json: %w", c.ObsCheckpoint, c.ObsCheckpoint, err)
	}
	if err := c.checkObsMatch([]obsMatch{
		{"offline data", rec.Collect, c.Collect},
		{"held-out split (one in N)", rec.HeldEvery, c.HeldEvery},
	}); err != nil {
		return nil, err
	}
	return &rec, nil
}

// loadBenchObs restores the M_obs trainer c.ObsCheckpoint holds when rec (its record) is
// set; nil without one. A trainer of other settings than c's is an error naming the
// difference: the bench never measures a model other than the one it was asked for. One
// of fewer steps than c.ObsSteps is restored for trainObs to train on (bit for bit what
// training straight through gives); one of more is refused.
func loadBenchObs(c BenchConfig, rec *benchObs) (*edm.Trainer, error) {
	if rec == nil {
		return nil, nil
	}
	data, err := os.ReadFile(c.ObsCheckpoint)
	if err != nil {
		return nil, err
	}
	t := new(edm.Trainer)
	if err := t.UnmarshalBinary(data); err != nil {
		return nil, fmt.Errorf("M_obs checkpoint %s: %w", c.ObsCheckpoint, err)
	}
	if err := c.checkObsMatch([]obsMatch{
		{"model size", t.Net.Config(), c.Obs},
		{"diffusion settings", t.EDM, c.EDM},
		{"optimisation", t.Train, c.ObsTrain},
	}); err != nil {
		return nil, err
	}
	if t.Steps > c.ObsSteps || t.Steps != rec.Steps {
		return nil, fmt.Errorf("M_obs checkpoint %s holds %d training steps (its record says %d), more than this run asks for (%d) or not what it recorded; ask for %d or more (training goes on from it), or name another file",
			c.ObsCheckpoint, t.Steps, rec.Steps, c.ObsSteps, t.Steps)
	}
	return t, nil
}

// obsMatch is one setting a checkpoint was made with (got) against this run's (want).
type obsMatch struct {
	what      string
	got, want any
}

// checkObsMatch names the first setting that differs.
func (c BenchConfig) checkObsMatch(ms []obsMatch) error {
	for _, d := range ms {
		if !reflect.DeepEqual(d.got, d.want) {
			return fmt.Errorf("M_obs checkpoint %s was trained with other %s (%+v) than this run asks for (%+v); name another --obs-checkpoint file, or drop the flag to train M_obs here",
				c.ObsCheckpoint, d.what, d.got, d.want)
		}
	}
	return nil
}

// saveBenchObs writes t and its record to c.ObsCheckpoint and its ".json" companion, each
// through a temporary file renamed into place, the record last: a checkpoint without its
// record is refused on loading, so a crash between the two cannot pass off a model as
// trained on other data.
func saveBenchObs(c BenchConfig, t *edm.Trainer, rec benchObs) error {
	data, err := t.MarshalBinary()
	if err != nil {
		return err
	}
	side, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.Remove(c.ObsCheckpoint + ".json"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, f := range []struct {
		path string
		data []byte
	}{{c.ObsCheckpoint, data}, {c.ObsCheckpoint + ".json", side}} {
		if err := runstore.WriteFileAtomic(f.path, func(w io.Writer) error { _, err := w.Write(f.data); return err }); err != nil {
			return fmt.Errorf("M_obs checkpoint: %w", err)
		}
	}
	return nil
}
