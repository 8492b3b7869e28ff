package engine

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/accerl/accerl/activities/worldmodel"
	"github.com/accerl/accerl/kernels"
)

// wmConfig is smallConfig in sync mode with the world model on: batches
// of 64 steps, half imagined (32 real steps: 8 per environment and round),
// horizon 4, online fits every update on minibatches of 32.
func wmConfig() Config {
	cfg := smallConfig(ModeSync)
	cfg.WorldModel = WorldModelSettings{
		Enabled: true, History: 2, ObsHidden: []int{16}, RewHidden: []int{8},
		ObsLR: 1e-3, RewLR: 1e-3, RewardMode: worldmodel.RewardDirect,
		ImaginationRatio: 0.5, ObsEvery: 1, RewEvery: 2, Horizon: 4,
		RealCapacity: 512, FitSteps: 2, FitBatch: 32,
	}
	return cfg
}

func TestWorldModelConfigArithmetic(t *testing.T) {
	cfg := wmConfig()
	// round(0.5·64) = 32 imagined, 64 − 32 = 32 real, ceil(32/4) = 8 per env.
	if got := cfg.RealBatchSteps(); got != 32 {
		t.Errorf("RealBatchSteps = %d, want 32", got)
	}
	if got := cfg.RoundSteps(); got != 8 {
		t.Errorf("RoundSteps = %d, want 8", got)
	}
	cfg.WorldModel.ImaginationRatio = 0.999 // round(63.936) = 64 imagined: at least one real step
	if got := cfg.RealBatchSteps(); got != 1 {
		t.Errorf("RealBatchSteps at ratio 0.999 = %d, want 1", got)
	}
	cfg.WorldModel.Enabled = false
	if got := cfg.RealBatchSteps(); got != 64 {
		t.Errorf("RealBatchSteps without a world model = %d, want 64", got)
	}
	bad := wmConfig()
	bad.WorldModel.Horizon = 0
	bad.WorldModel.ImaginationRatio = 1
	if err := bad.Validate(); err == nil {
		t.Error("Validate accepted horizon 0 and ratio 1")
	}
}

// TestWorldModelMixesBuffers checks the trainer's mixing: the first update
// has no imagined data (the model is not fitted yet) and trains on the
// round's 32 real steps; from then on every update takes 32 real steps and
// imagined chunks of at most H = 4 steps up to a quota of round(0.5·64) =
// 32, overshooting by less than one chunk (MixBatch), while only the real
// steps count as env steps.
func TestWorldModelMixesBuffers(t *testing.T) {
	cfg := wmConfig()
	cfg.MaxEnvSteps = 32 * 6
	e := mustNew(t, cfg, nil)
	var reps []UpdateReport
	st := mustRun(t, e, 100, func(u UpdateReport) { reps = append(reps, u) })
	if !st.BudgetReached || st.EnvSteps != 32*6 || len(reps) != 6 {
		t.Fatalf("budget %d: got %d env steps in %d updates (reached %v), want 192 in 6", cfg.MaxEnvSteps, st.EnvSteps, len(reps), st.BudgetReached)
	}
	var img int64
	for i, u := range reps {
		if u.RealSteps != 32 || u.Horizon != 4 {
			t.Errorf("update %d: %d real steps at horizon %d, want 32 at 4", i+1, u.RealSteps, u.Horizon)
		}
		if i == 0 {
			if u.ImaginedSteps != 0 || !math.IsNaN(u.WMValLoss) {
				t.Errorf("update 1: %d imagined steps, val loss %v; want none before the first fit", u.ImaginedSteps, u.WMValLoss)
			}
		} else {
			if u.ImaginedSteps < 32 || u.ImaginedSteps >= 32+4 {
				t.Errorf("update %d: %d imagined steps, want in [32, 36)", i+1, u.ImaginedSteps)
			}
			if !(u.WMValLoss >= 0) || math.IsInf(u.WMValLoss, 0) {
				t.Errorf("update %d: val loss %v, want finite", i+1, u.WMValLoss)
			}
		}
		if u.BatchSteps != u.RealSteps+u.ImaginedSteps {
			t.Errorf("update %d: batch %d != real %d + imagined %d", i+1, u.BatchSteps, u.RealSteps, u.ImaginedSteps)
		}
		img += int64(u.ImaginedSteps)
	}
	if st.ImaginedSteps != img || st.WMValUpdates != 5 || st.Horizon != 4 {
		t.Errorf("segment stats: imagined %d (reports %d), %d val updates (want 5), horizon %d", st.ImaginedSteps, img, st.WMValUpdates, st.Horizon)
	}
}

