package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/accerl/accerl/activities/bc"
	"github.com/accerl/accerl/activities/checkpoint"
	"github.com/accerl/accerl/activities/contract"
	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/kernels/vla"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv/tabletop"
)

// Layout of a run's behaviour-cloning directory, <run>/bc: one checkpoint per finished epoch
// (epoch-NNNNNN, the trainer's state) and, once done, the warm-start policy (final).
const (
	bcDir          = "bc"
	bcFinalDir     = "final"
	bcStateFile    = "bc_state.json"
	bcPolicyFile   = "policy.json"
	bcHeartbeatS   = 5
	bcKeepEpochs   = 2
	bcGradNormClip = 1 // the measured recipe's global gradient-norm clip (bc.DefaultConfig)
)

// BCDir is where a run keeps its behaviour-cloning checkpoints.
func BCDir(runDir string) string { return filepath.Join(runDir, bcDir) }

// BCPolicyDir is where a run keeps its finished warm-start policy (a checkpoint whose
// presence tells PretrainPolicy the cloning is done).
func BCPolicyDir(runDir string) string { return filepath.Join(BCDir(runDir), bcFinalDir) }

// bcPolicy is the content of the final checkpoint: the warm-start parameters, in the engine
// policy's layout (bc.Model.FoldedParams), and the pretraining's result.
type bcPolicy struct {
	Params []float64            `json:"params"`
	Result PretrainPolicyResult `json:"result"`
}

// bcProgress is the heartbeat payload of PretrainPolicy.
type bcProgress = contract.PretrainPolicyProgress

// BCConfig maps an arm's policy and pretrain blocks onto bc.Config: the policy's own trunk,
// activation and action chunk, so that the cloned network is the one RL goes on training.
func BCConfig(c specs.Config, seed uint64) bc.Config {
	k, execute := c.Policy.Chunk()
	p := c.Pretrain
	return bc.Config{Hidden: append([]int(nil), c.Policy.Hidden...), Activation: c.Policy.Activation,
		Chunk: k, Execute: execute, Epochs: p.Epochs, Batch: p.Batch, LR: p.LearningRate,
		MaxGradNorm: bcGradNormClip, Seed: seed}
}

// lastLoss is the last of an epoch-loss curve, 0 for none (PretrainPolicyProgress.Loss).
func lastLoss(curve []float64) float64 {
	if len(curve) == 0 {
		return 0
	}
	return curve[len(curve)-1]
}

