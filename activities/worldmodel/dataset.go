package worldmodel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"

	"github.com/accerl/accerl/runstore"
)

// Behaviour policies accepted by CollectConfig.Behaviour.
const (
	// BehaviourRandom draws every action uniformly: a uniform index for a
	// discrete action space, a uniform value in [Low, High] per dimension
	// for a continuous one.
	BehaviourRandom = "random"
)

// Dataset layout constants.
const (
	// ManifestFile is the dataset's manifest, written last: its presence
	// commits the dataset.
	ManifestFile = "dataset.json"
	// DatasetSchemaVersion is written into every shard and the manifest. Version 2 added
	// the success column; a version-1 dataset is collected again.
	DatasetSchemaVersion = "2"
	// DefaultEpisodesPerFile is the shard size when CollectConfig leaves it 0.
	DefaultEpisodesPerFile = 100
)

// CollectConfig describes an offline dataset. Two configs that are equal
// (after Normalize) describe the same bytes: episodes depend only on the
// seed and their index.
type CollectConfig struct {
	// Env names the environment kind ("cartpole"); the simulator itself
	// comes from the Sim factory passed to CollectOffline.
	Env string `json:"env"`
	// MaxEpisodeSteps is the time limit; 0 means the kind's default.
	MaxEpisodeSteps int `json:"max_episode_steps"`
	// Trajectories is the number of episodes to record. >= 1.
	Trajectories int `json:"trajectories"`
	// Behaviour is the acting policy; only BehaviourRandom exists so far.
	Behaviour string `json:"behaviour"`
	// Seed selects the episodes: episode e resets and acts with
	// rand.New(rand.NewPCG(Seed, e)).
	Seed uint64 `json:"seed"`
	// EpisodesPerFile is the number of episodes per shard file; 0 means
	// DefaultEpisodesPerFile. A crash loses at most one shard of work.
	EpisodesPerFile int `json:"episodes_per_file"`
}

// Normalize returns c with EpisodesPerFile defaulted.
func (c CollectConfig) Normalize() CollectConfig {
	if c.EpisodesPerFile == 0 {
		c.EpisodesPerFile = DefaultEpisodesPerFile
	}
	return c
}

// Validate reports a config CollectOffline cannot run.
func (c CollectConfig) Validate() error {
	var errs []error
	if c.Env == "" {
		errs = append(errs, errors.New("env must name the environment kind"))
	}
	if c.MaxEpisodeSteps < 0 {
		errs = append(errs, fmt.Errorf("max episode steps must not be negative, got %d", c.MaxEpisodeSteps))
	}
	if c.Trajectories < 1 {
		errs = append(errs, fmt.Errorf("trajectories must be at least 1, got %d", c.Trajectories))
	}
	if c.Behaviour != BehaviourRandom {
		errs = append(errs, fmt.Errorf("unknown behaviour %q (want %q)", c.Behaviour, BehaviourRandom))
	}
	if c.EpisodesPerFile < 0 {
		errs = append(errs, fmt.Errorf("episodes per file must not be negative, got %d", c.EpisodesPerFile))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("collect config: %w", err)
	}
	return nil
}

// DatasetFile describes one shard of a dataset.
type DatasetFile struct {
	Name         string `json:"name"`          // file name inside the dataset directory
	FirstEpisode int    `json:"first_episode"` // index of its first episode
	Episodes     int    `json:"episodes"`      // episodes it holds
	Rows         int    `json:"rows"`          // transitions it holds
	SHA256       string `json:"sha256"`        // hex SHA-256 of the file
}

// DatasetInfo is the manifest of a dataset (ManifestFile, JSON).
type DatasetInfo struct {
	// Dir is where the dataset was read from or written to; not stored.
	Dir           string        `json:"-"`
	SchemaVersion string        `json:"schema_version"`
	Config        CollectConfig `json:"config"` // normalised
	ObsDim        int           `json:"obs_dim"`
	// NumActions > 0 for a discrete action space (actions are stored as
	// one value, the index); 0 for a continuous one.
	NumActions int `json:"num_actions"`
	// ActionDims is the number of values per stored action (1 if discrete).
	ActionDims int `json:"action_dims"`
	// HasSuccess says the environment has a notion of success, so the success column means
	// something (world_model.reward = "success_delta" needs it).
	HasSuccess bool          `json:"has_success"`
	Episodes   int           `json:"episodes"`
	Rows       int           `json:"rows"`
	Files      []DatasetFile `json:"files"`
}

