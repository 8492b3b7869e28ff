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
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/accerl/accerl/activities/bc"
	"github.com/accerl/accerl/activities/pixelwm"
	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/testenv/tabletop"
)

// result is the JSON the demo writes.
type result struct {
	Config     edm.Config      `json:"config"`
	EDM        edm.EDM         `json:"edm"`
	Train      edm.TrainConfig `json:"train"`
	Params     int             `json:"params"`
	Episodes   int             `json:"train_episodes"`
	Samples    int             `json:"train_samples"`
	CollectSec float64         `json:"collect_seconds"`
	TrainSec   float64         `json:"train_seconds"`
	Steps      int             `json:"train_steps"`
	LossEvery  int             `json:"loss_every"`
	Loss       []float64       `json:"loss_curve"` // mean minibatch loss over each LossEvery steps
	// The open-loop rollouts from step 20 of each held-out episode; the
	// strip shows the first.
	pixelwm.ImagineEval
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
		data = append(data, pixelwm.Transitions(cfg, d.Images, d.Actions)...)
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
		Samples: len(data), CollectSec: collect, LossEvery: 10}
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
	var eps []pixelwm.Episode
	for _, d := range held {
		eps = append(eps, pixelwm.Episode{Frames: d.Images, Actions: d.Actions})
	}
	ev, strip := pixelwm.EvaluateImagination(tr.Net, e, eps, 20, horizon, rand.New(rand.NewPCG(seed, 2)))
	res.ImagineEval = ev
	res.Seconds = time.Since(start).Seconds()
	fmt.Printf("per-step MSE imagined %v\ncopy-last %v\n", fmtList(res.MSE), fmtList(res.CopyLastMSE))

	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := pixelwm.WriteStrip(filepath.Join(out, "pixel-strip.png"), cfg.ImageSize, strip.Rows()...); err != nil {
		return err
	}
	js, _ := json.MarshalIndent(res, "", "  ")
	return os.WriteFile(filepath.Join(out, "pixel-rollout.json"), append(js, '\n'), 0o644)
}

func fmtList(x []float64) string {
	s := ""
	for _, v := range x {
		s += fmt.Sprintf(" %.4f", v)
	}
	return s
}
