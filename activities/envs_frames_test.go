package activities

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/accerl/accerl/activities/checkpoint"
	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv/tabletop"
)

// pixelTabletop is a small async tabletop arm with pixels: 32×32 frames of both cameras.
func pixelTabletop() specs.Config {
	c := specs.DefaultConfig()
	c.Budget.EnvSteps = 1024
	c.Env = specs.Env{Kind: specs.EnvTabletop, Suite: "spatial", Tasks: []int{0, 1}, MaxEpisodeSteps: 40, ImageSize: 32,
		Cameras: []string{"agentview", "wrist"}, Latency: c.Env.Latency, Pixels: true}
	c.Policy.Action, c.Policy.Hidden = specs.ActionTokens, []int{8}
	c.Algorithm.BatchSteps, c.Algorithm.Minibatches, c.Algorithm.Epochs = 128, 2, 1
	c.Pipeline.Mode, c.Pipeline.Workers, c.Pipeline.EnvsPerWorker = specs.ModeAsync, 2, 2
	c.Pipeline.ChunkSteps, c.Pipeline.ReplayCapacity = 16, 512
	return c
}

// A tabletop arm with pixels: every environment's frame is its cameras' images, and a
// segment's checkpoint holds the frames of the replay buffer in replay.arrow (one binary
// value per step, read back here with Arrow's own reader) and of every environment.
func TestTabletopPixelsInCheckpoint(t *testing.T) {
	c := pixelTabletop()
	env, err := EnvFactory(c, 1)(0)
	if err != nil {
		t.Fatal(err)
	}
	fe, ok := env.(engine.FrameEnv)
	fb := 2*32*32*3 + 2*InstructionTokens
	if !ok || fe.FrameBytes() != fb {
		t.Fatalf("tabletop env with pixels: FrameEnv %v, %d bytes; want %d", ok, fe.FrameBytes(), fb)
	}
	tt := mustTabletop(t, c.Env)
	fx := &fixedInitEnv{Env: simEnv{tt}, to: tt, tasks: []int{0}}
	fx.Reset(nil)
	ims := tt.Images()
	got := (framedEnv{Env: fx, cams: tabletopFrames{tt}}).Frame(nil)
	if len(ims) != 2 || len(got) != fb || !slices.Equal(got[:6144], slices.Concat(ims...)) {
		t.Fatal("a tabletop frame does not start with its cameras' images")
	}
	var words []string
	for i := 6144; i < fb; i += 2 {
		if id := binary.LittleEndian.Uint16(got[i:]); id != tabletop.TokenPad {
			words = append(words, tabletop.Vocabulary()[id])
		}
	}
	if want := "<bos> " + tt.Instruction() + " <eos>"; strings.Join(words, " ") != want {
		t.Errorf("the frame's instruction reads %q, want %q", strings.Join(words, " "), want)
	}

	dir := t.TempDir()
	runner := newSegmentRunner(t)
	res := runner.run(TrainSegmentInput{RunDir: dir, Experiment: "e", Arm: "base", Seed: 1, SpecHash: "h", Config: c,
		Plan: runstate.Plan{Segment: 1, Updates: 2, TotalUpdates: 8}})
	_, files, err := checkpoint.Load(res.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := LoadSnapshot(files)
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, ch := range snap.Replay {
		if len(ch.Frames) != ch.Len()*fb {
			t.Fatalf("chunk (%d, %d): %d frame bytes for %d steps", ch.Env, ch.Seq, len(ch.Frames), ch.Len())
		}
		steps += ch.Len()
	}
	for i, es := range snap.Envs {
		if len(es.Frame) != fb {
			t.Fatalf("env %d: frame of %d bytes", i, len(es.Frame))
		}
	}
	if steps == 0 {
		t.Skip("the async segment left no chunk in replay to check (timing); the frames of the environments were checked")
	}

	// An independent read of replay.arrow: the frames column, one value of fb bytes per step.
	r, err := ipc.NewFileReader(bytes.NewReader(files[replayFile]), ipc.WithAllocator(memory.NewGoAllocator()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec, err := r.RecordBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	idx := rec.Schema().FieldIndices("frames")
	if len(idx) != 1 {
		t.Fatalf("replay.arrow has no frames column: %v", rec.Schema())
	}
	list := rec.Column(idx[0]).(*array.List)
	vals := list.ListValues().(*array.Binary)
	if vals.Len() != steps {
		t.Fatalf("frames column has %d values, replay %d steps", vals.Len(), steps)
	}
	distinct := map[string]bool{}
	for i := range vals.Len() {
		if len(vals.Value(i)) != fb {
			t.Fatalf("frame %d has %d bytes", i, len(vals.Value(i)))
		}
		distinct[string(vals.Value(i))] = true
	}
	if len(distinct) < 2 {
		t.Error("every stored frame is the same image: the frames do not follow the scene")
	}
	t.Logf("%d steps in replay: replay.arrow %d bytes (%.0f per step on disk, ZSTD), %d frame bytes per step in memory",
		steps, len(files[replayFile]), float64(len(files[replayFile]))/float64(steps), fb)
}

func mustTabletop(t *testing.T, e specs.Env) *tabletop.Env {
	t.Helper()
	sim, err := MakeSim(e)
	if err != nil {
		t.Fatal(err)
	}
	return sim.(*tabletop.Env)
}

// The evaluation environment of a tabletop VLA arm (fixed starts under the proprio
// features, action chunks and frames) numbers its episodes: episode n started on a fresh
// environment through engine.ResetEpisode, in any order, is the n-th Reset of another fresh
// one (task n mod T from initial state n div T), observation and frame alike. Without the
// wrappers passing it on, an evaluation played on 16 environments side by side started
// every environment's first episode from task 0's first state.
func TestTabletopEvalEnvNumbersEpisodes(t *testing.T) {
	c := pixelTabletop()
	c.Policy.ActionChunk, c.Policy.ExecuteSteps = 8, 2
	factory := EnvFactory(c, 1)
	eval := c.Pipeline.Workers * c.Pipeline.EnvsPerWorker // the first index past the rollout environments
	seq, err := factory(eval)
	if err != nil {
		t.Fatal(err)
	}
	defer engine.CloseEnv(seq)
	type start struct {
		obs   []float64
		frame []byte
	}
	var want []start
	for range 6 {
		obs := seq.Reset(nil)
		want = append(want, start{obs, seq.(engine.FrameEnv).Frame(nil)})
	}
	if slices.Equal(want[0].frame, want[1].frame) || slices.Equal(want[0].frame, want[2].frame) {
		t.Fatal("episodes 0, 1 and 2 start from the same frame: the fixed starts do not vary")
	}
	numbered, err := factory(eval)
	if err != nil {
		t.Fatal(err)
	}
	defer engine.CloseEnv(numbered)
	if _, ok := numbered.(engine.EpisodeResetter); !ok {
		t.Fatalf("the evaluation environment %T does not number its episodes (engine.EpisodeResetter)", numbered)
	}
	for _, n := range []int{3, 0, 5, 1, 4} {
		obs := engine.ResetEpisode(numbered, n, nil)
		if !slices.Equal(obs, want[n].obs) || !bytes.Equal(numbered.(engine.FrameEnv).Frame(nil), want[n].frame) {
			t.Errorf("ResetEpisode(%d) on a fresh environment is not its %d-th start", n, n)
		}
	}
}
