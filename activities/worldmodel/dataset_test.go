package worldmodel

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/accerl/accerl/testenv"
)

// rawRows counts the rows and the distinct episodes of one Arrow IPC file
// with the arrow reader directly, independently of ReadDataset.
func rawRows(t *testing.T, path string) (rows int, episodes []int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range r.NumRecords() {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			t.Fatal(err)
		}
		ep := rec.Column(r.Schema().FieldIndices("episode")[0]).(*array.Int64)
		for j := 0; j < ep.Len(); j++ {
			if len(episodes) == 0 || episodes[len(episodes)-1] != ep.Value(j) {
				episodes = append(episodes, ep.Value(j))
			}
		}
		rows += int(rec.NumRows())
		rec.Release()
	}
	return rows, episodes
}

func TestCollectOfflinePendulumRowCount(t *testing.T) {
	// Pendulum-v1 never terminates, so with a 10-step limit every episode
	// has exactly 10 rows: 3 episodes → 30 rows, in shards of 2 + 1.
	dir := t.TempDir()
	cfg := CollectConfig{Env: "pendulum", MaxEpisodeSteps: 10, Trajectories: 3, Behaviour: BehaviourRandom, Seed: 5, EpisodesPerFile: 2}
	info, err := CollectOffline(context.Background(), cfg, dir, testSims(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if info.Rows != 30 || info.Episodes != 3 || len(info.Files) != 2 || info.ObsDim != 3 || info.NumActions != 0 || info.ActionDims != 1 {
		t.Fatalf("info = %+v, want 30 rows, 3 episodes, 2 files, obs 3, continuous 1-d actions", info)
	}
	want := []struct {
		rows     int
		episodes []int64
	}{{20, []int64{0, 1}}, {10, []int64{2}}}
	for i, f := range info.Files {
		rows, eps := rawRows(t, filepath.Join(dir, f.Name))
		if rows != want[i].rows || !slices.Equal(eps, want[i].episodes) || f.Rows != rows {
			t.Errorf("%s: %d rows of episodes %v (manifest %d), want %d of %v", f.Name, rows, eps, f.Rows, want[i].rows, want[i].episodes)
		}
	}
	ds, err := ReadDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 30 {
		t.Fatalf("ReadDataset: %d rows, want 30", ds.Len())
	}
	for i := 0; i < ds.Len(); i++ {
		if a := ds.Action[i]; a < -2 || a > 2 {
			t.Errorf("row %d: action %v outside Pendulum's [−2, 2]", i, a)
		}
		if ds.T[i] != int64(i%10) || ds.Truncated[i] != (i%10 == 9) || ds.Terminated[i] {
			t.Errorf("row %d: t %d truncated %v terminated %v", i, ds.T[i], ds.Truncated[i], ds.Terminated[i])
		}
	}
}

func TestCollectOfflineCartPoleMatchesIndependentReplay(t *testing.T) {
	dir := t.TempDir()
	cfg := CollectConfig{Env: "cartpole", Trajectories: 7, Behaviour: BehaviourRandom, Seed: 11, EpisodesPerFile: 3}
	info, err := CollectOffline(context.Background(), cfg, dir, testSims(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := ReadDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Rows counted straight from the files agree with the manifest and the
	// dataset read back.
	total := 0
	for _, f := range info.Files {
		rows, _ := rawRows(t, filepath.Join(dir, f.Name))
		total += rows
	}
	if total != info.Rows || ds.Len() != total || len(info.Files) != 3 {
		t.Fatalf("rows: files %d, manifest %d, dataset %d (files %d, want 3)", total, info.Rows, ds.Len(), len(info.Files))
	}

	// Replay every episode as documented (episode e uses PCG(Seed, e) for
	// its reset and then one uniform action per step) and compare.
	env := testenv.NewCartPole(testenv.Options{})
	row := 0
	for e := 0; e < 7; e++ {
		rng := rand.New(rand.NewPCG(11, uint64(e)))
		obs := env.Reset(rng)
		for step := 0; ; step++ {
			a := float64(rng.IntN(2))
			next, r, term, trunc := env.Step([]float64{a})
			if ds.Episode[row] != int64(e) || ds.T[row] != int64(step) || ds.Action[row] != a || ds.Reward[row] != r ||
				ds.Terminated[row] != term || ds.Truncated[row] != trunc ||
				!slices.Equal(ds.Obs[row*4:row*4+4], obs) || !slices.Equal(ds.NextObs[row*4:row*4+4], next) {
				t.Fatalf("episode %d step %d (row %d) differs from the replay", e, step, row)
			}
			row++
			if term || trunc {
				break
			}
			obs = next
		}
	}
	if row != ds.Len() {
		t.Errorf("replay has %d rows, dataset %d", row, ds.Len())
	}
}

func TestCollectOfflineIsIdempotentAndResumable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := CollectConfig{Env: "cartpole", Trajectories: 7, Behaviour: BehaviourRandom, Seed: 3, EpisodesPerFile: 3}
	first, err := CollectOffline(ctx, cfg, dir, testSims(cfg))
	if err != nil {
		t.Fatal(err)
	}
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	touch := func() {
		for _, f := range append(slices.Clone(first.Files), DatasetFile{Name: ManifestFile}) {
			if err := os.Chtimes(filepath.Join(dir, f.Name), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	mtime := func(name string) time.Time {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return st.ModTime()
	}

	// A second call with a verified dataset writes nothing.
	touch()
	again, err := CollectOffline(ctx, cfg, dir, testSims(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, first) {
		t.Errorf("second call returned %+v, want %+v", again, first)
	}
	for _, f := range append(slices.Clone(first.Files), DatasetFile{Name: ManifestFile}) {
		if !mtime(f.Name).Equal(old) {
			t.Errorf("%s was rewritten by an idempotent call", f.Name)
		}
	}

	// A crash after shard 0, with shard 1 missing and shard 2 torn, and no
	// manifest: shard 0 is kept, the others are rewritten byte-identically.
	touch()
	must(t, os.Remove(filepath.Join(dir, ManifestFile)))
	must(t, os.Remove(filepath.Join(dir, first.Files[1].Name)))
	must(t, os.Truncate(filepath.Join(dir, first.Files[2].Name), 100))
	resumed, err := CollectOffline(ctx, cfg, dir, testSims(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resumed, first) {
		t.Errorf("resumed dataset %+v differs from the original %+v", resumed, first)
	}
	if !mtime(first.Files[0].Name).Equal(old) {
		t.Errorf("the intact shard was rewritten")
	}
	if mtime(first.Files[2].Name).Equal(old) {
		t.Errorf("the torn shard was not rewritten")
	}

	// A corrupted byte after the manifest was written: ReadDataset refuses
	// it and CollectOffline repairs it.
	path := filepath.Join(dir, first.Files[1].Name)
	data, err := os.ReadFile(path)
	must(t, err)
	data[len(data)/2] ^= 0xff
	must(t, os.WriteFile(path, data, 0o644))
	if _, err := ReadDataset(dir); err == nil {
		t.Error("ReadDataset accepted a corrupted shard")
	}
	repaired, err := CollectOffline(ctx, cfg, dir, testSims(cfg))
	if err != nil || !reflect.DeepEqual(repaired, first) {
		t.Errorf("repair: %v, %+v", err, repaired)
	}

	// Fewer trajectories: a new dataset in 2 shards, the third file removed.
	cfg.Trajectories = 4
	small, err := CollectOffline(ctx, cfg, dir, testSims(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if small.Episodes != 4 || len(small.Files) != 2 {
		t.Errorf("4 trajectories: %+v", small)
	}
	if _, err := os.Stat(filepath.Join(dir, first.Files[2].Name)); !os.IsNotExist(err) {
		t.Errorf("stale shard %s still exists (%v)", first.Files[2].Name, err)
	}
	// Shard 0 was made for 7 trajectories; its metadata no longer matches,
	// so it was rewritten, and the new dataset reads back whole.
	ds, err := ReadDataset(dir)
	if err != nil || ds.Len() != small.Rows || ds.Episode[ds.Len()-1] != 3 {
		t.Errorf("reading the 4-trajectory dataset: %v", err)
	}
}

func TestCollectOfflineCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	cfg := CollectConfig{Env: "cartpole", Trajectories: 2, Behaviour: BehaviourRandom}
	_, err := CollectOffline(ctx, cfg, dir, testSims(cfg))
	if err == nil {
		t.Fatal("a cancelled collection succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestFile)); !os.IsNotExist(err) {
		t.Errorf("a cancelled collection wrote a manifest (%v)", err)
	}
}

func TestCollectConfigValidate(t *testing.T) {
	for _, bad := range []CollectConfig{
		{Env: "", Trajectories: 1, Behaviour: BehaviourRandom},
		{Env: "cartpole", Trajectories: 0, Behaviour: BehaviourRandom},
		{Env: "cartpole", Trajectories: 1, Behaviour: "expert"},
		{Env: "cartpole", Trajectories: 1, Behaviour: BehaviourRandom, MaxEpisodeSteps: -1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", bad)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