// TestWorldModelSyncResumeIsBitExact runs 2+2+2 updates with snapshots
// (through JSON) in between and a horizon that changes per segment, as the
// Run workflow does, against 6 uninterrupted updates with the same
// horizons: parameters, world model and B_img must match bit for bit.
func TestWorldModelSyncResumeIsBitExact(t *testing.T) {
	horizons := []int{3, 5, 8}
	run := func(split bool) (string, []byte, []float64) {
		var snap *Snapshot
		var e *Engine
		var losses []float64
		for seg, h := range horizons {
			cfg := wmConfig()
			cfg.WorldModel.Horizon = h
			if split || e == nil {
				e = mustNew(t, cfg, snap)
			} else {
				if err := e.SetHorizon(h); err != nil { // same engine, new horizon
					t.Fatal(err)
				}
			}
			mustRun(t, e, 2, func(u UpdateReport) {
				if u.Horizon != h {
					t.Errorf("segment %d used horizon %d, want %d", seg, u.Horizon, h)
				}
				losses = append(losses, u.WMValLoss)
			})
			if split {
				s, err := e.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				b, err := json.Marshal(s)
				if err != nil {
					t.Fatal(err)
				}
				snap = new(Snapshot)
				if err := json.Unmarshal(b, snap); err != nil {
					t.Fatal(err)
				}
			}
		}
		s, err := e.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		wm, err := json.Marshal(s.WorldModel)
		if err != nil {
			t.Fatal(err)
		}
		return e.ParamsSHA256(), wm, losses
	}
	shaA, wmA, lossA := run(false)
	shaB, wmB, lossB := run(true)
	if shaA != shaB {
		t.Errorf("params differ after resume: %s vs %s", shaA, shaB)
	}
	if string(wmA) != string(wmB) {
		t.Error("world model snapshots differ after resume")
	}
	if !slices.EqualFunc(lossA, lossB, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
		t.Errorf("val losses differ: %v vs %v", lossA, lossB)
	}
}

// TestImaginedChunksTrain checks the imagined chunk → trainer path on a
// world model pretrained for a few steps on random CartPole data: chunks
// either end in a predicted termination (no next observation, bootstrap
// 0) or run the full horizon with a next observation (bootstrap V); their
// policy actions are the ones the world model was given; and an update on
// them alone gives finite losses.
func TestImaginedChunksTrain(t *testing.T) {
	cfg := wmConfig()
	cfg.WorldModel.Horizon = 12
	cfg.WorldModel.History = 1
	e := mustNew(t, cfg, nil)
	mustRun(t, e, 3, nil) // fills B_real, fits online
	w := e.tr.wm
	w.img, w.imgSteps = nil, 0
	n, err := w.imagine(e.tr.model().(*kernels.Policy), e.shape, e.tr.version, 200)
	if err != nil {
		t.Fatal(err)
	}
	if n != w.imgSteps || n < 100 {
		t.Fatalf("imagine pushed %d steps, B_img holds %d; want the quota round(0.5·200) = 100 or more", n, w.imgSteps)
	}
	d := e.obsDim
	var terminated, full int
	for _, c := range w.img {
		if err := e.checkChunk(&Chunk{Env: 0, Obs: c.Obs, Actions: c.Actions, LogProbs: c.LogProbs, Values: c.Values,
			Rewards: c.Rewards, Versions: c.Versions, Terminated: c.Terminated, NextObs: c.NextObs}, true); err != nil {
			t.Fatal(err)
		}
		switch {
		case c.Terminated && len(c.NextObs) == 0:
			terminated++
		case !c.Terminated && len(c.NextObs) == d && c.Len() == 12:
			full++
		default:
			t.Errorf("chunk %d: terminated %v, %d steps, %d next values", c.Seq, c.Terminated, c.Len(), len(c.NextObs))
		}
		for _, v := range slices.Concat(c.Obs, c.LogProbs, c.Values, c.Rewards, c.NextObs) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("chunk %d holds %v", c.Seq, v)
			}
		}
	}
	if terminated == 0 || full == 0 {
		t.Fatalf("%d terminated and %d full-horizon chunks; the test needs both", terminated, full)
	}
	// The recorded tokens must be the actions the world model was given:
	// with History 1, M_obs(o_t, a_t) is o_{t+1} (up to summation order in
	// the batched matrix product, 1e-9), and the other action predicts
	// something else.
	moved := 0
	pred, other := make([]float64, d), make([]float64, d)
	for _, c := range w.img {
		for s := 0; s+1 < c.Len(); s++ {
			o := c.Obs[s*d : (s+1)*d]
			w.model.Obs().Predict(o, []float64{float64(c.Actions[s])}, 1, pred)
			w.model.Obs().Predict(o, []float64{float64(1 - c.Actions[s])}, 1, other)
			for j := range d {
				if math.Abs(pred[j]-c.Obs[(s+1)*d+j]) > 1e-9 {
					t.Fatalf("chunk %d step %d: M_obs(o, a) = %v, the chunk's next observation is %v", c.Seq, s, pred, c.Obs[(s+1)*d:(s+2)*d])
				}
				if math.Abs(other[j]-c.Obs[(s+1)*d+j]) > 1e-9 {
					moved++
				}
			}
		}
	}
	if moved == 0 {
		t.Fatal("the other action predicts the same observations: the action check is vacuous")
	}
	stats, _, err := e.tr.update(slices.Clone(w.img))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{stats.PolicyLoss, stats.ValueLoss, stats.Entropy} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("update on imagined chunks gave %+v", stats)
		}
	}
}

