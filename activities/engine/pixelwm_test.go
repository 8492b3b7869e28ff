package engine

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/accerl/accerl/kernels"
	"github.com/accerl/accerl/kernels/edm"
	"github.com/accerl/accerl/kernels/edm/proprio"
	"github.com/accerl/accerl/kernels/edm/reward"
	"github.com/accerl/accerl/kernels/vla"
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

// Frame is the bandit's frame with a white marker at pixel t: the frames change from step
// to step, which a world model's validation against copying the last frame needs.
func (e *colourWalk) Frame(dst []byte) []byte {
	n := len(dst)
	dst = e.colourBandit.Frame(dst)
	copy(dst[n+3*e.t:], []byte{255, 255, 255})
	return dst
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
	resumeMatchesStraight(t, start, snap)

	// The imagined chunks themselves, from real chunks of a fresh engine.
	d := start(nil)
	chunks := walkChunks(t, d)
	img, err := d.pix.imagine(ctx, d.tr.model(), chunks, d.shape, 0, 20, d.frameBytes)
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
	// A cancelled segment does not wait for the imagination to finish.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := d.pix.imagine(cancelled, d.tr.model(), chunks, d.shape, 0, 20, d.frameBytes); !errors.Is(err, context.Canceled) {
		t.Errorf("imagination under a cancelled context: %v, want context.Canceled", err)
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
		for step := range walkSteps {
			w.t = step
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

// tinyPixelTrainers is tinyPixelWM with the three trainers that fit it online (fresh
// models of the same shapes, the models being the trainers' own).
func tinyPixelTrainers(t *testing.T, seed uint64) PixelWorldModel {
	t.Helper()
	m := tinyPixelWM(seed)
	obs, err := edm.NewTrainer(m.Obs.Config(), m.EDM, edm.TrainConfig{LR: 1e-3, BatchSize: 4, MaxGradNorm: 1, Seed: seed}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rew, err := reward.NewTrainer(m.Rew.Config(), reward.TrainConfig{LR: 1e-3, BatchSize: 4, Focal: reward.Focal{Gamma: 2}, MaxGradNorm: 1, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	pro, err := proprio.NewTrainer(m.Proprio.Config(), m.Proprio.Norm(), proprio.TrainConfig{LR: 1e-3, BatchSize: 4, MaxGradNorm: 1, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	m.ObsTrainer, m.RewTrainer, m.ProprioTrainer = obs, rew, pro
	m.Obs, m.Rew, m.Proprio = obs.Net, rew.Model, pro.Model
	return m
}

// TestPixelOnlineFits trains the pixel world model online: M_obs and the proprio head two
// steps every update, M_rew two every second update. Every update reports M_obs's
// validation loss on its real steps (finite, positive); the fits move the models and are
// counted; two updates, a snapshot (which carries the trainers) and two more, restored onto
// a freshly loaded pretrained model, end where four straight updates do, world model
// included; and an engine given models without trainers says what it needs.
func TestPixelOnlineFits(t *testing.T) {
	ctx := context.Background()
	cfg := pixelWMConfig()
	cfg.PixelWM.ObsEvery, cfg.PixelWM.RewEvery = 1, 2
	cfg.PixelWM.ObsFitSteps, cfg.PixelWM.ProprioFitSteps, cfg.PixelWM.RewFitSteps = 2, 2, 2
	start := func(snap *Snapshot) *Engine {
		t.Helper()
		e, err := New(cfg, snap, walkFactory)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.SetPixelWorldModel(tinyPixelTrainers(t, 3)); err != nil {
			t.Fatal(err)
		}
		return e
	}
	before := slices.Clone(tinyPixelTrainers(t, 3).Obs.Params())
	a := start(nil)
	var reports []UpdateReport
	st, err := a.Run(ctx, 2, func(r UpdateReport) { reports = append(reports, r) })
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		if !(r.WMValLoss > 0) || math.IsInf(r.WMValLoss, 0) {
			t.Errorf("update %d: validation loss %v, want a finite positive ratio to copying the last frame", r.Update, r.WMValLoss)
		}
	}
	if a.pix.obsFits != 2 || a.pix.rewFits != 1 || a.pix.model.ObsTrainer.Steps != 4 || a.pix.model.RewTrainer.Steps != 2 || a.pix.model.ProprioTrainer.Steps != 4 {
		t.Errorf("fits %d/%d, trainer steps %d/%d/%d; want 2 M_obs fits and 1 M_rew fit, 4/2/4 steps",
			a.pix.obsFits, a.pix.rewFits, a.pix.model.ObsTrainer.Steps, a.pix.model.RewTrainer.Steps, a.pix.model.ProprioTrainer.Steps)
	}
	if slices.Equal(before, a.pix.model.Obs.Params()) {
		t.Error("M_obs's parameters did not move in its online fits")
	}
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if snap.PixelWM == nil || snap.PixelWM.ObsFits != 2 || len(snap.PixelWM.Obs) == 0 {
		t.Fatalf("snapshot's pixel world model state %+v, want the trainers after 2 fits", snap.PixelWM)
	}
	if st.WMValUpdates != 2 || !(st.WMValLoss > 0) {
		t.Errorf("segment: %d validated updates, mean loss %v; want 2 and positive", st.WMValUpdates, st.WMValLoss)
	}
	b, c := resumeMatchesStraight(t, start, snap)
	sb, _ := b.pix.state()
	sc, _ := c.pix.state()
	if !slices.Equal(sb.Obs, sc.Obs) || !slices.Equal(sb.Rew, sc.Rew) || !slices.Equal(sb.Proprio, sc.Proprio) || sb.ObsFits != 4 {
		t.Errorf("the world model after a snapshot differs from the straight run's (%d fits)", sb.ObsFits)
	}

	bare, err := New(cfg, nil, walkFactory)
	if err != nil {
		t.Fatal(err)
	}
	if err := bare.SetPixelWorldModel(tinyPixelWM(3)); err == nil || !strings.Contains(err.Error(), "trainers") {
		t.Errorf("models without trainers for online fits: %v", err)
	}
}

// TestPixelRealData checks the online data cut from two hand-made chunks of six steps
// (history 2): the transitions from step 1 on with a frame after them (4 in a chunk
// without its terminal frame, 5 with it), each with the executed action and the frame and
// proprioception that followed; one labelled frame per step, plus the terminal frame as
// an end frame with the episode's success.
func TestPixelRealData(t *testing.T) {
	e := start(t, pixelWMConfig())
	chunks := walkChunks(t, e)
	last := &colourWalk{t: walkSteps}
	chunks[1].TerminalFrame, chunks[1].TerminalObs, chunks[1].Success = last.Frame(nil), []float64{0.5, 0.6}, true
	d := e.pix.realData(e.tr.model(), chunks, e.shape, e.frameBytes)
	if len(d.obs) != 4+5 || len(d.prop) != 9 || len(d.rew) != 6+6+1 {
		t.Fatalf("%d / %d transitions and %d frames, want 9 / 9 and 13", len(d.obs), len(d.prop), len(d.rew))
	}
	env := make([]float64, walkSteps*e.shape.Env)
	e.tr.model().EnvActions(kernels.Actions{Tokens: chunks[0].Actions}, walkSteps, env)
	s := d.obs[0]
	if !slices.Equal(s.Action, env[e.shape.Env:e.shape.Env+1]) || s.Next[0][3*2] != 255 || s.Past[1][0][3*1] != 255 || s.Past[0][0][0] != 255 {
		t.Errorf("first transition: action %v (want step 1's %v), markers past %v/%v next %v", s.Action, env[e.shape.Env:e.shape.Env+1], s.Past[0][0][0], s.Past[1][0][3], s.Next[0][6])
	}
	end := d.rew[len(d.rew)-1]
	if !end.End || !end.Success || end.Frames[0][3*walkSteps] != 255 || d.rew[0].End || d.rew[0].Success {
		t.Errorf("labels: terminal %+v/%+v, first %+v/%+v", end.End, end.Success, d.rew[0].End, d.rew[0].Success)
	}
	if p := d.prop[len(d.prop)-1]; !slices.Equal(p.Next, []float64{0.5, 0.6}) {
		t.Errorf("the last proprio transition ends in %v, want the terminal observation's 0.5 0.6", p.Next)
	}
}

// start is an engine of cfg holding tinyPixelWM.
func start(t *testing.T, cfg Config) *Engine {
	t.Helper()
	e, err := New(cfg, nil, walkFactory)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetPixelWorldModel(tinyPixelWM(3)); err != nil {
		t.Fatal(err)
	}
	return e
}

// resumeMatchesStraight runs 2 updates from snap (taken after 2) and 4 from scratch, with
// engines from start, checks that the policies agree, and returns both engines.
func resumeMatchesStraight(t *testing.T, start func(*Snapshot) *Engine, snap *Snapshot) (resumed, straight *Engine) {
	t.Helper()
	ctx := context.Background()
	resumed, straight = start(snap), start(nil)
	if _, err := resumed.Run(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := straight.Run(ctx, 4, nil); err != nil {
		t.Fatal(err)
	}
	if resumed.ParamsSHA256() != straight.ParamsSHA256() {
		t.Error("2 updates, a snapshot and 2 more differ from 4 straight updates")
	}
	return resumed, straight
}

// TestPixelImaginationGroups covers GRPO on imagined rollouts (PixelWMSettings.Group):
// without groups GRPO with imagination is refused; with groups of 4 the imagined rollouts
// come four to a start, each ended by the horizon or M_rew and marked with M_rew's verdict
// on its last frame; and the trainer judges every group by those verdicts alone, beside
// the real episodes of the batch, whose outcomes are their rewards.
func TestPixelImaginationGroups(t *testing.T) {
	ctx := context.Background()
	cfg := pixelWMConfig()
	cfg.PixelWM.Graded = true
	if _, err := New(cfg, nil, walkFactory); err == nil || !strings.Contains(err.Error(), "graded imagined outcomes rank") {
		t.Fatalf("graded imagined outcomes under GAE: %v", err)
	}
	cfg.PixelWM.Graded = false
	cfg.AdvEstimator = AdvGRPO
	if _, err := New(cfg, nil, walkFactory); err == nil || !strings.Contains(err.Error(), "needs at least 2 of them") {
		t.Fatalf("GRPO with one imagined rollout per start: %v", err)
	}
	cfg.PixelWM.Group = 4
	d, err := New(cfg, nil, walkFactory)
	if err != nil {
		t.Fatal(err)
	}
	m := tinyPixelWM(3)
	if err := d.SetPixelWorldModel(m); err != nil {
		t.Fatal(err)
	}
	chunks := walkChunks(t, d)
	img, err := d.pix.imagine(ctx, d.tr.model(), chunks, d.shape, 0, 30, d.frameBytes)
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for i, ch := range img {
		steps += ch.Len()
		// Rollouts 4g..4g+3 are group g+1's and start from one real step: the same frame.
		if want := uint64(i/4 + 1); ch.Start != want || !slices.Equal(ch.Frames[:d.frameBytes], img[i/4*4].Frames[:d.frameBytes]) {
			t.Errorf("imagined chunk %d: group %d, want %d, and its group's first frame", i, ch.Start, want)
		}
		if i == len(img)-1 && steps == 30 && ch.Len() < 3 && !ch.Terminated {
			continue // the quota cut it: an episode that ends in no outcome
		}
		if ch.Terminated == ch.Truncated {
			t.Errorf("imagined chunk %d: terminated %v, truncated %v; want one (M_rew ended it, or the horizon)", i, ch.Terminated, ch.Truncated)
		}
		if ch.Truncated {
			// The verdict is M_rew's on the frame the rollout ends at (its NextFrame).
			p, _ := m.Rew.Predict([][][]uint8{{ch.NextFrame[:banditImage*banditImage*3]}})
			if ch.Success != (p[0] >= 0.5) {
				t.Errorf("imagined chunk %d: success %v, M_rew's p_success on its last frame %v", i, ch.Success, p[0])
			}
		}
	}
	if steps != 30 {
		t.Errorf("%d imagined steps, want the quota of 30", steps)
	}

	// Hand-made batch: group 1 has one success in four plus a cut rollout, group 2 none in
	// two; the real episodes one success in two (every real episode of the walk is one task).
	mk := func(env int, seq int64, start uint64, rewards []float64, ended, success bool) *Chunk {
		c := &Chunk{Env: env, Seq: seq, Start: start, Rewards: rewards, Success: success}
		n := len(rewards)
		c.Obs = make([]float64, 2*n)
		c.Frames = make([]byte, n*d.frameBytes)
		c.Actions, c.LogProbs = make([]int, n*d.shape.Tokens), make([]float64, n*d.shape.LogProbs)
		c.Values, c.Versions = make([]float64, n), make([]int64, n)
		switch {
		case env >= 0:
			c.Terminated = true
		case ended:
			c.Truncated = true
		}
		if !c.Terminated {
			c.NextObs, c.NextFrame = make([]float64, 2), make([]byte, d.frameBytes)
		}
		return c
	}
	inc := []float64{0.3, -0.1} // imagined p_success increments: the critic's, not GRPO's
	batch := []*Chunk{
		mk(-1, 0, 1, inc, true, true), mk(-1, 1, 1, inc, true, false), mk(-1, 2, 1, inc, true, false), mk(-1, 3, 1, inc, true, false),
		mk(-1, 4, 2, inc, true, false), mk(-1, 5, 2, inc, true, false),
		mk(-1, 6, 1, inc, false, true), // cut by the quota: no outcome
		mk(0, 0, 0, []float64{0, 1}, true, true), mk(1, 0, 0, []float64{0, 0}, true, false),
	}
	d.tr.fill(batch)
	d.tr.advantages()
	// Group 1's outcomes 1 0 0 0: mean 1/4, sample std sqrt((9/16 + 3/16)/3) = 1/2, so
	// (1 − 1/4)/(1/2) = 1.5 and (0 − 1/4)/(1/2) = −0.5; group 2's are equal: 0; the real
	// ones 1 and 0: mean 1/2, std sqrt(1/2), ±1/sqrt(2). Tolerance: the kernel's 1e-6 on std.
	want := []float64{1.5, -0.5, -0.5, -0.5, 0, 0, 0, math.Sqrt(0.5), -math.Sqrt(0.5)}
	for i, w := range want {
		for _, a := range d.tr.batch.Advantages[2*i : 2*i+2] {
			if math.Abs(a-w) > 1e-5 {
				t.Errorf("chunk %d: advantage %v, want %v", i, a, w)
			}
		}
	}
	if d.tr.grpoEpisodes != 8 {
		t.Errorf("%d ended episodes, want 6 imagined and 2 real", d.tr.grpoEpisodes)
	}
	// Moved: group 1's four and the two real ones (group 2's are equal); of the imagined
	// six, group 1's four moved and one is a success (the cut rollout ended no episode).
	if tr := d.tr; tr.grpoMoved != 6 || tr.grpoImagined != 6 || tr.grpoImaginedMoved != 4 || tr.grpoImaginedOK != 1 {
		t.Errorf("moved %d, imagined %d (moved %d, successes %d); want 6, 6 (4, 1)", tr.grpoMoved, tr.grpoImagined, tr.grpoImaginedMoved, tr.grpoImaginedOK)
	}

	// Graded (PixelWMSettings.Graded): a group is ranked by its rollouts' summed increments
	// (p_success at the end less at the start), mean-centred. Group 1's sums 0.5, 0.25, 0
	// and 0.25 (mean 0.25; binary fractions, so exact) give 0.25, 0, −0.25, 0 whatever the
	// verdicts say; group 2's equal sums give 0; the real episodes keep their scaled ±1/√2.
	d.tr.cfg.PixelWM.Graded = true
	batch = []*Chunk{
		mk(-1, 0, 1, []float64{0.25, 0.25}, true, false), mk(-1, 1, 1, []float64{0.5, -0.25}, true, true), mk(-1, 2, 1, []float64{-0.25, 0.25}, true, false),
		mk(-1, 3, 1, []float64{0.125, 0.125}, true, false),
		mk(-1, 4, 2, inc, true, true), mk(-1, 5, 2, inc, true, true),
		mk(0, 0, 0, []float64{0, 1}, true, true), mk(1, 0, 0, []float64{0, 0}, true, false),
	}
	d.tr.fill(batch)
	d.tr.advantages()
	want = []float64{0.25, 0, -0.25, 0, 0, 0, math.Sqrt(0.5), -math.Sqrt(0.5)}
	for i, w := range want {
		for _, a := range d.tr.batch.Advantages[2*i : 2*i+2] {
			// The imagined sums are exact; the real ones carry the kernel's 1e-6 on std.
			if math.Abs(a-w) > 1e-5 {
				t.Errorf("graded, chunk %d: advantage %v, want %v", i, a, w)
			}
		}
	}
	// Moved: group 1's two non-zero and the two real ones; three imagined successes.
	if tr := d.tr; tr.grpoMoved != 4 || tr.grpoImagined != 6 || tr.grpoImaginedMoved != 2 || tr.grpoImaginedOK != 3 {
		t.Errorf("graded: moved %d, imagined %d (moved %d, successes %d); want 4, 6 (2, 3)", tr.grpoMoved, tr.grpoImagined, tr.grpoImaginedMoved, tr.grpoImaginedOK)
	}
}

// TestPixelImaginationTemperature covers PixelWMSettings.Temperature: the imagined tokens
// are drawn at that temperature — at 1e-3 nearly all are the policy's greedy tokens, which
// sampling at the policy's own temperature (1, a random tiny VLA over 16 bins) is far
// from — and recorded, either way, with the log-probabilities the policy gives them at its
// own temperature (a teacher-forced pass over each recorded step gives the same), which
// imagining leaves as it was; Tempered, with those at the imagined temperature instead
// (the same pass at that temperature, kernels.TemperedNetwork), which the chunks and the
// trainer's batch carry (Chunk.Temperature, kernels.Batch.Temperatures).
func TestPixelImaginationTemperature(t *testing.T) {
	ctx := context.Background()
	greedyShare := func(temp float64, tempered bool) float64 {
		t.Helper()
		cfg := pixelWMConfig()
		cfg.PixelWM.Temperature, cfg.PixelWM.Tempered = temp, tempered
		d, err := New(cfg, nil, walkFactory)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.SetPixelWorldModel(tinyPixelWM(3)); err != nil {
			t.Fatal(err)
		}
		net := d.tr.model().(*vla.Policy)
		own := net.Net().Temperature()
		img, err := d.pix.imagine(ctx, net, walkChunks(t, d), d.shape, 0, 60, d.frameBytes)
		if err != nil {
			t.Fatal(err)
		}
		if after := net.Net().Temperature(); after != own {
			t.Errorf("imagined temperature %v: the policy's temperature %v became %v", temp, own, after)
		}
		same, all := 0, 0
		for _, c := range img {
			n, nt := c.Len(), d.shape.Tokens
			frames := make([][]byte, n)
			for i := range frames {
				frames[i] = c.Frames[i*d.frameBytes : (i+1)*d.frameBytes]
			}
			net.SetFrames(frames)
			g := kernels.Actions{Tokens: make([]int, n*nt), Continuous: make([]float64, n*d.shape.Reals)}
			net.Greedy(c.Obs, n, g)
			logp, ent, vals := make([]float64, n*nt), make([]float64, n*nt), make([]float64, n)
			if want := map[bool]float64{true: temp}[tempered]; c.Temperature != want {
				t.Fatalf("imagined temperature %v, tempered %v: chunk temperature %v, want %v", temp, tempered, c.Temperature, want)
			}
			if tempered {
				temps := make([]float64, n)
				for i := range temps {
					temps[i] = temp
				}
				net.SetTemperatures(temps)
			}
			net.Evaluate(c.Obs, n, kernels.Actions{Tokens: c.Actions, Continuous: c.ContActions}, logp, ent, vals)
			net.SetTemperatures(nil)
			for i, tok := range c.Actions {
				all++
				if tok == g.Tokens[i] {
					same++
				}
				// Tolerance: float32 log-softmaxes of ~-2.8 through two paths (cached
				// decoding or a teacher-forced pass over a batch of another size).
				if math.Abs(logp[i]-c.LogProbs[i]) > 1e-4 {
					t.Fatalf("imagined temperature %v: token %d recorded with log-probability %v, the policy gives it %v", temp, i, c.LogProbs[i], logp[i])
				}
			}
		}
		if all != 60*d.shape.Tokens {
			t.Fatalf("imagined temperature %v: %d tokens, want the quota's %d", temp, all, 60*d.shape.Tokens)
		}
		d.tr.fill(img)
		if b := d.tr.batch; tempered != (b.Temperatures != nil) || tempered && (len(b.Temperatures) != b.N || slices.ContainsFunc(b.Temperatures, func(v float64) bool { return v != temp })) {
			t.Fatalf("imagined temperature %v, tempered %v: the batch's %d steps have temperatures %v", temp, tempered, b.N, b.Temperatures)
		}
		return float64(same) / float64(all)
	}
	// Margins: at 1e-3 a token differs from the argmax only where two logits lie within
	// ~1e-2 (e^-10); at temperature 1 over 16 near-uniform bins about 1 in 16 agree.
	for _, tempered := range []bool{false, true} {
		if s := greedyShare(1e-3, tempered); s < 0.95 {
			t.Errorf("at imagined temperature 1e-3 (tempered %v) %.2f of the tokens are greedy, want at least 0.95", tempered, s)
		}
	}
	if s := greedyShare(0, false); s > 0.5 {
		t.Errorf("at the policy's temperature %.2f of the tokens are greedy, want at most 0.5", s)
	}
}

// TestPixelImaginationStartWithin covers PixelWMSettings.StartWithin: the imagined
// rollouts start (their first frame is the start's) only at the last StartWithin steps of
// a chunk that ended its episode, never in a chunk cut mid-episode, where without it they
// start at any step with enough context before it.
func TestPixelImaginationStartWithin(t *testing.T) {
	ctx := context.Background()
	starts := func(within int) (allowed, other int) {
		t.Helper()
		cfg := pixelWMConfig()
		cfg.PixelWM.StartWithin = within
		d, err := New(cfg, nil, walkFactory)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.SetPixelWorldModel(tinyPixelWM(3)); err != nil {
			t.Fatal(err)
		}
		real := walkChunks(t, d)
		real[1].Terminated = false // cut mid-episode: no start there
		real[1].NextObs = slices.Clone(real[1].Obs[:2])
		fb := d.frameBytes
		ok := map[string]bool{}
		for step := walkSteps - 2; step < walkSteps; step++ {
			ok[string(real[0].Frames[step*fb:(step+1)*fb])] = true
		}
		img, err := d.pix.imagine(ctx, d.tr.model(), real, d.shape, 0, 60, fb)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range img {
			if ok[string(c.Frames[:fb])] {
				allowed++
			} else {
				other++
			}
		}
		return allowed, other
	}
	if a, o := starts(2); a == 0 || o != 0 {
		t.Errorf("start within 2: %d rollouts start at the ended chunk's last 2 steps, %d elsewhere; want all there", a, o)
	}
	// Without it the starts spread over both chunks (quota 60 at horizon 3: 20 draws over
	// 2·(6 − history + 1) steps, 4 of them the ones above).
	if a, o := starts(0); o == 0 {
		t.Errorf("any start: %d rollouts at the ended chunk's last 2 steps and %d elsewhere; want some elsewhere", a, o)
	}
}
