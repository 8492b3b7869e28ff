package demos

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/accerl/accerl/testenv/tabletop"
)

// smallConfig is 2 episodes per task of the goal suite with 16×16 images of both cameras.
func smallConfig() Config {
	return Config{Suite: "goal", PerTask: 2, Images: true, ImageSize: 16, Seed: 7}
}

func TestCollectReadBack(t *testing.T) {
	dir := t.TempDir()
	var last, total int
	info, err := Collect(context.Background(), smallConfig(), dir, func(done, n int) { last, total = done, n })
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Files) != 10 || info.Episodes != 20 || last != 20 || total != 20 {
		t.Fatalf("manifest: %d files, %d episodes; progress %d/%d; want 10 files, 20 episodes", len(info.Files), info.Episodes, last, total)
	}
	for _, f := range info.Files {
		// The scripted expert solves every goal task (bench expert: 100%).
		if f.Successes != 2 {
			t.Errorf("task %d: %d of 2 demonstrations succeeded", f.Task, f.Successes)
		}
	}
	d, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != info.Rows || len(d.State) != d.Len()*tabletop.ObsDim || len(d.Action) != d.Len()*tabletop.ActionDim ||
		len(d.Images) != 2 || len(d.Images[0]) != d.Len()*16*16*3 {
		t.Fatalf("read back %d rows (%d state, %d action values, %d cameras), manifest says %d rows", d.Len(), len(d.State), len(d.Action), len(d.Images), info.Rows)
	}
	// Collecting again with the same config is idempotent; a removed file is rebuilt the same.
	if err := os.Remove(filepath.Join(dir, "task-03.arrow")); err != nil {
		t.Fatal(err)
	}
	again, err := Collect(context.Background(), smallConfig(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Files, info.Files) {
		t.Errorf("recollected files differ:\n%+v\n%+v", again.Files, info.Files)
	}
}

// An independent reader: the Arrow library alone, by column name, finds what the dataset
// promises — one row per step, the episode's last row ending it, and images that are the
// environment's own frames.
func TestArrowReaderSeesTheColumns(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Suite: "spatial", PerTask: 1, Images: true, ImageSize: 16, Seed: 3}
	if _, err := Collect(context.Background(), cfg, dir, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "task-00.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec, err := r.RecordBatchAt(0)
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no column %q in %v", name, rec.Schema())
		}
		return idx[0]
	}
	n := int(rec.NumRows())
	term := rec.Column(col("terminated")).(*array.Boolean)
	if !term.Value(n - 1) {
		t.Errorf("the last row does not terminate the episode")
	}
	for i := 0; i < n-1; i++ {
		if term.Value(i) {
			t.Errorf("row %d terminates before the episode's end", i)
		}
	}
	img := rec.Column(col("image_agentview")).(*array.FixedSizeBinary).Value(0)
	env, err := tabletop.New(tabletop.Config{Suite: "spatial", Tasks: []int{0}, ImageSize: 16, Render: true})
	if err != nil {
		t.Fatal(err)
	}
	// Episode 0 of task 0 starts from rand.NewPCG(seed, 0), as the package documents.
	env.Reset(newRNG(cfg.Seed, 0))
	if !bytes.Equal(img, env.Images()[0]) {
		t.Errorf("row 0's agentview image is not the environment's first frame")
	}
	if got := rec.Column(col("action")).(*array.FixedSizeList).Len(); got != n {
		t.Errorf("action column has %d rows, want %d", got, n)
	}
}

func TestCorruptFileIsCaught(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Suite: "object", PerTask: 1, Seed: 1}
	if _, err := Collect(context.Background(), cfg, dir, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "task-05.arrow")
	b, _ := os.ReadFile(path)
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); err == nil {
		t.Fatal("a corrupted file was read without error")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{Suite: "kitchen", PerTask: 1},
		{Suite: "goal", PerTask: 0},
		{Suite: "goal", PerTask: 1, Images: true, ImageSize: 100},
		{Suite: "goal", PerTask: 1, Images: true, Cameras: []string{"top"}},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", c)
		}
	}
}