// PretrainPolicy is the behaviour-cloning warm start of a run (the spec's pretrain block):
// it records pretrain.demos_per_task expert demonstrations of every task of the arm's suite
// (bc.Collect, with DART noise; deterministic under the run's seed), trains the arm's policy
// on them epoch by epoch (bc.Trainer), checkpointing and heartbeating after every epoch,
// then measures the cloned policy with the evaluation block's protocol on the same engine
// TrainSegment builds, and writes the warm-start parameters. A retry resumes from the newest
// epoch checkpoint that verifies (re-recording the demonstrations, which come out the same),
// and a retry after completion returns the finished result at once.
func (t *Trainer) PretrainPolicy(ctx context.Context, in PretrainPolicyInput) (res PretrainPolicyResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = temporal.NewNonRetryableApplicationError(fmt.Sprintf("pretrain policy panicked: %v", r), ErrTypeBadInput, nil)
		}
	}()
	c := in.Config
	if !c.Pretrain.Enabled || c.Env.Kind != specs.EnvTabletop {
		return res, temporal.NewNonRetryableApplicationError("pretrain policy: the arm has no pretrain block on a tabletop suite", ErrTypeBadInput, nil)
	}
	// It works on a local copy of its part of the run's directory (the directory itself,
	// unless the run is in an object store), published after every epoch's checkpoint.
	wc, err := runstore.OpenWorkingCopy(ctx, in.RunDir, runstore.Only(func(rel string) bool {
		return rel == runstore.PretrainFile || strings.HasPrefix(rel, bcDir+"/")
	}))
	if err != nil {
		return res, err
	}
	defer wc.Close()
	in.RunDir = wc.Dir
	root, final := BCDir(in.RunDir), BCPolicyDir(in.RunDir)
	if p, err := loadBCPolicy(final); err == nil {
		// The reference is the run directory's as it is now (it may have been moved
		// or copied since the policy was saved).
		p.Result.Checkpoint = wc.Ref(final)
		greedy, sampled := splitAgain(c, p.Result)
		recount := countAgain(c, p.Result)
		greedy = greedy || recount
		if sampled = sampled || recount && c.Evaluation.PlaysSampled() || playSampledAgain(c, p.Result); greedy || sampled {
			// Finished under an evaluation block without sampled, or sampled at another
			// temperature, or with another number of episodes, or by a build that did not
			// split its evaluations by task (copied from `bench learn --bc-cache`): play
			// what is missing now. It goes into pretrain.json, not into the final
			// checkpoint, so a retry plays it again, with the same result (the evaluation
			// seed fixes every draw).
			ev, n := c.Evaluation, c.Evaluation.HeadlineEpisodes()
			err := withHeartbeat(ctx, bcHeartbeatS*time.Second, func(report func(any)) error {
				report(bcProgress{Phase: contract.PhaseEvaluate, Epoch: c.Pretrain.Epochs, Epochs: c.Pretrain.Epochs})
				return withCloneEngine(c, in.Seed, p.Params, func(eng *engine.Engine) error {
					if greedy {
						r, err := eng.Evaluate(n, engine.EvalSeed(in.Seed), ev.Greedy)
						if err != nil {
							return err
						}
						p.Result.Success, p.Result.HasSuccess, p.Result.EvalEpisodes = r.SuccessRate(), r.HasSuccess, len(r.Returns)
						p.Result.Tasks = taskSuccess(c.Env, r)
					}
					if !sampled {
						return nil
					}
					s, err := eng.Evaluate(n, engine.EvalSeed(in.Seed), false)
					if err != nil {
						return err
					}
					p.Result.SampledSuccess, p.Result.HasSampledSuccess, p.Result.SampledTemperature = s.SuccessRate(), s.HasSuccess, sampledTemperature(c)
					p.Result.SampledTasks = taskSuccess(c.Env, s)
					return nil
				})
			})
			if err != nil {
				return res, err
			}
			if err := writePretrainSummary(in.RunDir, p.Result); err != nil {
				return res, err
			}
			return p.Result, wc.Publish(ctx)
		}
		return p.Result, nil
	}
	start := time.Now()
	epochs := c.Pretrain.Epochs
	err = withHeartbeat(ctx, bcHeartbeatS*time.Second, func(report func(any)) error {
		report(bcProgress{Phase: contract.PhaseDemos, Epochs: epochs})
		tr, err := newCloner(c, in.Seed, &res)
		if err != nil {
			return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if st, dir, err := latestBCState(root); err != nil {
			return err
		} else if st != nil {
			if err := tr.restore(st); err != nil {
				return fmt.Errorf("pretrain policy: resume from %s: %w", dir, err)
			}
			res.ResumedFrom = tr.Epochs()
		}
		loss := lastLoss(tr.epochLoss()) // the resumed epochs' last, for the progress line
		for !tr.Done() {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			report(bcProgress{Phase: contract.PhaseClone, Epoch: tr.Epochs(), Epochs: epochs, Loss: loss})
			if loss, err = tr.epoch(ctx); err != nil {
				if ctx.Err() != nil {
					return ctx.Err() // cancelled mid-epoch: the next attempt resumes from the last epoch's checkpoint
				}
				return temporal.NewApplicationErrorWithCause(err.Error(), ErrTypeTraining, err)
			}
			st, err := tr.state()
			if err != nil {
				return err
			}
			dir, err := saveBCState(root, in.SpecHash, tr.Epochs(), st)
			if err != nil {
				return err
			}
			if err := wc.Publish(ctx); err != nil {
				return err
			}
			report(bcProgress{Phase: contract.PhaseClone, Epoch: tr.Epochs(), Epochs: epochs, Checkpoint: wc.Ref(dir), Loss: loss})
		}
		res.EpochLoss = tr.epochLoss()
		params, err := tr.params()
		if err != nil {
			return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
		}
		report(bcProgress{Phase: contract.PhaseEvaluate, Epoch: tr.Epochs(), Epochs: epochs})
		err = withCloneEngine(c, in.Seed, params, func(eng *engine.Engine) error {
			if c.Evaluation.Episodes <= 0 {
				return nil
			}
			r, s, err := evaluate(eng, c.Evaluation, c.Evaluation.HeadlineEpisodes(), in.Seed)
			if err != nil {
				return err
			}
			res.Success, res.HasSuccess, res.EvalEpisodes = r.SuccessRate(), r.HasSuccess, len(r.Returns)
			res.Tasks = taskSuccess(c.Env, r)
			if s != nil {
				res.SampledSuccess, res.HasSampledSuccess, res.SampledTemperature = s.SuccessRate(), s.HasSuccess, sampledTemperature(c)
				res.SampledTasks = taskSuccess(c.Env, *s)
			}
			return nil
		})
		if err != nil {
			return err
		}
		res.WallS = time.Since(start).Seconds()
		res.Checkpoint = wc.Ref(final)
		if err := writePretrainSummary(in.RunDir, res); err != nil {
			return err
		}
		return saveBCPolicy(final, in.SpecHash, bcPolicy{Params: params, Result: res})
	})
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if err != nil {
		return res, err
	}
	if err := checkpoint.Prune(root, bcKeepEpochs+1); err != nil {
		return res, err
	}
	return res, wc.Publish(ctx)
}

