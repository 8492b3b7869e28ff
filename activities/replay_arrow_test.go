package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/specs"
)

// TestReplayArrowRoundTrip snapshots an async engine (whose replay buffer holds chunks
// between updates), lays it out as checkpoint files and reads it back: the replay buffer
// must come back chunk for chunk, and the Arrow file must carry the version and staleness tags.
func TestReplayArrowRoundTrip(t *testing.T) {
	c := specs.DefaultConfig()
	c.Env.Kind, c.Env.MaxEpisodeSteps = specs.EnvCartPole, 500
	c.Budget.EnvSteps = 20000
	c.Pipeline.Workers, c.Pipeline.EnvsPerWorker = 2, 2
	c.Pipeline.ChunkSteps, c.Pipeline.ReplayCapacity = 16, 4096
	c.Algorithm.BatchSteps, c.Algorithm.Epochs, c.Algorithm.Minibatches = 64, 1, 1
	c.Policy.Hidden = []int{8}
	eng, err := NewEngine(c, 5, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Whether rollout workers got ahead of the trainer when a Run stops is a matter of
	// timing; run single updates until they left chunks in replay (almost always at once).
	var snap *engine.Snapshot
	for try := 0; try < 50 && (snap == nil || len(snap.Replay) == 0); try++ {
		if _, err := eng.Run(context.Background(), 1, nil); err != nil {
			t.Fatal(err)
		}
		var err error
		if snap, err = eng.Snapshot(); err != nil {
			t.Fatal(err)
		}
	}
	if len(snap.Replay) == 0 {
		t.Fatal("50 async updates left nothing in replay; nothing to round-trip")
	}
	files, err := snapshotFiles(snap)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(files[engineStateFile], []byte(`"replay":[{`)) {
		t.Error("engine.json still holds the replay chunks")
	}
	back, err := LoadSnapshot(files)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(snap.Replay)
	got, _ := json.Marshal(back.Replay)
	if !bytes.Equal(want, got) {
		t.Errorf("replay differs after the Arrow round trip:\n got %.300s\nwant %.300s", got, want)
	}
	// The restored snapshot is accepted by a fresh engine.
	if _, err := NewEngine(c, 5, 100, back); err != nil {
		t.Fatalf("restore: %v", err)
	}

	// Read the file as any Arrow reader would: one row per chunk, staleness = version - acting version.
	r, err := ipc.NewFileReader(bytes.NewReader(files[replayFile]))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	rec, err := r.RecordBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	if int(rec.NumRows()) != len(snap.Replay) {
		t.Fatalf("%d rows for %d chunks", rec.NumRows(), len(snap.Replay))
	}
	idx := rec.Schema().FieldIndices("staleness")
	if len(idx) != 1 {
		t.Fatal("no staleness column")
	}
	stale := rec.Column(idx[0]).(*array.List)
	lo, _ := stale.ValueOffsets(0)
	first := stale.ListValues().(*array.Int64).Value(int(lo))
	if wantStale := snap.PolicyVersion - snap.Replay[0].Versions[0]; first != wantStale {
		t.Errorf("staleness of chunk 0 step 0 = %d, want %d", first, wantStale)
	}
}

// TestPixelWMStateFiles checks that an online pixel world model's trainer records travel as
// checkpoint files of their own (not base64 inside engine.json) and come back byte for
// byte, and that a checkpoint missing one says which.
func TestPixelWMStateFiles(t *testing.T) {
	snap := &engine.Snapshot{PixelWM: &engine.PixelWMState{Obs: []byte("obs-record"), Rew: []byte("rew-record"), Proprio: []byte("proprio-record"), ObsFits: 3, RewFits: 1}}
	files, err := snapshotFiles(snap)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(files[engineStateFile], []byte("b2JzLXJlY29yZA")) || string(files[pixelObsStateFile]) != "obs-record" {
		t.Errorf("engine.json %s; %s holds %q", files[engineStateFile], pixelObsStateFile, files[pixelObsStateFile])
	}
	back, err := LoadSnapshot(files)
	if err != nil {
		t.Fatal(err)
	}
	if px := back.PixelWM; px == nil || string(px.Obs) != "obs-record" || string(px.Rew) != "rew-record" || string(px.Proprio) != "proprio-record" || px.ObsFits != 3 || px.RewFits != 1 {
		t.Errorf("restored %+v", back.PixelWM)
	}
	delete(files, pixelRewStateFile)
	if _, err := LoadSnapshot(files); err == nil || !bytes.Contains([]byte(err.Error()), []byte(pixelRewStateFile)) {
		t.Errorf("a checkpoint without %s: %v", pixelRewStateFile, err)
	}
}