// Dataset is an offline dataset in memory, one entry per transition, in
// file order: episodes ascending, and within an episode t ascending. Row i
// of a matrix field is [i*width:(i+1)*width].
type Dataset struct {
	Info       DatasetInfo
	Episode    []int64   // episode index
	T          []int64   // step within the episode, from 0
	Obs        []float64 // o_t, Len×ObsDim
	Action     []float64 // a_t, Len×ActionDims (a discrete index as a float)
	Reward     []float64 // r_t
	Terminated []bool    // the step ended the episode in a terminal state
	Truncated  []bool    // the step hit the time limit
	NextObs    []float64 // o_{t+1}, Len×ObsDim
	Success    []bool    // the step ended an episode that reached its task's goal

	prev []int // row of the previous step of the same episode, −1 at its start (see links)
}

// Len returns the number of transitions.
func (d *Dataset) Len() int { return len(d.Reward) }

// CollectOffline records cfg.Trajectories episodes of the behaviour policy
// into dir as an Arrow IPC dataset and returns its manifest.
//
// It is idempotent and resumable. If dir already holds a manifest for the
// same (normalised) config whose files all match their checksums, it
// returns that manifest without simulating anything. Otherwise every shard
// file that already exists and reads back as the right shard of this config
// is kept, the others are (re)written, stale shards are removed, and the
// manifest is written last. Every file is written to a temporary name,
// fsynced and renamed into place, so a crash leaves whole shards or none,
// and a dataset without a manifest is never read.
//
// The context is checked between episodes; a cancelled collection returns
// the context's error and leaves the finished shards for the next call.
func CollectOffline(ctx context.Context, cfg CollectConfig, dir string, makeSim func() (Sim, error)) (DatasetInfo, error) {
	if err := cfg.Validate(); err != nil {
		return DatasetInfo{}, fmt.Errorf("collect offline dataset in %q: %w", dir, err)
	}
	cfg = cfg.Normalize()
	if info, err := readManifest(dir); err == nil && info.SchemaVersion == DatasetSchemaVersion && reflect.DeepEqual(info.Config, cfg) {
		if err := verifyFiles(info); err == nil {
			return info, nil
		}
	}
	info, err := collect(ctx, cfg, dir, makeSim)
	if err != nil {
		return DatasetInfo{}, fmt.Errorf("collect offline dataset in %q: %w", dir, err)
	}
	return info, nil
}

func collect(ctx context.Context, cfg CollectConfig, dir string, makeSim func() (Sim, error)) (DatasetInfo, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return DatasetInfo{}, err
	}
	env, err := makeSim()
	if err != nil {
		return DatasetInfo{}, err
	}
	if c, ok := env.(io.Closer); ok {
		defer c.Close() // a remote simulator's connection
	}
	n, low, _ := env.Actions()
	dims := len(low)
	if n > 0 {
		dims = 1
	}
	info := DatasetInfo{
		Dir: dir, SchemaVersion: DatasetSchemaVersion, Config: cfg,
		ObsDim: env.ObsDim(), NumActions: n, ActionDims: dims, HasSuccess: env.HasSuccess(),
	}
	per := cfg.EpisodesPerFile
	for first := 0; first < cfg.Trajectories; first += per {
		n := min(per, cfg.Trajectories-first)
		name := shardName(first / per)
		path := filepath.Join(dir, name)
		shard, err := readShard(path, cfg, first, n, info.ObsDim, info.ActionDims)
		if err != nil {
			shard, err = collectShard(ctx, cfg, env, first, n)
			if err != nil {
				return DatasetInfo{}, err
			}
			if err := writeShard(path, cfg, first, n, shard); err != nil {
				return DatasetInfo{}, err
			}
		}
		sum, err := runstore.FileSHA256(path)
		if err != nil {
			return DatasetInfo{}, err
		}
		info.Files = append(info.Files, DatasetFile{Name: name, FirstEpisode: first, Episodes: n, Rows: shard.Len(), SHA256: sum})
		info.Episodes += n
		info.Rows += shard.Len()
	}
	if err := removeStaleShards(dir, len(info.Files)); err != nil {
		return DatasetInfo{}, err
	}
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return DatasetInfo{}, err
	}
	if err := runstore.WriteFileAtomic(filepath.Join(dir, ManifestFile), func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	}); err != nil {
		return DatasetInfo{}, err
	}
	return info, nil
}

// collectShard simulates episodes first … first+n−1.
func collectShard(ctx context.Context, cfg CollectConfig, env Sim, first, n int) (*Dataset, error) {
	num, low, high := env.Actions()
	ds := &Dataset{}
	dims := len(low)
	if num > 0 {
		dims = 1
	}
	action := make([]float64, dims)
	for e := first; e < first+n; e++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(e)))
		obs := env.Reset(rng)
		for t := int64(0); ; t++ {
			randomAction(num, low, high, rng, action)
			next, r, term, trunc, success := env.Step(action)
			ds.Episode = append(ds.Episode, int64(e))
			ds.T = append(ds.T, t)
			ds.Obs = append(ds.Obs, obs...)
			ds.Action = append(ds.Action, action...)
			ds.Reward = append(ds.Reward, r)
			ds.Terminated = append(ds.Terminated, term)
			ds.Truncated = append(ds.Truncated, trunc)
			ds.NextObs = append(ds.NextObs, next...)
			ds.Success = append(ds.Success, success && (term || trunc))
			if term || trunc {
				break
			}
			obs = next
		}
	}
	return ds, nil
}

