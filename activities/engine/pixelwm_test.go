package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/proprio"
	"github.com/accerl/accerl/kernels/edm/reward"
)

// colourWalk is colourBandit over episodes of walkSteps steps: the same frame throughout,
// the reward at every step, the episode ending after the last.
type colourWalk struct {
	colourBandit
	t int
}

const walkSteps = 6

func (e *colourWalk) Reset(rng *rand.Rand) []float64 { e.t = 0; return e.colourBandit.Reset(rng) }
func (e *colourWalk) Step(a []float64) StepResult {
	r := e.colourBandit.Step(a)
	e.t++
	r.Terminated = e.t == walkSteps
	return r
}
func (e *colourWalk) MarshalBinary() ([]byte, error) {
	b, _ := e.colourBandit.MarshalBinary()
	return append(b, byte(e.t)), nil
}
func (e *colourWalk) UnmarshalBinary(b []byte) error {
	e.t = int(b[1])
	return e.colourBandit.UnmarshalBinary(b[:1])
}

// tinyPixelWM is a randomly initialised pixel world model for colourWalk's frames: one
// 8×8 camera, 2 frames of history, 1-D actions, 2-D proprioception.
func tinyPixelWM(seed uint64) PixelWorldModel {
	rng := rand.New(rand.NewPCG(seed, 1))
	oc := edm.Config{ImageSize: banditImage, Cameras: 1, History: 2, ActionDim: 1, Channels: []int{4, 6}, CondDim: 6, GroupSize: 2}
	pc := proprio.Config{History: 2, ProprioDim: 2, ActionDim: 1, Hidden: []int{4}}
	nm := proprio.Norm{InMean: make([]float64, pc.In()), InStd: slices.Repeat([]float64{1}, pc.In()),
		OutMean: make([]float64, 2), OutStd: []float64{0.1, 0.1}}
	e := edm.DefaultEDM()
	e.Residual, e.SigmaData, e.Steps = true, 0.1, 1
	return PixelWorldModel{
		Obs: edm.NewNet[float32](oc, rng, nil), EDM: e,
		Proprio: proprio.NewModel[float32](pc, nm, rng),
		Rew:     reward.New(reward.Config{ImageSize: banditImage, Patch: 4, Cameras: 1, Dim: 5, Hidden: 4}, rng),
	}
}

func pixelWMConfig() Config {
	cfg := vlaBanditConfig()
	cfg.Env = "colour-walk"
	cfg.PixelWM = PixelWMSettings{Enabled: true, ImaginationRatio: 0.5, Horizon: 3, Execute: 1}
	return cfg
}

func walkFactory(int) (Env, error) { return &colourWalk{}, nil }

// TestPixelImagination trains the VLA with half of every batch imagined by a pixel world
// model: each update takes 32 real and 32 imagined steps at horizon 3; the imagined
// rewards are M_rew's increments (finite, within ±1); two updates, a snapshot and two more
// end in the parameters of four straight updates; and an engine that was given no model
// says so.
func TestPixelImagination(t *testing.T) {
	ctx := context.Background()
	start := func(snap *Snapshot) *Engine {
		t.Helper()
		e, err := New(pixelWMConfig(), snap, walkFactory)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.SetPixelWorldModel(tinyPixelWM(3)); err != nil {
			t.Fatal(err)
		}
		return e
	}
	var reports []UpdateReport
	a := start(nil)
	if _, err := a.Run(ctx, 2, func(r UpdateReport) { reports = append(reports, r) }); err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if r.RealSteps != 32 || r.ImaginedSteps != 32 || r.BatchSteps != 64 || r.Horizon != 3 {
			t.Errorf("update %d: %d real + %d imagined = %d steps at horizon %d, want 32 + 32 = 64 at 3", r.Update, r.RealSteps, r.ImaginedSteps, r.BatchSteps, r.Horizon)
		}
	}
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if snap.PixelImagined != 64 || snap.PixelWMRNG == nil {
		t.Errorf("snapshot: %d imagined steps, rng %v; want 64 and a state", snap.PixelImagined, snap.PixelWMRNG != nil)
	}
	b := start(snap)
	if _, err := b.Run(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	c := start(nil)
	if _, err := c.Run(ctx, 4, nil); err != nil {
		t.Fatal(err)
	}
	if b.ParamsSHA256() != c.ParamsSHA256() {
		t.Error("2 updates, a snapshot and 2 more differ from 4 straight updates")
	}

	// The imagined chunks themselves, from real chunks of a fresh engine.
	d := start(nil)
	chunks := walkChunks(t, d)
	img, err := d.pix.imagine(d.tr.model(), chunks, d.shape, 0, 20, d.frameBytes)
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, ch := range img {
		steps += ch.Len()
		if ch.Env != -1 || len(ch.Frames) != ch.Len()*d.frameBytes || len(ch.Obs) != ch.Len()*2 || len(ch.Rewards) != ch.Len() ||
			(!ch.Terminated && (len(ch.NextObs) != 2 || len(ch.NextFrame) != d.frameBytes)) || ch.Len() > 3 {
			t.Fatalf("imagined chunk %+v has inconsistent lengths", ch)
		}
		for _, r := range ch.Rewards {
			if math.IsNaN(r) || math.Abs(r) > 1 {
				t.Errorf("imagined reward %v: an increment of a probability lies in [−1, 1]", r)
			}
		}
		// The instruction bytes are the start's, in every imagined frame.
		if !slices.Equal(ch.Frames[len(ch.Frames)-6:], chunks[0].Frames[d.frameBytes-6:d.frameBytes]) {
			t.Errorf("imagined frame's instruction bytes %v", ch.Frames[d.frameBytes-6:d.frameBytes])
		}
	}
	if steps != 20 {
		t.Errorf("%d imagined steps, want the quota of 20", steps)
	}

	// A model that advances two actions at a time cannot imagine a step that executes one.
	wide := tinyPixelWM(3)
	wide.Stride = 2
	if err := start(nil).SetPixelWorldModel(wide); err == nil || !strings.Contains(err.Error(), "must divide the 1 an engine step executes") {
		t.Errorf("a stride-2 model on 1-action steps: %v", err)
	}

	bare, err := New(pixelWMConfig(), nil, walkFactory)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.Run(ctx, 1, nil); err == nil || !strings.Contains(err.Error(), "SetPixelWorldModel") {
		t.Errorf("an engine without a pixel world model: %v", err)
	}
}

// walkChunks returns two real chunks of colourWalk as the rollouts record them: six
// steps each, one red and one blue, every step with its frame and observation.
func walkChunks(t *testing.T, e *Engine) []*Chunk {
	t.Helper()
	var out []*Chunk
	for env, red := range []bool{true, false} {
		w := &colourWalk{colourBandit: colourBandit{red: red}}
		c := &Chunk{Env: env, Terminated: true}
		for range walkSteps {
			c.Obs = append(c.Obs, 0.1, -0.2)
			c.Frames = w.Frame(c.Frames)
			c.Actions = append(c.Actions, make([]int, e.shape.Tokens)...)
			c.LogProbs = append(c.LogProbs, make([]float64, e.shape.LogProbs)...)
			c.Values, c.Rewards, c.Versions = append(c.Values, 0), append(c.Rewards, 0), append(c.Versions, 0)
		}
		out = append(out, c)
	}
	return out
}
