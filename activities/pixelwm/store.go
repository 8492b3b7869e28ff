package pixelwm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"

	"github.com/accerl/accerl/activities/demos"
	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/testenv/tabletop"
)

// Store layout: one Arrow IPC file per task in activities/demos' schema
// (task-NN.arrow, one row per frame: the state, proprio, images and
// instruction of frame t, the action executed after it — zeros on an
// episode's last frame, which no action follows — its reward and the
// terminated/truncated flags on the row whose action ended the episode;
// the success column is the episode's outcome), and StoreManifest, written
// last, with the CollectInput and every file's SHA-256. Load rebuilds the
// per-frame labels from the flags (see Episode.Success).
const StoreManifest = "pixelwm.json"

// StoreInfo is the manifest of a stored offline dataset.
type StoreInfo struct {
	Collect  CollectInput `json:"collect"`
	Episodes int          `json:"episodes"`
	Files    []demos.File `json:"files"`
}

// demosConfig is the demos config of task files holding n episodes of in.
func demosConfig(in CollectInput, n int) demos.Config {
	return demos.Config{Suite: in.Suite, PerTask: n, Images: true, ImageSize: in.ImageSize, Cameras: in.Cameras, Seed: in.Seed}
}

// Save writes episodes collected with in to dir (created if needed).
func Save(dir string, in CollectInput, eps []Episode) error {
	if len(eps) == 0 {
		return fmt.Errorf("save pixel offline data: no episodes to save")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save pixel offline data: %w", err)
	}
	info := StoreInfo{Collect: in, Episodes: len(eps)}
	for task := range tabletop.TaskCount(in.Suite) {
		d, n := &demos.Demos{Images: make([][]byte, len(eps[0].Frames[0]))}, 0
		for _, ep := range eps {
			if ep.Task != task {
				continue
			}
			appendRows(d, ep, n)
			n++
		}
		if n == 0 {
			continue
		}
		f := demos.File{Name: fmt.Sprintf("task-%02d.arrow", task), Task: task, Episodes: n, Rows: d.Len()}
		path := filepath.Join(dir, f.Name)
		if err := demos.WriteTaskFile(path, demosConfig(in, n), task, d); err != nil {
			return fmt.Errorf("save pixel offline data: %w", err)
		}
		sum, err := runstore.FileSHA256(path)
		if err != nil {
			return fmt.Errorf("save pixel offline data: %w", err)
		}
		f.SHA256 = sum
		for i := range d.Len() {
			if d.T[i] == 0 && d.Success[i] {
				f.Successes++
			}
		}
		info.Files = append(info.Files, f)
	}
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return runstore.WriteFileAtomic(filepath.Join(dir, StoreManifest), func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	})
}

// appendRows adds episode ep (the e-th of its task) to d, one row per
// frame.
func appendRows(d *demos.Demos, ep Episode, e int) {
	for t := range ep.Len() {
		a, r := make([]float64, tabletop.ActionDim), 0.0
		if t < len(ep.Actions) {
			a, r = ep.Actions[t], ep.Rewards[t]
		}
		ends := t+1 == ep.Steps
		d.Task, d.Episode, d.T = append(d.Task, ep.Task), append(d.Episode, e), append(d.T, t)
		d.State, d.Proprio, d.Action = append(d.State, ep.State[t]...), append(d.Proprio, ep.Proprio[t]...), append(d.Action, a...)
		d.Reward = append(d.Reward, r)
		d.Terminated, d.Truncated = append(d.Terminated, ends && ep.Succeeded), append(d.Truncated, ends && !ep.Succeeded)
		d.Success, d.Instr = append(d.Success, ep.Succeeded), append(d.Instr, ep.Instr)
		for c, f := range ep.Frames[t] {
			d.Images[c] = append(d.Images[c], f...)
		}
	}
}

// Load reads a dataset Save wrote, checking every file's SHA-256 against
// the manifest. The episodes come back grouped by task.
func Load(dir string) (CollectInput, []Episode, error) {
	var info StoreInfo
	data, err := os.ReadFile(filepath.Join(dir, StoreManifest))
	if err != nil {
		return CollectInput{}, nil, fmt.Errorf("load pixel offline data: %w (collect it with Save first)", err)
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return CollectInput{}, nil, fmt.Errorf("load pixel offline data: decode %s: %w", StoreManifest, err)
	}
	in := info.Collect
	var eps []Episode
	for _, f := range info.Files {
		path := filepath.Join(dir, f.Name)
		if sum, err := runstore.FileSHA256(path); err != nil || sum != f.SHA256 {
			return in, nil, fmt.Errorf("load pixel offline data: %s is missing or changed since it was written (SHA-256 %.12s, manifest %.12s, %v); collect it again", path, sum, f.SHA256, err)
		}
		d, err := demos.ReadTaskFile(path, demosConfig(in, f.Episodes), f.Task)
		if err != nil {
			return in, nil, fmt.Errorf("load pixel offline data: %w", err)
		}
		eps = append(eps, episodesOf(d)...)
	}
	if len(eps) != info.Episodes {
		return in, nil, fmt.Errorf("load pixel offline data: %d episodes in the files, the manifest says %d", len(eps), info.Episodes)
	}
	return in, eps, nil
}

// episodesOf splits a task file's rows back into episodes.
func episodesOf(d *demos.Demos) []Episode {
	var out []Episode
	px := 0
	if d.Len() > 0 {
		px = len(d.Images[0]) / d.Len()
	}
	for i := 0; i < d.Len(); i++ {
		if d.T[i] == 0 {
			out = append(out, Episode{Task: d.Task[i], Instr: d.Instr[i], Succeeded: d.Success[i]})
		}
		ep := &out[len(out)-1]
		frame := make([][]uint8, len(d.Images))
		for c := range d.Images {
			frame[c] = d.Images[c][i*px : (i+1)*px : (i+1)*px]
		}
		ep.Frames = append(ep.Frames, frame)
		ep.State = append(ep.State, d.State[i*tabletop.ObsDim:(i+1)*tabletop.ObsDim])
		ep.Proprio = append(ep.Proprio, d.Proprio[i*tabletop.ProprioDim:(i+1)*tabletop.ProprioDim])
		if d.Terminated[i] || d.Truncated[i] {
			ep.Steps = d.T[i] + 1
		}
		last := i+1 == d.Len() || d.T[i+1] == 0
		if !last {
			ep.Actions = append(ep.Actions, d.Action[i*tabletop.ActionDim:(i+1)*tabletop.ActionDim])
			ep.Rewards = append(ep.Rewards, d.Reward[i])
		}
		if last {
			ep.label()
		}
	}
	return out
}

// CollectOrLoad returns the episodes of in: read from dir when it holds a
// dataset Save wrote for the same input, else collected and, when dir is
// not empty, saved there (replacing what was there). loaded says which.
func CollectOrLoad(ctx context.Context, in CollectInput, dir string) (eps []Episode, loaded bool, err error) {
	if dir != "" {
		if got, eps, err := Load(dir); err == nil && reflect.DeepEqual(got, in) {
			return eps, true, nil
		}
	}
	if eps, err = Collect(ctx, in); err != nil {
		return nil, false, err
	}
	if dir != "" {
		if err := Save(dir, in, eps); err != nil {
			return nil, false, err
		}
	}
	return eps, false, nil
}