// randomAction fills a with a uniform random action: one of n when n > 0, otherwise a
// vector within [low, high].
func randomAction(n int, low, high []float64, rng *rand.Rand, a []float64) {
	if n > 0 {
		a[0] = float64(rng.IntN(n))
		return
	}
	for j := range a {
		a[j] = low[j] + rng.Float64()*(high[j]-low[j])
	}
}

// Sim is the simulator CollectOffline records. The composition root adapts the engine's
// environments to it (package activities), so this package knows no simulator.
type Sim interface {
	// ObsDim is the observation width.
	ObsDim() int
	// Actions describes the action space: n > 0 discrete actions (passed as one value, the
	// index), or n == 0 and a continuous vector within [low, high].
	Actions() (n int, low, high []float64)
	// HasSuccess says the task has a notion of success.
	HasSuccess() bool
	// Reset starts an episode from rng.
	Reset(rng *rand.Rand) []float64
	// Step applies action; success is meaningful on the step that ends an episode.
	Step(action []float64) (obs []float64, reward float64, terminated, truncated, success bool)
}

// ReadDataset reads the dataset in dir: its manifest, then every shard in
// order, checking each file's SHA-256 and that the shards hold exactly the
// episodes and rows the manifest lists.
func ReadDataset(dir string) (*Dataset, error) {
	info, err := readManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("read dataset %q: %w", dir, err)
	}
	ds := &Dataset{Info: info}
	for _, f := range info.Files {
		path := filepath.Join(dir, f.Name)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read dataset %q: %w", dir, err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.SHA256 {
			return nil, fmt.Errorf("read dataset %q: %s does not match its checksum in %s", dir, f.Name, ManifestFile)
		}
		shard, err := decodeShard(data, info.Config, f.FirstEpisode, f.Episodes, info.ObsDim, info.ActionDims)
		if err != nil {
			return nil, fmt.Errorf("read dataset %q: %s: %w", dir, f.Name, err)
		}
		if shard.Len() != f.Rows {
			return nil, fmt.Errorf("read dataset %q: %s has %d rows, manifest says %d", dir, f.Name, shard.Len(), f.Rows)
		}
		ds.append(shard)
	}
	if ds.Len() != info.Rows {
		return nil, fmt.Errorf("read dataset %q: %d rows, manifest says %d", dir, ds.Len(), info.Rows)
	}
	return ds, nil
}

func (d *Dataset) append(o *Dataset) {
	d.Episode = append(d.Episode, o.Episode...)
	d.T = append(d.T, o.T...)
	d.Obs = append(d.Obs, o.Obs...)
	d.Action = append(d.Action, o.Action...)
	d.Reward = append(d.Reward, o.Reward...)
	d.Terminated = append(d.Terminated, o.Terminated...)
	d.Truncated = append(d.Truncated, o.Truncated...)
	d.NextObs = append(d.NextObs, o.NextObs...)
	d.Success = append(d.Success, o.Success...)
	d.prev = nil
}

func readManifest(dir string) (DatasetInfo, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return DatasetInfo{}, err
	}
	var info DatasetInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return DatasetInfo{}, fmt.Errorf("%s: %w", ManifestFile, err)
	}
	if info.SchemaVersion != DatasetSchemaVersion {
		return DatasetInfo{}, fmt.Errorf("%s: schema version %q, want %q", ManifestFile, info.SchemaVersion, DatasetSchemaVersion)
	}
	info.Dir = dir
	return info, nil
}

// verifyFiles checks every file of info against its checksum.
func verifyFiles(info DatasetInfo) error {
	for _, f := range info.Files {
		sum, err := runstore.FileSHA256(filepath.Join(info.Dir, f.Name))
		if err != nil {
			return err
		}
		if sum != f.SHA256 {
			return fmt.Errorf("%s does not match its checksum", f.Name)
		}
	}
	return nil
}

// shardName is the file name of shard i: "part-000000.arrow".
func shardName(i int) string { return fmt.Sprintf("part-%06d.arrow", i) }

// removeStaleShards deletes shard files with an index >= n, left over from
// a config with more trajectories.
func removeStaleShards(dir string, n int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		var i int
		if _, err := fmt.Sscanf(e.Name(), "part-%06d.arrow", &i); err != nil || shardName(i) != e.Name() || i < n {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
