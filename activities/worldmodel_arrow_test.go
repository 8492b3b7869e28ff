package activities

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv"
)

// A world-model engine's checkpoint keeps B_real and B_img in Arrow files, not in
// engine.json, and an engine restored from those files trains on exactly like the original.
// A checkpoint of the older layout (both buffers inside engine.json) still loads.
func TestWorldModelBuffersRoundTripThroughArrow(t *testing.T) {
	c := tinyCartPole(specs.ModeSync, 100_000)
	c.WorldModel.Enabled = true
	c.WorldModel.OfflineTrajectories = 0 // fitted online: B_real fills from the first update
	c.WorldModel.ObsHidden, c.WorldModel.RewHidden = []int{8}, []int{8}
	c.WorldModel.ObsEvery, c.WorldModel.RewEvery = 1, 1
	c.WorldModel.ImaginationRatio = 0.5
	cfg := EngineConfig(c, 9, 50)
	eng, err := engine.New(cfg, nil, EnvFactory(c, 9))
	if err != nil {
		t.Fatal(err)
	}
	mustRunEngine(t, eng, 4)
	snap, err := eng.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	wm := snap.WorldModel
	if wm == nil || len(wm.RealLabel) == 0 || len(wm.Img) == 0 {
		t.Fatalf("after 4 updates the world model holds %d real transitions and %d imagined chunks; want some of both", len(wm.RealLabel), len(wm.Img))
	}
	files, err := snapshotFiles(snap)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(files[engineStateFile], []byte(`"real_hist":[`)) || bytes.Contains(files[engineStateFile], []byte(`"img":[`)) {
		t.Error("engine.json still holds B_real or B_img")
	}
	// Any Arrow reader sees one B_real row per held transition.
	r, err := ipc.NewFileReader(bytes.NewReader(files[realFile]))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.RecordBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	if int(rec.NumRows()) != len(wm.RealLabel) {
		t.Errorf("b_real.arrow has %d rows for %d transitions", rec.NumRows(), len(wm.RealLabel))
	}
	_ = r.Close()

	// The pre-Arrow layout: everything in engine.json.
	old := *snap
	oldJSON, err := json.Marshal(&old)
	if err != nil {
		t.Fatal(err)
	}
	legacy := map[string][]byte{engineStateFile: oldJSON}

	want := continueFrom(t, cfg, snap)
	for name, fs := range map[string]map[string][]byte{"arrow": files, "legacy json": legacy} {
		back, err := LoadSnapshot(fs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := continueFrom(t, cfg, back); got != want {
			t.Errorf("%s: resumed engine reaches params %s, the original %s", name, got, want)
		}
	}
}

// continueFrom restores snap into a fresh engine, trains 3 more updates and returns the
// parameters' SHA-256.
func continueFrom(t *testing.T, cfg engine.Config, snap *engine.Snapshot) string {
	t.Helper()
	eng, err := engine.New(cfg, snap, LatencyEnvFactory(specs.Env{Kind: cfg.Env, MaxEpisodeSteps: cfg.MaxEpisodeSteps}, testenv.Latency{}, cfg.Workers, cfg.EnvsPerWorker, cfg.Seed))
	if err != nil {
		t.Fatal(err)
	}
	mustRunEngine(t, eng, 3)
	return eng.ParamsSHA256()
}
