// Command pixeldemo trains the EDM observation model of package
// kernels/edm on scripted-expert episodes of the tabletop "spatial" suite
// (one 32×32 agentview camera) for a fixed wall-clock budget, then imagines
// H steps open loop from real frames of held-out episodes with their
// recorded actions. It writes a PNG strip (real row over imagined row) and
// a JSON file with the loss curve, the per-step MSE of the imagined frames
// against the real ones and that of the copy-last-frame baseline.
//
//	go run ./kernels/edm/internal/pixeldemo -minutes 9 -out docs/results/world-model
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/accerl/accerl/activities/bc"
	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/testenv/tabletop"
)

// result is the JSON the demo writes.
type result struct {
	Config        edm.Config      `json:"config"`
	EDM           edm.EDM         `json:"edm"`
	Train         edm.TrainConfig `json:"train"`
	Params        int             `json:"params"`
	Episodes      int             `json:"train_episodes"`
	Samples       int             `json:"train_samples"`
	CollectSec    float64         `json:"collect_seconds"`
	TrainSec      float64         `json:"train_seconds"`
	Steps         int             `json:"train_steps"`
	LossEvery     int             `json:"loss_every"`
	Loss          []float64       `json:"loss_curve"` // mean minibatch loss over each LossEvery steps
	Horizon       int             `json:"horizon"`
	Starts        int             `json:"rollouts"`
	ImagineSec    float64         `json:"imagine_seconds"`
	MSE           []float64       `json:"per_step_mse"`           // imagined vs real, [−1, 1] units, mean over rollouts
	CopyLastMSE   []float64       `json:"copy_last_per_step_mse"` // last real context frame vs real
	StripRollout  int             `json:"strip_rollout"`
	StripStartIdx int             `json:"strip_start_step"`
}

func main() {
	minutes := flag.Float64("minutes", 9, "training wall-clock budget; more minutes, more Adam steps")
	perTask := flag.Int("per-task", 2, "expert episodes per spatial task (10 tasks); one more per task is held out for the rollouts")
	horizon := flag.Int("horizon", 8, "imagined steps per rollout")
	out := flag.String("out", "docs/results/world-model", "directory for pixel-strip.png and pixel-rollout.json")
	seed := flag.Uint64("seed", 1, "seed of the demonstrations, weights, minibatches and sampling noise")
	flag.Parse()
	if err := run(*minutes, *perTask, *horizon, *out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "pixeldemo:", err)
		os.Exit(1)
	}
}