func saveBCState(root, specHash string, epoch int, b []byte) (string, error) {
	dir := filepath.Join(root, fmt.Sprintf("epoch-%06d", epoch))
	m := checkpoint.Manifest{SpecHash: specHash, Counters: map[string]int64{"epoch": int64(epoch)}, Created: time.Now().UTC()}
	if err := checkpoint.Save(dir, m, map[string][]byte{bcStateFile: b}); err != nil {
		return "", err
	}
	return dir, nil
}

// latestBCState loads the trainer state of the newest epoch checkpoint under root that
// verifies (nil when none).
func latestBCState(root string) ([]byte, string, error) {
	dir, _, files, _, err := checkpoint.Latest(root)
	if err != nil || dir == "" {
		return nil, "", err
	}
	b, ok := files[bcStateFile]
	if !ok {
		return nil, "", nil // the final checkpoint did not verify above; start over
	}
	return b, dir, nil
}

func saveBCPolicy(dir, specHash string, p bcPolicy) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode bc policy: %w", err)
	}
	m := checkpoint.Manifest{SpecHash: specHash, Created: time.Now().UTC()}
	return checkpoint.Save(dir, m, map[string][]byte{bcPolicyFile: b})
}

// loadBCPolicy reads the warm-start policy of one final checkpoint.
func loadBCPolicy(dir string) (bcPolicy, error) {
	var p bcPolicy
	_, files, err := checkpoint.Load(dir)
	if err != nil {
		return p, fmt.Errorf("load pretrained policy: %w", err)
	}
	if err := json.Unmarshal(files[bcPolicyFile], &p); err != nil {
		return p, fmt.Errorf("load pretrained policy: decode %s: %w", dir, err)
	}
	return p, nil
}

// LoadClonedParams reads a cloned VLA's parameters, in the engine policy's layout, from
// path: a run's directory (its BCPolicyDir is read), a `bench learn --bc-cache` entry (the
// same layout), a final BC checkpoint directory itself (checksums verified), or a model
// file written by `bench bc --save-model`.
func LoadClonedParams(path string) ([]float64, error) {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("load cloned policy: %w", err)
		}
		var m bc.VLAModel
		if err := m.UnmarshalBinary(b); err != nil {
			return nil, fmt.Errorf("load cloned policy: %s is not a `bench bc --save-model` file: %w", path, err)
		}
		return m.FoldedParams()
	}
	for _, d := range []string{BCPolicyDir(path), path} {
		if _, err := os.Stat(filepath.Join(d, bcPolicyFile)); err == nil {
			p, err := loadBCPolicy(d)
			return p.Params, err
		}
	}
	return nil, fmt.Errorf("load cloned policy: neither %s nor %s holds a %s; give a run directory, a --bc-cache entry, a bc/final checkpoint or a `bench bc --save-model` file",
		BCPolicyDir(path), path, bcPolicyFile)
}

// LoadClonedModel is LoadClonedParams as a policy to act with. A `bench bc --save-model`
// file is read whole (its own network, standardisation and chunking); a run's, a cache
// entry's or a checkpoint's parameters are set on the network cfg describes, which must be
// the one that was cloned (a parameter count that differs is an error naming both).
func LoadClonedModel(path string, cfg bc.VLAConfig) (*bc.VLAModel, error) {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("load cloned policy: %w", err)
		}
		m := new(bc.VLAModel)
		if err := m.UnmarshalBinary(b); err != nil {
			return nil, fmt.Errorf("load cloned policy: %s is not a `bench bc --save-model` file: %w", path, err)
		}
		return m, nil
	}
	params, err := LoadClonedParams(path)
	if err != nil {
		return nil, err
	}
	m, err := bc.NewVLAModel(cfg)
	if err != nil {
		return nil, fmt.Errorf("load cloned policy: %w", err)
	}
	if err := m.SetFoldedParams(params); err != nil {
		return nil, fmt.Errorf("load cloned policy %s: not the network of dim %d, %d layers, %d heads, patch %d at %d×%d: %w",
			path, cfg.Dim, cfg.Layers, cfg.Heads, cfg.Patch, cfg.ImageSize, cfg.ImageSize, err)
	}
	return m, nil
}

