package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/specs"
)

// wmCache keeps the pretrained pixel world models of `bench sample-efficiency --wm-cache
// DIR` between invocations, so that ablations of the imagined training (another imagined
// temperature, group, weighting or horizon) start from the same pretrained M_obs, M_rew and
// proprio head without pretraining again (half an hour and more of a world-model arm on 2
// cores). An entry is a copy of the run's world-model directory once pretraining finished
// (the offline episodes, the final pretraining checkpoints, the scores and the strip), under
// a name made of the suite, the seed and a hash of everything pretraining reads
// (activities.PixelPretrainConfig: the models' sizes and learning rates, the step counts,
// the offline collection, self-forcing, M_rew's imagined endings, the seed). A restored
// entry puts the files where the run's CollectOffline and PretrainWorldModel activities
// look for their own finished work, so the run resumes after them exactly as a run
// resumed after a crash would; a changed recipe misses the cache. A change to the code that
// pretrains is not in the hash: empty the cache after one.
type wmCache struct {
	dir string
	log io.Writer // where it says which entry an arm restores or will save (nil: nowhere)
}

// entry is the cache directory of cfg's pixel world model for seed.
func (c wmCache) entry(cfg specs.Config, seed uint64) (string, error) {
	b, err := json.Marshal(activities.PixelPretrainConfig(cfg, seed))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return filepath.Join(c.dir, fmt.Sprintf("pixel-wm-%s-seed%d-%s", cfg.Env.Suite, seed, hex.EncodeToString(sum[:6]))), nil
}

// around runs run, a training of cfg's seed in the fresh run directory runDir, with the
// pretrained pixel world model from the cache: restored before it when the entry exists
// (cached true), else saved when run calls pretrained (after its first RL segment, when
// pretraining is done). A nil cache, or a cfg without a pixel world model, only runs it.
func (c *wmCache) around(cfg specs.Config, seed uint64, runDir string, run func(pretrained func()) error) (cached bool, err error) {
	if c == nil || !cfg.WorldModel.Enabled || cfg.WorldModel.Pixels == nil {
		return false, run(func() {})
	}
	entry, err := c.entry(cfg, seed)
	if err != nil {
		return false, err
	}
	if cached, err = c.restore(entry, runDir); err != nil {
		return false, err
	}
	if c.log != nil {
		if cached {
			fmt.Fprintf(c.log, "  seed %d: pretrained pixel world model restored from %s\n", seed, entry)
		} else {
			fmt.Fprintf(c.log, "  seed %d: no pretrained pixel world model in %s yet: pretraining, then saving it there\n", seed, entry)
		}
	}
	saved, saveErr := cached, error(nil)
	save := func() {
		if !saved {
			saved, saveErr = true, c.save(entry, runDir)
		}
	}
	if err := run(save); err != nil {
		return cached, errors.Join(err, saveErr)
	}
	save()
	return cached, saveErr
}

// restore copies a cached world model into the fresh run directory's world-model
// directory; false when the cache has none.
func (c wmCache) restore(entry, runDir string) (bool, error) {
	if _, err := os.Stat(entry); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	dst := activities.WorldModelDir(runDir)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return false, err
	}
	if err := os.CopyFS(dst, os.DirFS(entry)); err != nil {
		return false, fmt.Errorf("bench sample-efficiency --wm-cache: restore %s: %w", entry, err)
	}
	return true, nil
}

// save copies the run's world-model directory into the cache entry (saveCacheEntry). A
// run whose pretraining left no scores file has not finished it, and saves nothing.
func (c wmCache) save(entry, runDir string) error {
	src := activities.WorldModelDir(runDir)
	if _, err := os.Stat(filepath.Join(src, activities.PixelScoresFile)); err != nil {
		return nil
	}
	return saveCacheEntry(entry, func(tmp string) error { return os.CopyFS(tmp, os.DirFS(src)) })
}
