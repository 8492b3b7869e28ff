package tabletop

import (
	"bytes"
	"crypto/sha256"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// episodeHash plays n expert steps after Reset(seed) and hashes the
// observations, rewards and frames.
func episodeHash(t *testing.T, cfg Config, seed uint64, n int) ([32]byte, []byte) {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	put := func(obs []float64) {
		for _, v := range obs {
			h.Write([]byte(fmtFloat(v)))
		}
		for _, img := range e.Images() {
			h.Write(img)
		}
	}
	put(e.Reset(rand.New(rand.NewPCG(seed, 1))))
	x := NewExpert(seed)
	for range n {
		obs, r, _, _ := e.Step(x.Act(e))
		put(obs)
		h.Write([]byte(fmtFloat(r)))
	}
	state, err := e.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, state
}

func fmtFloat(v float64) string { return string(rune(int64(v*1e6))) + "|" }

func TestDeterminism(t *testing.T) {
	for _, suite := range Suites() {
		cfg := Config{Suite: suite, Render: true, ImageSize: 32}
		h1, s1 := episodeHash(t, cfg, 7, 40)
		h2, s2 := episodeHash(t, cfg, 7, 40)
		if h1 != h2 || !bytes.Equal(s1, s2) {
			t.Errorf("%s: two runs from seed 7 differ", suite)
		}
		h3, _ := episodeHash(t, cfg, 8, 40)
		if h1 == h3 {
			t.Errorf("%s: seeds 7 and 8 gave identical episodes", suite)
		}
	}
}

func TestSaveRestore(t *testing.T) {
	for _, suite := range Suites() {
		cfg := Config{Suite: suite, Tasks: []int{2, 6}, Render: true, ImageSize: 32}
		a, _ := New(cfg)
		a.Reset(rand.New(rand.NewPCG(3, 4)))
		x := NewExpert(3)
		for range 25 {
			a.Step(x.Act(a))
		}
		state, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := New(cfg)
		if err := b.UnmarshalBinary(state); err != nil {
			t.Fatalf("%s: restore: %v", suite, err)
		}
		if !slices.Equal(a.obs(), b.obs()) || !framesEqual(a, b) {
			t.Fatalf("%s: restored observation or frames differ", suite)
		}
		// Step both with the same actions: bit-identical from here on.
		rng := rand.New(rand.NewPCG(5, 6))
		for i := range 40 {
			act := make([]float64, ActionDim)
			for k := range act {
				act[k] = 2*rng.Float64() - 1
			}
			oa, ra, ta, ua := a.Step(act)
			ob, rb, tb, ub := b.Step(act)
			if !slices.Equal(oa, ob) || ra != rb || ta != tb || ua != ub || !framesEqual(a, b) {
				t.Fatalf("%s: step %d after restore differs", suite, i)
			}
		}
		sa, _ := a.MarshalBinary()
		sb, _ := b.MarshalBinary()
		if !bytes.Equal(sa, sb) {
			t.Errorf("%s: states differ after stepping the restored copy", suite)
		}
	}
}

func framesEqual(a, b *Env) bool {
	ia, ib := a.Images(), b.Images()
	for i := range ia {
		if !bytes.Equal(ia[i], ib[i]) {
			return false
		}
	}
	return true
}

func TestRestoreRejects(t *testing.T) {
	a, _ := New(Config{Suite: "goal"})
	a.ResetTo(1, 0)
	state, _ := a.MarshalBinary()
	for _, c := range []struct {
		cfg  Config
		data []byte
	}{
		{Config{Suite: "spatial"}, state},
		{Config{Suite: "goal", Tasks: []int{1}}, state},
		{Config{Suite: "goal", MaxEpisodeSteps: 10}, state},
		{Config{Suite: "goal"}, state[:len(state)-3]},
		{Config{Suite: "goal"}, append(slices.Clone(state), 0)},
	} {
		b, _ := New(c.cfg)
		if err := b.UnmarshalBinary(c.data); err == nil {
			t.Errorf("restore into %+v (%d bytes) accepted", c.cfg, len(c.data))
		}
	}
}

func TestFixedInitStates(t *testing.T) {
	for _, suite := range Suites() {
		e, _ := New(Config{Suite: suite})
		for task := range TaskCount(suite) {
			first := e.ResetTo(task, 0)
			if !slices.Equal(first, e.ResetTo(task, 0)) {
				t.Errorf("%s task %d: init state 0 is not reproducible", suite, task)
			}
			seen := map[float64]bool{}
			for i := range InitStates {
				obs := e.ResetTo(task, i)
				seen[obs[ProprioDim]] = true
				if e.Success() {
					t.Errorf("%s task %d init %d starts solved", suite, task, i)
				}
				if o := overlapping(&e.w); o != "" {
					t.Errorf("%s task %d init %d: %s", suite, task, i, o)
				}
			}
			if len(seen) < InitStates {
				t.Errorf("%s task %d: only %d distinct initial object positions of %d", suite, task, len(seen), InitStates)
			}
		}
	}
}

// overlapping describes two entities whose boxes overlap, "" if none do
// (a container and what is inside it excepted).
func overlapping(w *world) string {
	var bi, bj [5]aabb
	for i := range w.ents {
		for j := i + 1; j < len(w.ents); j++ {
			for _, a := range w.entityBoxes(bi[:0], i) {
				for _, b := range w.entityBoxes(bj[:0], j) {
					if a.overlaps(b) {
						return w.ents[i].info().name + " overlaps " + w.ents[j].info().name
					}
				}
			}
		}
	}
	return ""
}

func TestObservationLayout(t *testing.T) {
	e, _ := New(Config{Suite: "long", Tasks: []int{3}})
	obs := e.Reset(rand.New(rand.NewPCG(1, 1)))
	if len(obs) != ObsDim {
		t.Fatalf("obs has %d values", len(obs))
	}
	for i, v := range obs {
		if v != float64(float32(v)) {
			t.Errorf("obs[%d] = %v is not at float32 precision", i, v)
		}
	}
	// Task 3: the bowl, then the cabinet (the drawer's owner).
	bowl, cab := e.w.ents[0].centre(), e.w.ents[1].centre()
	if obs[8] != float64(float32(bowl.x)) || obs[11] != float64(float32(cab.x)) {
		t.Errorf("slots 0 and 1 = %v, %v; want the bowl and the cabinet", obs[8:11], obs[11:14])
	}
	if j := ProprioDim + 3*ObjectSlots; obs[j+jointBottomDrawer] != float64(float32(0.13)) {
		t.Errorf("bottom drawer joint = %v, want 0.13", obs[j+jointBottomDrawer])
	}
	onehot := obs[ProprioDim+3*ObjectSlots+JointDim:]
	if !slices.Equal(onehot, []float64{0, 0, 0, 1, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("task one-hot = %v", onehot)
	}
	p := e.Proprio()
	if !slices.Equal(p, obs[:ProprioDim]) || p[6] != -p[7] || p[6] <= 0 {
		t.Errorf("proprio %v", p)
	}
	// Pointing straight down is a half turn about x: axis-angle (π, 0, 0).
	if p[3] < 3.1 || p[3] > 3.15 {
		t.Errorf("orientation %v, want about (π, 0, 0)", p[3:6])
	}
	if e.Instruction() != Instruction("long", 3) || e.Task() != 3 || len(e.InstructionTokens()) < 3 {
		t.Error("instruction accessors disagree")
	}
	for i, img := range e.Images() {
		if len(img) != 64*64*3 {
			t.Errorf("camera %d image has %d bytes", i, len(img))
		}
	}
	if e.Image("wrist") == nil || e.Image("top") != nil {
		t.Error("Image by name")
	}
}

func TestTaskSamplingFollowsFailures(t *testing.T) {
	e, _ := New(Config{Suite: "object", Tasks: []int{1, 4}})
	// Ten failures of task 4 give it weight 11 against 1.
	for range 10 {
		e.history[4].add(true)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	n4 := 0
	const n = 2400
	for range n {
		e.Reset(rng)
		if e.Task() == 4 {
			n4++
		} else if e.Task() != 1 {
			t.Fatalf("sampled task %d outside the configured ones", e.Task())
		}
	}
	// Expected 11/12 = 0.917; ±0.03 is over 5 standard deviations of
	// the binomial share at n = 2400 (sd 0.0056).
	if share := float64(n4) / n; share < 0.887 || share > 0.947 {
		t.Errorf("task 4 sampled %.3f of the time, want about 0.917", share)
	}
	// Outcomes are recorded once per episode and survive a restore.
	e.ResetTo(1, 0)
	for {
		if _, _, term, trunc := e.Step(make([]float64, ActionDim)); term || trunc {
			break
		}
	}
	if e.Failures(1) != 1 {
		t.Errorf("task 1 failures = %d after one truncated episode", e.Failures(1))
	}
	state, _ := e.MarshalBinary()
	f, _ := New(Config{Suite: "object", Tasks: []int{1, 4}})
	if err := f.UnmarshalBinary(state); err != nil || f.Failures(4) != 10 || f.Failures(1) != 1 {
		t.Errorf("restored history: %v, failures %d and %d", err, f.Failures(4), f.Failures(1))
	}
}

// TestOrientationContinuous checks that the observed axis-angle does not
// flip sign around pointing down (a half turn, where plain axis-angle is
// discontinuous): small tilts and yaws move it a little.
func TestOrientationContinuous(t *testing.T) {
	e, err := New(Config{Suite: SuiteSpatial})
	if err != nil {
		t.Fatal(err)
	}
	e.ResetTo(0, 0)
	prev := e.Proprio()
	for i, a := range [][]float64{{0, 0, 0, 0.1, 0, 0, 0}, {0, 0, 0, -0.2, 0, 0, 0}, {0, 0, 0, 0, 0.1, 0, 0}, {0, 0, 0, 0, -0.2, 0.5, 0}, {0, 0, 0, 0.1, 0.1, -1, 0}} {
		e.Step(a)
		p := e.Proprio()
		for k := 3; k < 6; k++ {
			// A step turns by at most 0.1 rad per axis; a flip moves a
			// component by up to 2π.
			if d := math.Abs(p[k] - prev[k]); d > 0.3 {
				t.Errorf("step %d: orientation %v → %v jumps by %.3f", i, prev[3:6], p[3:6], d)
			}
		}
		prev = p
	}
}

// AtEdge is false at every suite's fixed initial states (the tip starts inside
// the workspace) and true once full-speed motion toward any side has pinned the
// tip against that side's limit.
func TestAtEdge(t *testing.T) {
	for _, suite := range Suites() {
		e, _ := New(Config{Suite: suite, Tasks: []int{0}, MaxEpisodeSteps: 500})
		for i := range InitStates {
			e.ResetTo(0, i)
			if e.AtEdge() {
				t.Errorf("%s init %d: tip %v starts at the edge", suite, i, e.Proprio()[:3])
			}
		}
		for _, dir := range [][2]float64{{1, 0}, {-1, 0}, {0, 1}, {0, -1}} {
			e.ResetTo(0, 0)
			a := make([]float64, ActionDim)
			a[0], a[1] = dir[0], dir[1]
			// 60 steps of 1.5 cm are 0.9 m, more than the widest span (0.76 m).
			for range 60 {
				e.Step(a)
			}
			if !e.AtEdge() {
				t.Errorf("%s: 60 full-speed steps toward %v leave the tip at %v, not at the edge", suite, dir, e.Proprio()[:3])
			}
		}
	}
}