// TestIngestHistoryAndLabels feeds hand-made chunks to B_real: two
// consecutive chunks of one episode (the second's first history window
// spans the boundary), an episode truncated at the time limit (CartPole
// success: labels 1), one that terminates (labels 0, terminal flag on its
// last transition) and one still running (labels −1, unknown).
func TestIngestHistoryAndLabels(t *testing.T) {
	set := WorldModelSettings{Enabled: true, History: 2, ObsHidden: []int{4}, RewHidden: []int{4}, ObsLR: 1e-3, RewLR: 1e-3,
		RewardMode: worldmodel.RewardSuccessDelta, ImaginationRatio: 0.5, ObsEvery: 1, RewEvery: 1, Horizon: 2}.withDefaults(8)
	mc := set.modelConfig(1, 2, 0)
	w, err := newWMEngine(set, mc, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	actions := func(c *Chunk, out []float64) {
		for i, a := range c.Actions {
			out[i] = float64(a)
		}
	}
	ch := func(env int, seq int64, obs []float64, next []float64) *Chunk {
		n := len(obs)
		return &Chunk{Env: env, Seq: seq, Obs: obs, Actions: make([]int, n), Rewards: slices.Repeat([]float64{1}, n),
			Versions: make([]int64, n), NextObs: next}
	}
	a1 := ch(0, 0, []float64{1, 2}, []float64{3})
	a2 := ch(0, 1, []float64{3, 4}, []float64{5})
	a2.Truncated, a2.Success = true, true // CartPole balanced to the limit
	b := ch(1, 0, []float64{10, 11}, nil)
	b.Terminated, b.TerminalObs = true, []float64{12}
	c := ch(2, 0, []float64{20}, []float64{21})
	w.ingest([]*Chunk{a1, a2, b, c}, actions)
	if w.real.held() != 7 {
		t.Fatalf("B_real holds %d transitions, want 7", w.real.held())
	}
	// Transitions in order: env 0 steps 0-3, env 1 steps 0-1, env 2 step 0.
	wantHist := [][]float64{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 10}, {10, 11}, {0, 20}}
	wantNext := []float64{2, 3, 4, 5, 11, 12, 21}
	wantLabel := []float64{1, 1, 1, 1, 0, 0, -1}
	wantTerm := []float64{0, 0, 0, 0, 0, 1, 0}
	for i := range 7 {
		if !slices.Equal(w.real.histAt(i), wantHist[i]) || w.real.nextAt(i)[0] != wantNext[i] ||
			w.real.labelAt(i) != wantLabel[i] || w.real.termAt(i) != wantTerm[i] {
			t.Errorf("transition %d: hist %v next %v label %v term %v; want %v %v %v %v", i, w.real.histAt(i), w.real.nextAt(i),
				w.real.labelAt(i), w.real.termAt(i), wantHist[i], wantNext[i], wantLabel[i], wantTerm[i])
		}
	}
	if len(w.tails[2].Open) != 1 || len(w.tails[0].Open) != 0 || len(w.tails[0].Past) != 0 {
		t.Errorf("tails after ingest: %+v", w.tails)
	}
	// Env 2's episode ends in a terminal state later: its first transition
	// is labelled 0 then.
	c2 := ch(2, 1, []float64{21}, nil)
	c2.Terminated, c2.TerminalObs = true, []float64{22}
	w.ingest([]*Chunk{c2}, actions)
	if w.real.labelAt(6) != 0 || w.real.labelAt(7) != 0 || !slices.Equal(w.real.histAt(7), []float64{20, 21}) {
		t.Errorf("after env 2 ends: labels %v %v, hist %v", w.real.labelAt(6), w.real.labelAt(7), w.real.histAt(7))
	}
}