func run(minutes float64, perTask, horizon int, out string, seed uint64) error {
	t0 := time.Now()
	tasks := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	demos, err := bc.CollectImages(bc.ImageCollectInput{
		CollectInput: bc.CollectInput{Suite: tabletop.SuiteSpatial, Tasks: tasks, PerTask: perTask + 1, Seed: seed},
		ImageSize:    32, Cameras: []string{tabletop.CameraAgentview}})
	if err != nil {
		return fmt.Errorf("collect demonstrations: %w", err)
	}
	collect := time.Since(t0).Seconds()
	cfg := edm.DefaultConfig(1, tabletop.ActionDim)
	var train, held []bc.ImageDemo
	for i, d := range demos {
		if i%(perTask+1) == perTask {
			held = append(held, d)
		} else {
			train = append(train, d)
		}
	}
	var data []edm.Sample
	for _, d := range train {
		data = append(data, transitions(cfg, d)...)
	}
	fmt.Printf("collected %d episodes (%d train, %d held out) in %.1fs: %d training transitions\n",
		len(demos), len(train), len(held), collect, len(data))

	e := edm.DefaultEDM()
	tc := edm.DefaultTrainConfig(seed)
	tr, err := edm.NewTrainer(cfg, e, tc, nil)
	if err != nil {
		return err
	}
	res := result{Config: cfg, EDM: e, Train: tc, Params: len(tr.Net.Params()), Episodes: len(train),
		Samples: len(data), CollectSec: collect, LossEvery: 10, Horizon: horizon}
	budget := time.Duration(minutes * float64(time.Minute))
	start, acc := time.Now(), 0.0
	for time.Since(start) < budget {
		l, err := tr.Step(data)
		if err != nil {
			return err
		}
		acc += l
		if tr.Steps%res.LossEvery == 0 {
			res.Loss = append(res.Loss, acc/float64(res.LossEvery))
			acc = 0
			fmt.Printf("step %d  loss %.4f  (%.0fs)\n", tr.Steps, res.Loss[len(res.Loss)-1], time.Since(start).Seconds())
		}
	}
	res.Steps, res.TrainSec = tr.Steps, time.Since(start).Seconds()

	// Open-loop rollouts: one per held-out episode, from step 20 (the arm
	// is moving toward the bowl by then).
	start = time.Now()
	rng := rand.New(rand.NewPCG(seed, 2))
	res.MSE, res.CopyLastMSE = make([]float64, horizon), make([]float64, horizon)
	var stripReal, stripImag []edm.Frame
	for r, d := range held {
		t := min(20, len(d.Images)-horizon-1)
		if t < cfg.History-1 {
			continue
		}
		past := make([][]edm.Frame, 0, cfg.History)
		for j := t - cfg.History + 1; j <= t; j++ {
			past = append(past, d.Images[j])
		}
		imag := tr.Net.Imagine(e, past, d.Actions[t:t+horizon], rng)
		for h := range horizon {
			real := d.Images[t+1+h][0]
			res.MSE[h] += mse(imag[h][0], real)
			res.CopyLastMSE[h] += mse(d.Images[t][0], real)
		}
		res.Starts++
		if r == 0 {
			res.StripRollout, res.StripStartIdx = r, t
			stripReal = append(stripReal, d.Images[t][0])
			stripImag = append(stripImag, d.Images[t][0])
			for h := range horizon {
				stripReal = append(stripReal, d.Images[t+1+h][0])
				stripImag = append(stripImag, imag[h][0])
			}
		}
	}
	for h := range horizon {
		res.MSE[h] /= float64(res.Starts)
		res.CopyLastMSE[h] /= float64(res.Starts)
	}
	res.ImagineSec = time.Since(start).Seconds()
	fmt.Printf("per-step MSE imagined %v\ncopy-last %v\n", fmtList(res.MSE), fmtList(res.CopyLastMSE))

	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeStrip(filepath.Join(out, "pixel-strip.png"), cfg.ImageSize, stripReal, stripImag); err != nil {
		return err
	}
	js, _ := json.MarshalIndent(res, "", "  ")
	return os.WriteFile(filepath.Join(out, "pixel-rollout.json"), append(js, '\n'), 0o644)
}

// transitions turns an episode into (k past frames, action, next frame)
// samples, from the first step that has k frames of history.
func transitions(c edm.Config, d bc.ImageDemo) []edm.Sample {
	var out []edm.Sample
	for t := c.History - 1; t+1 < len(d.Images); t++ {
		s := edm.Sample{Action: d.Actions[t], Next: d.Images[t+1]}
		for j := t - c.History + 1; j <= t; j++ {
			s.Past = append(s.Past, d.Images[j])
		}
		out = append(out, s)
	}
	return out
}

// mse is the mean squared difference of two frames in [−1, 1] units.
func mse(a, b edm.Frame) float64 {
	s := 0.0
	for i := range a {
		d := (float64(a[i]) - float64(b[i])) / 127.5
		s += d * d
	}
	return s / float64(len(a))
}

func fmtList(x []float64) string {
	s := ""
	for _, v := range x {
		s += fmt.Sprintf(" %.4f", v)
	}
	return s
}

// writeStrip writes the real frames over the imagined ones, each scaled 4×
// with a 4-pixel white gutter.
func writeStrip(path string, side int, rows ...[]edm.Frame) error {
	const zoom, gap = 4, 4
	cols := len(rows[0])
	cell := side*zoom + gap
	img := image.NewRGBA(image.Rect(0, 0, cols*cell+gap, len(rows)*cell+gap))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for r, row := range rows {
		for c, f := range row {
			for y := 0; y < side*zoom; y++ {
				for x := 0; x < side*zoom; x++ {
					p := 3 * ((y/zoom)*side + x/zoom)
					img.Set(gap+c*cell+x, gap+r*cell+y, color.RGBA{f[p], f[p+1], f[p+2], 255})
				}
			}
		}
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(fh, img); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
