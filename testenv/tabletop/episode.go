package tabletop

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// sheetFrames is the most frames a contact sheet shows, evenly spaced over
// the episode (first and last included), in rows of sheetCols.
const (
	sheetFrames = 24
	sheetCols   = 6
)

// EpisodeRecord is what RenderEpisode wrote.
type EpisodeRecord struct {
	Suite       string `json:"suite"`
	Task        int    `json:"task"`
	Instruction string `json:"instruction"`
	Steps       int    `json:"steps"`
	Success     bool   `json:"success"`
	// Sheet is the contact sheet's path; FrameDirs the per-camera frame
	// folders, in Config.Cameras order.
	Sheet     string   `json:"sheet"`
	FrameDirs []string `json:"frame_dirs"`
}

// RenderEpisode plays one episode of task from fixed initial state 0,
// with the expert or (expert false) with uniformly random actions from a
// fixed seed, and writes every frame of every camera as
// outDir/<camera>/NNNN.png plus outDir/contact.png, a grid of up to 24
// frames with the cameras side by side.
func RenderEpisode(cfg Config, task int, expert bool, outDir string) (EpisodeRecord, error) {
	frames, rec, err := playFrames(cfg, task, expert)
	if err != nil {
		return rec, fmt.Errorf("render episode: %w", err)
	}
	env, _ := New(cfg)
	size := env.cfg.ImageSize
	for c, name := range env.cfg.Cameras {
		dir := filepath.Join(outDir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return rec, fmt.Errorf("render episode: %w", err)
		}
		for i, f := range frames {
			if err := WritePNG(filepath.Join(dir, fmt.Sprintf("%04d.png", i)), RGBImage(f[c], size)); err != nil {
				return rec, fmt.Errorf("render episode: %w", err)
			}
		}
		rec.FrameDirs = append(rec.FrameDirs, dir)
	}
	rec.Sheet = filepath.Join(outDir, "contact.png")
	if err := WriteContactSheet(rec.Sheet, frames, size); err != nil {
		return rec, fmt.Errorf("render episode: %w", err)
	}
	return rec, nil
}

// WriteContactSheet writes up to 24 evenly spaced frames (each a list of
// per-camera RGB buffers of side size) as one PNG grid.
func WriteContactSheet(path string, frames [][][]uint8, size int) error {
	pick := frames
	if len(frames) > sheetFrames {
		pick = make([][][]uint8, sheetFrames)
		for i := range pick {
			pick[i] = frames[i*(len(frames)-1)/(sheetFrames-1)]
		}
	}
	return WritePNG(path, contactSheet(pick, size, min(sheetCols, len(pick))))
}

// playFrames plays the episode RenderEpisode describes and returns every
// frame, the first (after Reset) included.
func playFrames(cfg Config, task int, expert bool) ([][][]uint8, EpisodeRecord, error) {
	cfg.Render = true
	env, err := New(cfg)
	if err != nil {
		return nil, EpisodeRecord{}, err
	}
	if err := ValidateTask(cfg.Suite, task); err != nil {
		return nil, EpisodeRecord{}, err
	}
	rec := EpisodeRecord{Suite: cfg.Suite, Task: task, Instruction: Instruction(cfg.Suite, task)}
	snap := func() [][]uint8 {
		var f [][]uint8
		for _, img := range env.Images() {
			f = append(f, append([]uint8(nil), img...))
		}
		return f
	}
	env.ResetTo(task, 0)
	frames := [][][]uint8{snap()}
	x := NewExpert(uint64(task))
	rng := rand.New(rand.NewPCG(uint64(task), 0x72616e646f6d))
	for {
		var a []float64
		if expert {
			a = x.Act(env)
		} else {
			a = make([]float64, ActionDim)
			for i := range a {
				a[i] = 2*rng.Float64() - 1
			}
		}
		_, _, term, trunc := env.Step(a)
		frames = append(frames, snap())
		if term || trunc {
			rec.Steps, rec.Success = env.steps, term
			return frames, rec, nil
		}
	}
}