// TestLoadWorldModelChecksShape refuses a pretrained state of another
// shape and accepts (and uses) one of the configured shape.
func TestLoadWorldModelChecksShape(t *testing.T) {
	cfg := wmConfig()
	e := mustNew(t, cfg, nil)
	mc := cfg.WorldModel.withDefaults(cfg.BatchSteps).modelConfig(4, 2, 0)
	good, err := worldmodel.NewWorldModel(mc, 1e-2, 1e-2, 99)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.LoadWorldModel(good.State()); err != nil {
		t.Fatal(err)
	}
	got := e.WorldModelState()
	if !slices.Equal(got.ObsParams, good.State().ObsParams) || got.ObsAdam.LR != 1e-3 {
		t.Errorf("loaded state: params equal %v, lr %v (want the configured 1e-3)", slices.Equal(got.ObsParams, good.State().ObsParams), got.ObsAdam.LR)
	}
	mc.ObsHidden = []int{17}
	bad, _ := worldmodel.NewWorldModel(mc, 1e-3, 1e-3, 1)
	if err := e.LoadWorldModel(bad.State()); err == nil {
		t.Error("LoadWorldModel accepted a model with other hidden widths")
	}
	plain := mustNew(t, smallConfig(ModeSync), nil)
	if err := plain.LoadWorldModel(good.State()); err == nil {
		t.Error("LoadWorldModel succeeded on an engine without a world model")
	}
}

// TestWorldModelAsyncBudget runs the world model in async mode: the step
// budget still holds exactly (imagined steps never count), and updates
// after the first fit train on imagined data.
func TestWorldModelAsyncBudget(t *testing.T) {
	cfg := wmConfig()
	cfg.Mode = ModeAsync
	cfg.MaxEnvSteps = 500
	e := mustNew(t, cfg, nil)
	var real, img int
	var dropped int64
	var st SegmentStats
	for !st.BudgetReached {
		st = mustRun(t, e, 50, func(u UpdateReport) { real += u.RealSteps; img += u.ImaginedSteps })
		dropped += st.Dropped
	}
	// Fast environments may overflow the small replay buffer while the
	// trainer is busy: the evicted steps count as env steps, untrained.
	if st.EnvSteps != 500 || int64(real)+dropped != 500 {
		t.Errorf("env steps %d, real steps trained %d + dropped %d; want the budget, 500", st.EnvSteps, real, dropped)
	}
	if img == 0 || st.ImaginedSteps != int64(img) {
		t.Errorf("imagined steps trained: %d (stats %d), want some", img, st.ImaginedSteps)
	}
}

// TestWorldModelSuccessDeltaRuns trains with success_delta rewards on
// CartPole (success = reaching the time limit; with a 20-step limit some
// episodes do): M_rew only trains once an episode has finished, imagined
// rewards are p(ô_{t+1}) − p(ô_t), and everything stays finite.
func TestWorldModelSuccessDeltaRuns(t *testing.T) {
	cfg := wmConfig()
	cfg.MaxEpisodeSteps = 20
	cfg.WorldModel.RewardMode = worldmodel.RewardSuccessDelta
	e := mustNew(t, cfg, nil)
	var img int
	mustRun(t, e, 8, func(u UpdateReport) {
		img += u.ImaginedSteps
		if math.IsNaN(u.Stats.PolicyLoss) || math.IsInf(u.Stats.PolicyLoss, 0) {
			t.Errorf("update %d: policy loss %v", u.Update, u.Stats.PolicyLoss)
		}
	})
	labelled := 0
	for i := range e.tr.wm.real.held() {
		if l := e.tr.wm.real.labelAt(i); l == 0 || l == 1 {
			labelled++
		} else if l != -1 {
			t.Fatalf("label %v, want 0, 1 or -1", l)
		}
	}
	if img == 0 || labelled == 0 || e.tr.wm.rewFits == 0 {
		t.Errorf("%d imagined steps, %d labelled transitions, %d reward fits; want all positive", img, labelled, e.tr.wm.rewFits)
	}
}
