package tabletop

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExpertSolvesTasks(t *testing.T) {
	tasks := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	inits := make([]int, InitStates)
	for i := range inits {
		inits[i] = i
	}
	if testing.Short() {
		tasks, inits = []int{0, 3, 6, 9}, []int{0, 31}
	}
	for _, suite := range Suites() {
		e, _ := New(Config{Suite: suite})
		for _, task := range tasks {
			for _, i := range inits {
				ok, n := PlayExpert(e, NewExpert(uint64(100*task+i)), task, i)
				if !ok {
					t.Errorf("%s task %d (%q) init %d: expert failed after %d steps", suite, task, Instruction(suite, task), i, n)
				}
			}
		}
	}
}

func TestBenchExpert(t *testing.T) {
	res, err := BenchExpert([]string{"spatial", "goal"}, BenchOptions{InitStates: 1, Render: true, ImageSize: 16, RenderInitStates: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Suites) != 2 || res.Suites[0].Suite != "spatial" || len(res.Suites[1].Tasks) != 10 {
		t.Fatalf("result shape %+v", res)
	}
	for _, s := range res.Suites {
		if s.SuccessRate < 0.98 || s.StepsPerS <= 0 || s.RenderStepsPerS <= 0 || s.MeanLength <= 0 {
			t.Errorf("%s: %+v", s.Suite, s)
		}
	}
	js, err := json.Marshal(res)
	if err != nil || !strings.Contains(string(js), `"suites":[{"suite":"spatial","success_rate":`) || !strings.Contains(string(js), `"render_steps_per_s"`) {
		t.Errorf("JSON %s (%v)", js, err)
	}
	if _, err := BenchExpert(nil, BenchOptions{InitStates: 51}); err == nil {
		t.Error("51 init states accepted")
	}
}

func TestRenderEpisode(t *testing.T) {
	dir := t.TempDir()
	rec, err := RenderEpisode(Config{Suite: "spatial", ImageSize: 16}, 2, true, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Success || rec.Steps == 0 || len(rec.FrameDirs) != 2 {
		t.Fatalf("record %+v", rec)
	}
	frames, _ := filepath.Glob(filepath.Join(dir, "wrist", "*.png"))
	if len(frames) != rec.Steps+1 {
		t.Errorf("%d wrist frames for %d steps", len(frames), rec.Steps)
	}
	if st, err := os.Stat(rec.Sheet); err != nil || st.Size() == 0 {
		t.Errorf("contact sheet: %v", err)
	}
	if _, err := RenderEpisode(Config{Suite: "spatial"}, 10, true, dir); err == nil {
		t.Error("task 10 accepted")
	}
}

// TestExpertClone plays a noisy expert for 30 steps, then a clone of it on a copy of the
// environment: the clone's next 40 actions equal the original's bit for bit (same plan, same
// noise stream), and playing the clone leaves the original's actions unchanged.
func TestExpertClone(t *testing.T) {
	newEnv := func() *Env {
		e, err := New(Config{Suite: SuiteSpatial, Tasks: []int{4}})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	play := func(cloneAt int) [][]float64 {
		e, scratch := newEnv(), newEnv()
		e.ResetTo(4, 7)
		x := NewExpert(9)
		var out [][]float64
		for step := range 70 {
			if step == cloneAt {
				b, err := e.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				if err := scratch.UnmarshalBinary(b); err != nil {
					t.Fatal(err)
				}
				c := x.Clone()
				for range 40 {
					scratch.Step(c.Act(scratch))
				}
			}
			a := x.Act(e)
			out = append(out, a)
			e.Step(a)
		}
		return out
	}
	ref := play(-1)
	got := play(30)
	for i := range ref {
		for j := range ref[i] {
			if got[i][j] != ref[i][j] {
				t.Fatalf("step %d: action %v after playing a clone, %v without", i, got[i], ref[i])
			}
		}
	}
	// The clone's own actions: replay from step 30 on a copy and compare to ref[30:].
	e, scratch := newEnv(), newEnv()
	e.ResetTo(4, 7)
	x := NewExpert(9)
	for range 30 {
		e.Step(x.Act(e))
	}
	b, _ := e.MarshalBinary()
	if err := scratch.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	c := x.Clone()
	for i := 30; i < 70; i++ {
		a := c.Act(scratch)
		scratch.Step(a)
		for j := range a {
			if a[j] != ref[i][j] {
				t.Fatalf("clone step %d: %v, original %v", i, a, ref[i])
			}
		}
	}
}

// TestExpertKeepYaw follows the expert until it descends onto the bowl, then
// freezes the arm (what a stalled learner does), so the expert's descent
// stalls and it retries: the plain expert retries with the other grasp yaw
// (the retry's point when it acts itself), one with KeepYaw keeps the yaw
// its plan chose, so a labeller never labels one state with both.
func TestExpertKeepYaw(t *testing.T) {
	yaws := func(keep bool) (first float64, flips, retries int) {
		e, err := New(Config{Suite: SuiteSpatial, Tasks: []int{2}})
		if err != nil {
			t.Fatal(err)
		}
		e.ResetTo(2, 0)
		x := NewExpert(1)
		x.Noise, x.KeepYaw = 0, keep
		frozen := make([]float64, ActionDim)
		first = math.NaN()
		for range 120 {
			a := x.Act(e)
			if math.IsNaN(first) {
				first = x.yaw
			} else if x.yaw != first {
				flips++
			}
			if x.phase == phDescend || x.retries > 0 {
				a = frozen
			}
			e.Step(a)
		}
		return first, flips, x.retries
	}
	if _, flips, retries := yaws(false); retries == 0 || flips == 0 {
		t.Fatalf("plain expert: %d retries, %d steps at another yaw; the frozen descent must make it retry with the other yaw", retries, flips)
	}
	if first, flips, retries := yaws(true); retries == 0 || flips != 0 {
		t.Errorf("KeepYaw: %d retries, %d steps at a yaw other than its first %.3f; want retries at one yaw", retries, flips, first)
	}
}

// TestExpertFollow checks the labeller mode against the two failures it is
// for. A learner that starts its descent early (the expert's moves, but
// straight down once within 2 cm of above the bowl) is labelled "climb back
// to the travel height" by the plain expert at states within 1 cm of the
// bowl's axis, never by a Follow expert; a learner that freezes on the
// descent makes the plain expert start over, never a Follow expert, whose
// label keeps pointing down. A Follow expert still solves the spatial
// tasks when it acts itself (noise-free and with the default noise).
func TestExpertFollow(t *testing.T) {
	play := func(follow, freeze bool) (climbs, restarts int, down bool) {
		e, err := New(Config{Suite: SuiteSpatial, Tasks: []int{2}})
		if err != nil {
			t.Fatal(err)
		}
		e.ResetTo(2, 0)
		actor, label := NewExpert(1), NewExpert(2)
		actor.Noise, label.Noise, label.Follow = 0, 0, follow
		bowl := e.suite.tasks[2].goal[0].a
		frozen := make([]float64, ActionDim)
		for range 60 {
			l := label.Act(e)
			a := actor.Act(e)
			g, b := &e.w.grip, e.w.ents[bowl].pos
			off := math.Hypot(b.x-g.tip.x, b.y-g.tip.y)
			switch {
			case freeze && actor.phase == phDescend:
				a = frozen
				down = l[2] < 0
			case !freeze && actor.phase == phApproach && off < 0.02:
				a[2] = -0.5
			}
			if !freeze && g.held < 0 && off < followReach && g.tip.z < b.z+0.08 && l[2] > 0.1 {
				climbs++
			}
			e.Step(a)
		}
		return climbs, label.Restarts(), down
	}
	if climbs, _, _ := play(false, false); climbs == 0 {
		t.Fatal("plain expert: no climb labels beside the bowl; the early descent must make it send the learner back up")
	}
	if climbs, _, _ := play(true, false); climbs != 0 {
		t.Errorf("Follow expert: %d climb labels beside the bowl; want descents", climbs)
	}
	if _, restarts, _ := play(false, true); restarts == 0 {
		t.Fatal("plain expert: no restart on a frozen descent")
	}
	if _, restarts, down := play(true, true); restarts != 0 || !down {
		t.Errorf("Follow expert on a frozen descent: %d restarts, last label down %v; want none, down", restarts, down)
	}
	e, _ := New(Config{Suite: SuiteSpatial})
	for task := range 10 {
		for _, noise := range []float64{0, 0.05} {
			x := NewExpert(uint64(7 + task))
			x.Noise, x.Follow = noise, true
			if ok, n := PlayExpert(e, x, task, task); !ok {
				t.Errorf("Follow expert (noise %g), task %d: failed after %d steps", noise, task, n)
			}
		}
	}
}

// TestExpertOverTarget: a Follow expert takes a held bowl a centimetre
// beside the plate's centre as over its target (so it labels "lower here"),
// not one 10 cm away, nor one that is not held; the plain expert never does
// (it goes to its place point).
func TestExpertOverTarget(t *testing.T) {
	e, err := New(Config{Suite: SuiteSpatial, Tasks: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	e.ResetTo(2, 0)
	x := NewExpert(1)
	x.Noise = 0
	for i := 0; x.phase != phLower; i++ {
		if i > 300 {
			t.Fatal("the expert never reached its lowering phase")
		}
		e.Step(x.Act(e))
	}
	p := e.suite.tasks[2].goal[0]
	if p.kind != predOn || e.w.grip.held != p.a {
		t.Fatalf("goal %+v, held %d: want On with the bowl held", p, e.w.grip.held)
	}
	f := NewExpert(2)
	f.Follow = true
	bowl, plate := &e.w.ents[p.a], e.w.ents[p.b].pos
	for _, c := range []struct {
		dx     float64
		follow bool
		want   bool
	}{{0.01, true, true}, {0.10, true, false}, {0.01, false, false}} {
		bowl.pos.x, bowl.pos.y = plate.x+c.dx, plate.y
		who := x
		if c.follow {
			who = f
		}
		if got := who.overTarget(&e.w, p); got != c.want {
			t.Errorf("bowl %.2f m from the plate's centre, Follow %v: over target %v, want %v", c.dx, c.follow, got, c.want)
		}
	}
	e.w.grip.held = -1
	bowl.pos.x = plate.x
	if f.overTarget(&e.w, p) {
		t.Error("a bowl not held is over target")
	}
}
