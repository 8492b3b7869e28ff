package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/accerl/accerl/activities/bc"
	"github.com/accerl/accerl/activities/demos"
	"github.com/accerl/accerl/testenv/tabletop"
)

// runCLI runs one command line and returns its stdout, stderr and error.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return img
}

// render writes one decodable PNG of the configured size per camera and frame (the frame after
// the reset and one per step) and a contact sheet larger than a frame.
func TestRenderWritesFramesAndSheet(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, err := runCLI(t, "render", "--suite", "spatial", "--task", "2", "--expert", "--image-size", "32", "--out", dir)
	if err != nil {
		t.Fatalf("render: %v\n%s%s", err, stdout, stderr)
	}
	if want := tabletop.Instruction("spatial", 2); !strings.Contains(stdout, want) {
		t.Errorf("output does not show the instruction %q:\n%s", want, stdout)
	}
	if !strings.Contains(stdout, "succeeded") || !strings.Contains(stdout, "Contact sheet: "+filepath.Join(dir, "contact.png")) {
		t.Errorf("output does not report the expert's success and the contact sheet:\n%s", stdout)
	}
	var frames []int
	for _, cam := range tabletop.Cameras() {
		files, err := filepath.Glob(filepath.Join(dir, cam, "*.png"))
		if err != nil || len(files) < 2 {
			t.Fatalf("%s: %d frames (%v)", cam, len(files), err)
		}
		frames = append(frames, len(files))
		for _, f := range []string{files[0], files[len(files)-1]} {
			if b := decodePNG(t, f).Bounds(); b.Dx() != 32 || b.Dy() != 32 {
				t.Errorf("%s is %v, want 32×32", f, b)
			}
		}
	}
	if frames[0] != frames[1] {
		t.Errorf("cameras have %v frames, want the same number", frames)
	}
	if !strings.Contains(stdout, "Episode: "+strconv.Itoa(frames[0]-1)+" steps") {
		t.Errorf("%d frames, but the output says:\n%s", frames[0], stdout)
	}
	if b := decodePNG(t, filepath.Join(dir, "contact.png")).Bounds(); b.Dx() <= 2*32 || b.Dy() <= 32 {
		t.Errorf("contact sheet is %v, want several 2×32-pixel frames", b)
	}
}

// From initial state 0 the CLI's renderer writes exactly tabletop.RenderEpisode's files, with
// the expert and with random actions.
func TestRenderMatchesRenderEpisode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    tabletop.Config
		task   int
		expert bool
	}{
		{"expert", tabletop.Config{Suite: "goal", Tasks: []int{0}, ImageSize: 16}, 0, true},
		{"random", tabletop.Config{Suite: "object", Tasks: []int{4}, ImageSize: 16, MaxEpisodeSteps: 12}, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours, theirs := t.TempDir(), t.TempDir()
			act := randomAct(tc.task)
			if tc.expert {
				act = expertAct(tc.task)
			}
			got, err := renderEpisode(context.Background(), tc.cfg, tc.task, 0, act, ours)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tabletop.RenderEpisode(tc.cfg, tc.task, tc.expert, theirs)
			if err != nil {
				t.Fatal(err)
			}
			if got.Steps != want.Steps || got.Success != want.Success || got.Instruction != want.Instruction {
				t.Fatalf("episode %+v, RenderEpisode's %+v", got, want)
			}
			files, _ := filepath.Glob(filepath.Join(theirs, "*", "*.png"))
			files = append(files, filepath.Join(theirs, "contact.png"))
			if len(files) != 2*(want.Steps+1)+1 {
				t.Fatalf("RenderEpisode wrote %d files for %d steps", len(files), want.Steps)
			}
			for _, f := range files {
				rel, _ := filepath.Rel(theirs, f)
				a, errA := os.ReadFile(filepath.Join(ours, rel))
				b, errB := os.ReadFile(f)
				if errA != nil || errB != nil || !bytes.Equal(a, b) {
					t.Fatalf("%s differs from RenderEpisode's (%v, %v)", rel, errA, errB)
				}
			}
		})
	}
}

