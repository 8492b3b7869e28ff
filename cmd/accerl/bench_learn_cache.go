package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/specs"
)

// bcCache keeps the behaviour-cloned policies of `bench learn --bc-cache DIR` between
// invocations, so that RL ablations of a check (another temperature, learning rate or
// budget) start from the same cloned policy without cloning again (most of a VLA check's
// wall time). An entry is the run directory's bc/final checkpoint and pretrain.json, under
// a name made of the check, the seed and a hash of everything cloning and its evaluation
// read: the env, the policy (but its RL settings: the sampling temperature, the
// detached value and executed_only), the pretrain and evaluation blocks (but
// evaluation.sampled and final_episodes, which PretrainPolicy plays again) and the seed.
// A changed recipe therefore misses the cache instead of reusing a policy cloned otherwise.
type bcCache struct{ dir string }

// entry is the cache directory of one check and seed under cfg.
func (c bcCache) entry(check string, cfg specs.Config, seed uint64) (string, error) {
	p := cfg.Policy
	if p.VLA != nil {
		v := *p.VLA
		v.Temperature, v.DetachValue, v.ExecutedOnly = 0, false, false // RL settings: cloning does not read them
		p.VLA = &v
	}
	ev := cfg.Evaluation
	// A cached policy evaluated without sampled, or on another number of episodes, gets
	// that evaluation played by PretrainPolicy.
	ev.Sampled, ev.FinalEpisodes = false, 0
	b, err := json.Marshal(struct {
		Env        specs.Env
		Policy     specs.Policy
		Pretrain   specs.Pretrain
		Evaluation specs.Evaluation
		Seed       uint64
	}{cfg.Env, p, cfg.Pretrain, ev, seed})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return filepath.Join(c.dir, fmt.Sprintf("%s-seed%d-%s", check, seed, hex.EncodeToString(sum[:6]))), nil
}

// around runs run, a training of cfg's seed in the fresh run directory runDir, with the
// cloned policy from the cache: restored before it when the check's entry holds one
// (cached true), else saved as soon as the cloning is done: run calls cloned after its
// first RL segment (its segment hook), so that other benches can start from the entry
// while this one's RL goes on, and a run stopped during RL keeps its clone. A restored
// entry gets the run's pretrain.json back at that point (refresh: evaluations played again
// are kept). A nil cache,
// or a cfg without a pretrain block, only runs it (cloned does nothing).
func (c *bcCache) around(check string, cfg specs.Config, seed uint64, runDir string, run func(cloned func()) error) (cached bool, err error) {
	if c == nil || !cfg.Pretrain.Enabled {
		return false, run(func() {})
	}
	entry, err := c.entry(check, cfg, seed)
	if err != nil {
		return false, err
	}
	if cached, err = c.restore(entry, runDir); err != nil {
		return false, err
	}
	saved, saveErr := false, error(nil)
	save := func() {
		switch {
		case saved:
		case cached:
			saved, saveErr = true, c.refresh(entry, runDir)
		default:
			saved, saveErr = true, c.save(entry, runDir)
		}
	}
	if err := run(save); err != nil {
		return cached, errors.Join(err, saveErr)
	}
	save() // a run without RL segments
	return cached, saveErr
}

// refresh writes a restored run's pretrain.json back into its entry, once the run's
// PretrainPolicy is done with it: that activity plays the cached clone's evaluation again
// when the run asks for what the entry lacks (sampled episodes, another temperature, a
// larger final_episodes), and the next run from the entry then finds those figures instead
// of playing them once more. The policy itself is never rewritten. The file is replaced by
// a rename, so a reader sees the old summary or the new one, never half of one.
func (c bcCache) refresh(entry, runDir string) error {
	b, err := os.ReadFile(filepath.Join(runDir, runstore.PretrainFile))
	if err != nil {
		return fmt.Errorf("bench learn --bc-cache: %w", err)
	}
	dst := filepath.Join(entry, runstore.PretrainFile)
	if old, err := os.ReadFile(dst); err == nil && string(old) == string(b) {
		return nil
	}
	tmp, err := os.CreateTemp(entry, runstore.PretrainFile+".*.tmp")
	if err != nil {
		return fmt.Errorf("bench learn --bc-cache: %w", err)
	}
	_, werr := tmp.Write(b)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("bench learn --bc-cache: refresh %s: %w", dst, err)
	}
	return os.Rename(tmp.Name(), dst)
}

// restore copies a cached cloned policy into the fresh run directory runDir, so that the
// run's PretrainPolicy finds it finished; false when the cache has none.
func (c bcCache) restore(entry, runDir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(entry, runstore.PretrainFile)); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if err := os.CopyFS(runDir, os.DirFS(entry)); err != nil {
		return false, fmt.Errorf("bench learn --bc-cache: restore %s: %w", entry, err)
	}
	return true, nil
}

// save copies the run's cloned policy and its summary into the cache entry
// (saveCacheEntry).
func (c bcCache) save(entry, runDir string) error {
	return saveCacheEntry(entry, func(tmp string) error {
		b, err := os.ReadFile(filepath.Join(runDir, runstore.PretrainFile))
		if err != nil {
			return fmt.Errorf("bench learn --bc-cache: %w", err)
		}
		final, dst := activities.BCPolicyDir(runDir), activities.BCPolicyDir(tmp)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		if err := os.CopyFS(dst, os.DirFS(final)); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, runstore.PretrainFile), b, 0o644)
	})
}

// saveCacheEntry makes a cache entry (--bc-cache, --wm-cache) unless it exists: fill writes
// its files into a temporary directory of its own beside it, which is renamed to entry when
// complete, so an interrupted save leaves no half entry and two benches saving one entry at
// once do not mix their files; when another bench saved the entry meanwhile, its copy stays.
func saveCacheEntry(entry string, fill func(tmp string) error) error {
	if _, err := os.Stat(entry); err == nil {
		return nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(entry), filepath.Base(entry)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // gone after the rename; left over only on failure
	if err := fill(tmp); err != nil {
		return fmt.Errorf("save cache entry %s: %w", entry, err)
	}
	if err := os.Rename(tmp, entry); err != nil {
		if _, serr := os.Stat(entry); serr == nil {
			return nil // another bench saved the same entry first
		}
		return fmt.Errorf("save cache entry %s: %w", entry, err)
	}
	return nil
}