// withCloneEngine runs play on the engine TrainSegment builds, loaded with the cloned
// parameters params (a policy that does not fit the arm's network fails here, whether or
// not anything is played); every error is a non-retryable bad-input one.
func withCloneEngine(c specs.Config, seed uint64, params []float64, play func(*engine.Engine) error) error {
	eng, err := NewEngine(c, seed, int(c.TotalUpdates()), nil)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("pretrain policy: create engine: %v", err), ErrTypeBadInput, err)
	}
	defer eng.Close()
	if err := loadWarmStart(eng, c, params); err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("pretrain policy: %v", err), ErrTypeBadInput, err)
	}
	if err := play(eng); err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("pretrain policy: %v", err), ErrTypeBadInput, err)
	}
	return nil
}

// playSampledAgain says whether a finished clone's result r lacks the sampled evaluation
// arm c asks for: none was played, or one at another sampling temperature.
func playSampledAgain(c specs.Config, r PretrainPolicyResult) bool {
	return c.Evaluation.PlaysSampled() && (!r.HasSampledSuccess || r.SampledTemperature != sampledTemperature(c))
}

// countAgain says whether a finished clone's result r was evaluated on another number of
// episodes than the headline count arm c asks for (evaluation.final_episodes changed, or
// a clone cached by `bench learn --bc-cache` under another count).
func countAgain(c specs.Config, r PretrainPolicyResult) bool {
	return c.Evaluation.Episodes > 0 && r.HasSuccess && r.EvalEpisodes != c.Evaluation.HeadlineEpisodes()
}

// splitAgain says whether a finished clone's result r lacks the split by task of its greedy
// and of its sampled evaluation that arm c records (a tabletop arm's clone evaluated by an
// older build).
func splitAgain(c specs.Config, r PretrainPolicyResult) (greedy, sampled bool) {
	if c.Env.Kind != specs.EnvTabletop || c.Evaluation.Episodes <= 0 {
		return false, false
	}
	return r.HasSuccess && r.Tasks == nil, c.Evaluation.PlaysSampled() && r.HasSampledSuccess && r.SampledTasks == nil
}

// sampledTemperature is the temperature arm c's sampled evaluation plays at: the VLA's
// (1 when unset), 0 for the MLP policies, which have none.
func sampledTemperature(c specs.Config) float64 {
	if v := c.Policy.VLA; v != nil {
		return v.SamplingTemperature()
	}
	return 0
}

// loadWarmStart starts eng, the engine of arm c, from the cloned policy's parameters
// params: as they are, or with policy.vla.executed_only the VLA cut to the tokens of the
// executed actions of each chunk (vla.KeepActions), since cloning trains whole chunks and
// the engine acts with the executed part alone.
func loadWarmStart(eng *engine.Engine, c specs.Config, params []float64) error {
	k, _ := c.Policy.Chunk()
	if rk, _ := c.Policy.RLChunk(); c.Policy.VLA != nil && rk != k {
		var err error
		if params, _, err = vla.KeepActions(BCVLAConfig(c, 0).ModelConfig(), params, rk*tabletop.ActionDim); err != nil {
			return fmt.Errorf("cut the cloned policy to its executed actions: %w", err)
		}
	}
	return eng.LoadPolicy(params)
}

// writePretrainSummary writes the run's pretrain.json from res.
func writePretrainSummary(runDir string, res PretrainPolicyResult) error {
	return runstore.WriteJSON(filepath.Join(runDir, runstore.PretrainFile), runstore.PretrainSummary{
		Demos: res.Demos, DemoSteps: res.DemoSteps, Samples: res.Samples, EpochLoss: res.EpochLoss,
		Success: res.Success, HasSuccess: res.HasSuccess, EvalEpisodes: res.EvalEpisodes,
		SampledSuccess: res.SampledSuccess, HasSampledSuccess: res.HasSampledSuccess, SampledTemperature: res.SampledTemperature, WallS: res.WallS,
		Tasks: res.Tasks, SampledTasks: res.SampledTasks,
	})
}