// --init starts from another fixed initial state: another layout, so another first frame.
func TestRenderInitState(t *testing.T) {
	cfg := tabletop.Config{Suite: "spatial", Tasks: []int{0}, ImageSize: 32, MaxEpisodeSteps: 1}
	a, b := t.TempDir(), t.TempDir()
	for i, dir := range []string{a, b} {
		if _, err := renderEpisode(context.Background(), cfg, 0, 7*i, randomAct(0), dir); err != nil {
			t.Fatal(err)
		}
	}
	fa, _ := os.ReadFile(filepath.Join(a, tabletop.CameraAgentview, "0000.png"))
	fb, _ := os.ReadFile(filepath.Join(b, tabletop.CameraAgentview, "0000.png"))
	if len(fa) == 0 || bytes.Equal(fa, fb) {
		t.Error("initial states 0 and 7 render the same first frame")
	}
}

// render --policy plays a cloned VLA: the frames it writes are the states the clone reached
// in its own env (compared, at the clone's image size, with the clone played alone), and a
// clone beside the expert or a missing file is a clear error.
func TestRenderPolicy(t *testing.T) {
	cfg := bc.DefaultVLAConfig()
	cfg.Dim, cfg.Layers, cfg.Heads, cfg.Seed = 16, 1, 2, 7
	m, err := bc.NewVLAModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "clone.model")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	const task, init, steps = 3, 5, 9

	// The clone alone, on its own env, for the same steps.
	env, err := tabletop.New(tabletop.Config{Suite: "spatial", Tasks: []int{task}, ImageSize: cfg.ImageSize, MaxEpisodeSteps: steps})
	if err != nil {
		t.Fatal(err)
	}
	env.ResetTo(task, init)
	actor, out := m.Actor(), [][]float64{make([]float64, tabletop.ActionDim)}
	for {
		actor.Act([]*tabletop.Env{env}, nil, []int{0}, out)
		if _, _, term, trunc := env.Step(out[0]); term || trunc {
			break
		}
	}
	want := tabletop.RGBImage(env.Images()[0], cfg.ImageSize)

	model := new(bc.VLAModel)
	if err := model.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	act, err := cloneAct(model, "spatial", task, init)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rec, err := renderEpisode(context.Background(), tabletop.Config{Suite: "spatial", Tasks: []int{task}, ImageSize: cfg.ImageSize, MaxEpisodeSteps: steps}, task, init, act, dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Steps != steps {
		t.Fatalf("rendered %d steps, want the limit %d", rec.Steps, steps)
	}
	got := decodePNG(t, filepath.Join(dir, tabletop.CameraAgentview, fmt.Sprintf("%04d.png", steps)))
	if !got.Bounds().Eq(want.Bounds()) {
		t.Fatalf("last frame %v, want %v", got.Bounds(), want.Bounds())
	}
	for y := range want.Bounds().Dy() {
		for x := range want.Bounds().Dx() {
			if got.At(x, y) != want.At(x, y) {
				t.Fatalf("last frame differs from the clone's own at (%d,%d): %v vs %v", x, y, got.At(x, y), want.At(x, y))
			}
		}
	}

	// Through the CLI: a larger rendering of the same clone, then the errors.
	var stdout, stderr bytes.Buffer
	big := t.TempDir()
	if err := run(context.Background(), []string{"render", "--suite", "spatial", "--task", "3", "--init", "5", "--policy", file, "--image-size", "64", "--out", big}, &stdout, &stderr); err != nil {
		t.Fatalf("render --policy: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "the clone "+file) || !strings.Contains(stdout.String(), "Episode: ") {
		t.Errorf("output does not name the clone and the episode:\n%s", stdout.String())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--expert", "--policy", file}, "choose one"},
		{[]string{"--policy", filepath.Join(big, "missing")}, "give a run directory"},
	} {
		err := run(context.Background(), append([]string{"render", "--suite", "spatial", "--out", t.TempDir()}, tc.args...), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("render %v: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}

// bench expert on one suite with few initial states prints the per-task and per-suite tables and
// writes JSON in tabletop.BenchResult's shape.
func TestBenchExpertTableAndJSON(t *testing.T) {
	out := filepath.Join(t.TempDir(), "expert.json")
	stdout, stderr, err := runCLI(t, "bench", "expert", "--suite", "object", "--init-states", "2", "--image-size", "16", "--json", out)
	if err != nil {
		t.Fatalf("bench expert: %v\n%s%s", err, stdout, stderr)
	}
	for _, want := range []string{"object: success", "task  success  mean length  episodes  instruction", tabletop.Instruction("object", 9), "rendered steps/s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Suites []struct {
			Suite           string  `json:"suite"`
			SuccessRate     float64 `json:"success_rate"`
			StepsPerS       float64 `json:"steps_per_s"`
			RenderStepsPerS float64 `json:"render_steps_per_s"`
			ImageSize       int     `json:"image_size"`
			Tasks           []struct {
				Task     int `json:"task"`
				Episodes int `json:"episodes"`
			} `json:"tasks"`
		} `json:"suites"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("parse %s: %v\n%s", out, err, b)
	}
	if len(res.Suites) != 1 {
		t.Fatalf("%d suites in the JSON, want 1", len(res.Suites))
	}
	s := res.Suites[0]
	if s.Suite != "object" || len(s.Tasks) != tabletop.TasksPerSuite || s.Tasks[9].Task != 9 || s.Tasks[9].Episodes != 2 {
		t.Errorf("JSON suite %+v, want object with 10 tasks of 2 episodes", s)
	}
	// The expert solves every task (testenv/tabletop's tests hold it to that); here a zero
	// would mean the wiring lost the results.
	if s.SuccessRate <= 0 || s.StepsPerS <= 0 || s.RenderStepsPerS <= 0 || s.ImageSize != 16 {
		t.Errorf("JSON suite %+v, want positive success and step rates at image size 16", s)
	}
}

// Bad input fails before any work, with a message that names the valid values.
func TestTabletopAndBenchFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"render"}, "--suite is required (known: goal, long, object, spatial)"},
		{[]string{"render", "--suite", "kitchen"}, `unknown suite "kitchen" (known: goal, long, object, spatial)`},
		{[]string{"render", "--suite", "goal", "--task", "10"}, `task 10 is out of range: suite "goal" has tasks 0..9`},
		{[]string{"render", "--suite", "goal", "--task", "-1"}, "task -1 is out of range"},
		{[]string{"render", "--suite", "goal", "--image-size", "48"}, "image size 48 is not a power of two between 16 and 256"},
		{[]string{"render", "--suite", "goal", "--init", "50"}, "init state 50 is out of range: each task has fixed initial states 0..49"},
		{[]string{"render", "goal"}, `unexpected argument "goal"`},
		{[]string{"bench", "expert", "--suite", "spatial,kitchen"}, `unknown suite "kitchen" (known: goal, long, object, spatial), or all`},
		{[]string{"bench", "expert", "--init-states", "51"}, "--init-states 51 is out of range 1..50"},
		{[]string{"bench", "expert", "--image-size", "300"}, "image size 300 is not a power of two"},
		{[]string{"bench", "kernels", "--min-time", "0s"}, "--min-time must be positive"},
		{[]string{"bench", "kernels", "--shapes", "square-2048"}, `unknown shape "square-2048" (known: vla-mlp-up,`},
		{[]string{"bench", "vla", "--preset", "huge"}, `unknown preset "huge" (known: default, small)`},
		{[]string{"bench", "vla", "--batch", "1,0"}, `"0" is not a positive batch size`},
		{[]string{"bench", "gpu"}, `unknown benchmark "gpu"; choose throughput, learn, sample-efficiency, expert, kernels, vla or bc`},
	} {
		_, _, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	// -h prints every flag with its help and exits cleanly.
	for _, args := range [][]string{{"render", "-h"}, {"bench", "expert", "-h"}, {"bench", "kernels", "-h"}, {"bench", "vla", "-h"}} {
		_, stderr, err := runCLI(t, args...)
		var ec exitCode
		if !errors.As(err, &ec) || ec != 0 || !strings.Contains(stderr, "Usage: accerl "+strings.Join(args[:len(args)-1], " ")) {
			t.Errorf("%v: error %v, usage:\n%s", args, err, stderr)
		}
	}
	stdout, _, _ := runCLI(t, "--help")
	for _, want := range []string{"render ", "bench expert", "bench kernels", "bench vla"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("accerl --help does not list %q", want)
		}
	}
}

func TestDemosWritesAReadableDataset(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runCLI(t, "demos", "--suite", "goal", "--per-task", "1", "--image-size", "16", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Wrote 10 demonstrations") || !strings.Contains(out, "10 succeeded") {
		t.Errorf("output %q does not report 10 successful demonstrations", out)
	}
	d, err := demos.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Info.Episodes != 10 || len(d.Images) != 2 || d.Info.Config.ImageSize != 16 {
		t.Errorf("dataset: %d episodes, %d cameras, %d px", d.Info.Episodes, len(d.Images), d.Info.Config.ImageSize)
	}
	if _, _, err := runCLI(t, "demos", "--suite", "kitchen"); err == nil || !strings.Contains(err.Error(), "known: goal, long, object, spatial") {
		t.Errorf("unknown suite: err = %v, want the known suites named", err)
	}
}
