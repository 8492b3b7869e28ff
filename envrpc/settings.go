package envrpc

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	pb "github.com/accerl/accerl/envrpc/dmenvrpc"
)

// Settings keys. CreateWorld takes SettingWorld (which world to build, default
// testenv's "cartpole"), SettingSeed (the stream that seeds resets without one of their
// own), SettingMaxEpisodeSteps, and a tabletop world SettingSuite, SettingTasks,
// SettingImageSize, SettingCameras and SettingPixels (offer the "frame" observation).
// Reset takes SettingSeed (the episode's seed) or, on a tabletop world, SettingTask and
// SettingInitState (start from one of the suite's fixed initial states). ResetWorld takes
// SettingSeed.
const (
	SettingWorld           = "world"
	SettingSeed            = "seed"
	SettingMaxEpisodeSteps = "max_episode_steps"
	SettingSuite           = "suite"
	SettingTasks           = "tasks"
	SettingImageSize       = "image_size"
	SettingCameras         = "cameras"
	SettingPixels          = "pixels"
	SettingTask            = "task"
	SettingInitState       = "init_state"
)

// Settings are the named tensors of a CreateWorld, JoinWorld, Reset or ResetWorld request.
// The readers return the default (or the zero value) for an absent key and an error naming
// the key for a tensor of the wrong kind.
type Settings map[string]*pb.Tensor

// Check reports the first key that is not among known.
func (s Settings) Check(known ...string) error {
	var bad []string
	for k := range s {
		if !slices.Contains(known, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	sort.Strings(known)
	return fmt.Errorf("unknown setting %q (known: %s)", bad[0], strings.Join(known, ", "))
}

// String reads a string scalar.
func (s Settings) String(key, def string) (string, error) {
	return read(s, key, def, func(t *pb.Tensor) (string, error) { return one(AsStrings(t)) })
}

// Strings reads a string vector.
func (s Settings) Strings(key string) ([]string, error) { return read(s, key, nil, AsStrings) }

// Int reads an integer scalar.
func (s Settings) Int(key string, def int) (int, error) {
	return read(s, key, def, func(t *pb.Tensor) (int, error) { return one(AsInts(t)) })
}

// Ints reads an integer vector.
func (s Settings) Ints(key string) ([]int, error) { return read(s, key, nil, AsInts) }

// Bool reads a bool scalar.
func (s Settings) Bool(key string) (bool, error) { return read(s, key, false, AsBool) }

// read decodes setting key with conv, def when it is absent.
func read[T any](s Settings, key string, def T, conv func(*pb.Tensor) (T, error)) (T, error) {
	t, ok := s[key]
	if !ok {
		return def, nil
	}
	v, err := conv(t)
	if err != nil {
		return def, fmt.Errorf("setting %q: %w", key, err)
	}
	return v, nil
}

// one is the only element of a tensor read as a vector.
func one[T any](v []T, err error) (T, error) {
	var zero T
	if err == nil && len(v) != 1 {
		err = fmt.Errorf("%d elements, want one", len(v))
	}
	if err != nil {
		return zero, err
	}
	return v[0], nil
}

// Seed reads a seed: a uint64 or int64 scalar, read exactly (a seed of NumPy's is often an
// int64), or any integral scalar. ok is false when the key is absent.
func (s Settings) Seed(key string) (seed uint64, ok bool, err error) {
	t, ok := s[key]
	if !ok {
		return 0, false, nil
	}
	switch p := t.Payload.(type) {
	case *pb.Tensor_Uint64S:
		if a := p.Uint64S.GetArray(); len(a) == 1 {
			return a[0], true, nil
		}
	case *pb.Tensor_Int64S:
		if a := p.Int64S.GetArray(); len(a) == 1 {
			return uint64(a[0]), true, nil
		}
	default:
		v, err := s.Int(key, 0)
		return uint64(v), true, err
	}
	return 0, true, fmt.Errorf("setting %q: want one integer", key)
}
