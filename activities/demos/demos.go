// Package demos records and reads expert demonstrations of the tabletop suites: the dataset
// that behaviour cloning (BC) trains a policy on before RL, as AcceRL and OpenVLA start from
// LIBERO's 50 demonstrations per task.
//
// # Layout
//
//	<dir>/
//	  demos.json         manifest: config, schema version, per-file rows, episodes and SHA-256 (written last)
//	  task-00.arrow      one Arrow IPC file per task, ZSTD-compressed, one row per step
//	  task-01.arrow
//	  …
//
// A row is one step t of episode e of a task: the state vector the policy saw (46 values,
// tabletop.ObsDim), the proprioception (8), the expert's 7-D action, the reward, whether the
// step ended the episode (terminated: the goal holds; truncated: the step limit), whether
// the episode succeeded (on every row of it), the instruction's token ids (tabletop's word
// vocabulary) and, when images are recorded, one binary column per camera holding the
// size×size×3 RGB bytes the cameras saw before the action. Any Arrow reader can read the
// files (pyarrow: pa.ipc.open_file; the columns are named as above).
//
// Collection is deterministic (episode e of task k starts from rand.NewPCG(seed, k·1000+e)
// and the expert acts with seed·1000003 + k·1000 + e), resumable (finished task files that
// verify are kept; the manifest is written last, so a crash never leaves a dataset that
// looks complete) and idempotent (a verified dataset of the same config is returned as is).
package demos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/accerl/accerl/runstore"
	"github.com/accerl/accerl/testenv/tabletop"
)

// Dataset layout constants.
const (
	// ManifestFile is the dataset's manifest; its presence commits the dataset.
	ManifestFile = "demos.json"
	// SchemaVersion is written into the manifest and every file's metadata.
	SchemaVersion = "1"
)

// Config describes a demonstration dataset. Equal configs describe equal bytes.
type Config struct {
	// Suite is the tabletop suite ("spatial", "object", "goal", "long").
	Suite string `json:"suite"`
	// PerTask is the number of expert episodes per task (LIBERO: 50). >= 1.
	PerTask int `json:"per_task"`
	// Images records the cameras' frames; ImageSize and Cameras are then the resolution and
	// the cameras (defaults: 64, both). Without images a dataset holds states only, enough
	// to clone a state-vector policy.
	Images    bool     `json:"images"`
	ImageSize int      `json:"image_size,omitempty"`
	Cameras   []string `json:"cameras,omitempty"`
	// Seed selects the episodes' initial states and the expert's action noise.
	Seed uint64 `json:"seed"`
}

// Normalize fills the image defaults.
func (c Config) Normalize() Config {
	if !c.Images {
		c.ImageSize, c.Cameras = 0, nil
		return c
	}
	if c.ImageSize == 0 {
		c.ImageSize = tabletop.DefaultImageSize
	}
	if len(c.Cameras) == 0 {
		c.Cameras = tabletop.Cameras()
	}
	return c
}

// Validate reports a config Collect cannot run.
func (c Config) Validate() error {
	c = c.Normalize()
	var errs []error
	if err := tabletop.ValidateSuite(c.Suite); err != nil {
		errs = append(errs, err)
	}
	if c.PerTask < 1 {
		errs = append(errs, fmt.Errorf("per-task episodes must be at least 1, got %d", c.PerTask))
	}
	if c.Images {
		if err := tabletop.ValidateImageSize(c.ImageSize); err != nil {
			errs = append(errs, err)
		}
		for _, cam := range c.Cameras {
			if err := tabletop.ValidateCamera(cam); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("demos config: %w", err)
	}
	return nil
}

// File describes one task's file.
type File struct {
	Name     string `json:"name"`
	Task     int    `json:"task"`
	Episodes int    `json:"episodes"`
	Rows     int    `json:"rows"`
	// Successes counts the episodes that reached the goal.
	Successes int    `json:"successes"`
	SHA256    string `json:"sha256"`
}

// Info is a dataset's manifest.
type Info struct {
	Dir           string `json:"-"`
	SchemaVersion string `json:"schema_version"`
	Config        Config `json:"config"`
	Files         []File `json:"files"`
	Episodes      int    `json:"episodes"`
	Rows          int    `json:"rows"`
	// BytesPerRow is the uncompressed size of one row (state, proprio, action, flags,
	// instruction and images); the files are ZSTD-compressed.
	BytesPerRow int `json:"bytes_per_row"`
}

// Demos is a dataset in memory: per-row columns, row-major.
type Demos struct {
	Info       Info
	Task       []int
	Episode    []int
	T          []int
	State      []float64 // Len×tabletop.ObsDim
	Proprio    []float64 // Len×tabletop.ProprioDim
	Action     []float64 // Len×tabletop.ActionDim
	Reward     []float64
	Terminated []bool
	Truncated  []bool
	Success    []bool // the row's episode succeeded
	Instr      [][]int
	// Images[c] holds camera c's frames (Info.Config.Cameras order), Len×size×size×3 bytes;
	// nil without images.
	Images [][]byte
}

// Len is the number of rows.
func (d *Demos) Len() int { return len(d.Reward) }

// Progress reports collection progress: episodes done of total.
type Progress func(done, total int)

// Collect records cfg.PerTask expert episodes of every task of the suite into dir and returns
// the manifest. See the package documentation for determinism, resumption and layout.
func Collect(ctx context.Context, cfg Config, dir string, progress Progress) (Info, error) {
	cfg = cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return Info{}, err
	}
	if info, err := readManifest(dir); err == nil && info.SchemaVersion == SchemaVersion && reflect.DeepEqual(info.Config, cfg) {
		if err := verify(info); err == nil {
			return info, nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Info{}, fmt.Errorf("collect demos: %w", err)
	}
	tasks := tabletop.TaskCount(cfg.Suite)
	info := Info{Dir: dir, SchemaVersion: SchemaVersion, Config: cfg, BytesPerRow: bytesPerRow(cfg)}
	for task := range tasks {
		name := fmt.Sprintf("task-%02d.arrow", task)
		path := filepath.Join(dir, name)
		d, err := readFile(path, cfg, task)
		if err != nil {
			if d, err = collectTask(ctx, cfg, task); err != nil {
				return Info{}, fmt.Errorf("collect demos of %s task %d: %w", cfg.Suite, task, err)
			}
			if err := writeFile(path, cfg, task, d); err != nil {
				return Info{}, err
			}
		}
		sum, err := runstore.FileSHA256(path)
		if err != nil {
			return Info{}, err
		}
		f := File{Name: name, Task: task, Episodes: cfg.PerTask, Rows: d.Len(), SHA256: sum}
		for i := range d.Len() {
			if d.T[i] == 0 && d.Success[i] {
				f.Successes++
			}
		}
		info.Files = append(info.Files, f)
		info.Episodes += f.Episodes
		info.Rows += f.Rows
		if progress != nil {
			progress((task+1)*cfg.PerTask, tasks*cfg.PerTask)
		}
	}
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return Info{}, err
	}
	if err := runstore.WriteFileAtomic(filepath.Join(dir, ManifestFile), func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	}); err != nil {
		return Info{}, fmt.Errorf("collect demos: %w", err)
	}
	return info, nil
}

// bytesPerRow is the uncompressed size of a row.
func bytesPerRow(cfg Config) int {
	n := 8 * (tabletop.ObsDim + tabletop.ProprioDim + tabletop.ActionDim + 1) // floats
	n += 3*8 + 3                                                              // task, episode, t; flags
	n += 8 * 24                                                               // instruction tokens, about
	if cfg.Images {
		n += len(cfg.Cameras) * cfg.ImageSize * cfg.ImageSize * 3
	}
	return n
}

// collectTask plays cfg.PerTask expert episodes of one task.
func collectTask(ctx context.Context, cfg Config, task int) (*Demos, error) {
	env, err := tabletop.New(tabletop.Config{Suite: cfg.Suite, Tasks: []int{task}, ImageSize: max(cfg.ImageSize, 16),
		Cameras: cfg.Cameras, Render: cfg.Images})
	if err != nil {
		return nil, err
	}
	d := &Demos{}
	if cfg.Images {
		d.Images = make([][]byte, len(cfg.Cameras))
	}
	for e := range cfg.PerTask {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ep := uint64(task*1000 + e)
		rng := newRNG(cfg.Seed, ep)
		x := tabletop.NewExpert(cfg.Seed*1000003 + ep)
		obs := env.Reset(rng)
		first := d.Len()
		for t := 0; ; t++ {
			a := x.Act(env)
			d.Task, d.Episode, d.T = append(d.Task, task), append(d.Episode, e), append(d.T, t)
			d.State = append(d.State, obs...)
			d.Proprio = append(d.Proprio, env.Proprio()...)
			d.Action = append(d.Action, a...)
			d.Instr = append(d.Instr, env.InstructionTokens())
			if cfg.Images {
				for c, img := range env.Images() {
					d.Images[c] = append(d.Images[c], img...)
				}
			}
			next, r, term, trunc := env.Step(a)
			d.Reward = append(d.Reward, r)
			d.Terminated, d.Truncated = append(d.Terminated, term), append(d.Truncated, trunc)
			d.Success = append(d.Success, false)
			obs = next
			if term || trunc {
				for i := first; i < d.Len(); i++ {
					d.Success[i] = term
				}
				break
			}
		}
	}
	return d, nil
}

// Read reads the dataset in dir, checking every file's SHA-256, schema and row counts
// against the manifest.
func Read(dir string) (*Demos, error) {
	info, err := readManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("read demos %q: %w", dir, err)
	}
	if info.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("read demos %q: schema version %q, want %q (collect them again)", dir, info.SchemaVersion, SchemaVersion)
	}
	if err := verify(info); err != nil {
		return nil, fmt.Errorf("read demos %q: %w", dir, err)
	}
	all := &Demos{Info: info}
	if info.Config.Images {
		all.Images = make([][]byte, len(info.Config.Cameras))
	}
	for _, f := range info.Files {
		d, err := readFile(filepath.Join(dir, f.Name), info.Config, f.Task)
		if err != nil {
			return nil, fmt.Errorf("read demos %q: %s: %w", dir, f.Name, err)
		}
		if d.Len() != f.Rows {
			return nil, fmt.Errorf("read demos %q: %s has %d rows, manifest says %d", dir, f.Name, d.Len(), f.Rows)
		}
		all.append(d)
	}
	return all, nil
}

func (d *Demos) append(o *Demos) {
	d.Task, d.Episode, d.T = append(d.Task, o.Task...), append(d.Episode, o.Episode...), append(d.T, o.T...)
	d.State, d.Proprio, d.Action = append(d.State, o.State...), append(d.Proprio, o.Proprio...), append(d.Action, o.Action...)
	d.Reward = append(d.Reward, o.Reward...)
	d.Terminated, d.Truncated, d.Success = append(d.Terminated, o.Terminated...), append(d.Truncated, o.Truncated...), append(d.Success, o.Success...)
	d.Instr = append(d.Instr, o.Instr...)
	for c := range d.Images {
		d.Images[c] = append(d.Images[c], o.Images[c]...)
	}
}

func readManifest(dir string) (Info, error) {
	var info Info
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("decode %s: %w", ManifestFile, err)
	}
	info.Dir = dir
	return info, nil
}

func verify(info Info) error {
	for _, f := range info.Files {
		sum, err := runstore.FileSHA256(filepath.Join(info.Dir, f.Name))
		if err != nil {
			return err
		}
		if sum != f.SHA256 {
			return fmt.Errorf("%s: SHA-256 %.12s, manifest says %.12s", f.Name, sum, f.SHA256)
		}
	}
	return nil
}

// Column names.
const (
	colTask       = "task"
	colEpisode    = "episode"
	colT          = "t"
	colState      = "state"
	colProprio    = "proprio"
	colAction     = "action"
	colReward     = "reward"
	colTerminated = "terminated"
	colTruncated  = "truncated"
	colSuccess    = "success"
	colInstr      = "instruction_tokens"
	colImage      = "image_" // + camera name
)

func schema(cfg Config, task int) *arrow.Schema {
	cfgJSON, _ := json.Marshal(cfg) // strings, ints and bools cannot fail
	md := arrow.NewMetadata([]string{"accerl.table", "accerl.schema_version", "accerl.demos_config", "accerl.task"},
		[]string{"demos", SchemaVersion, string(cfgJSON), fmt.Sprint(task)})
	fields := []arrow.Field{
		{Name: colTask, Type: arrow.PrimitiveTypes.Int32},
		{Name: colEpisode, Type: arrow.PrimitiveTypes.Int32},
		{Name: colT, Type: arrow.PrimitiveTypes.Int32},
		{Name: colState, Type: arrow.FixedSizeListOf(tabletop.ObsDim, arrow.PrimitiveTypes.Float64)},
		{Name: colProprio, Type: arrow.FixedSizeListOf(tabletop.ProprioDim, arrow.PrimitiveTypes.Float64)},
		{Name: colAction, Type: arrow.FixedSizeListOf(tabletop.ActionDim, arrow.PrimitiveTypes.Float64)},
		{Name: colReward, Type: arrow.PrimitiveTypes.Float64},
		{Name: colTerminated, Type: arrow.FixedWidthTypes.Boolean},
		{Name: colTruncated, Type: arrow.FixedWidthTypes.Boolean},
		{Name: colSuccess, Type: arrow.FixedWidthTypes.Boolean},
		{Name: colInstr, Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
	}
	if cfg.Images {
		for _, cam := range cfg.Cameras {
			fields = append(fields, arrow.Field{Name: colImage + cam, Type: &arrow.FixedSizeBinaryType{ByteWidth: cfg.ImageSize * cfg.ImageSize * 3}})
		}
	}
	return arrow.NewSchema(fields, &md)
}

// WriteTaskFile writes rows d of one task as an Arrow IPC file in the dataset's schema for cfg
// (the file Collect writes for that task), to a temporary name then renamed. Other recorders
// of tabletop episodes with images use it to store theirs in the same format; cfg is
// normalised first.
func WriteTaskFile(path string, cfg Config, task int, d *Demos) error {
	return writeFile(path, cfg.Normalize(), task, d)
}

// ReadTaskFile reads a file that WriteTaskFile wrote with the same cfg and task; a file of
// another config or task is an error.
func ReadTaskFile(path string, cfg Config, task int) (*Demos, error) {
	d, err := readFile(path, cfg.Normalize(), task)
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", path, err)
	}
	return d, nil
}

func writeFile(path string, cfg Config, task int, d *Demos) error {
	mem := memory.DefaultAllocator
	sc := schema(cfg, task)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	n := d.Len()
	for i := range n {
		b.Field(0).(*array.Int32Builder).Append(int32(d.Task[i]))
		b.Field(1).(*array.Int32Builder).Append(int32(d.Episode[i]))
		b.Field(2).(*array.Int32Builder).Append(int32(d.T[i]))
		appendFixed(b.Field(3), d.State[i*tabletop.ObsDim:(i+1)*tabletop.ObsDim])
		appendFixed(b.Field(4), d.Proprio[i*tabletop.ProprioDim:(i+1)*tabletop.ProprioDim])
		appendFixed(b.Field(5), d.Action[i*tabletop.ActionDim:(i+1)*tabletop.ActionDim])
		b.Field(6).(*array.Float64Builder).Append(d.Reward[i])
		b.Field(7).(*array.BooleanBuilder).Append(d.Terminated[i])
		b.Field(8).(*array.BooleanBuilder).Append(d.Truncated[i])
		b.Field(9).(*array.BooleanBuilder).Append(d.Success[i])
		lb := b.Field(10).(*array.ListBuilder)
		lb.Append(true)
		for _, tok := range d.Instr[i] {
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(tok))
		}
		if cfg.Images {
			px := cfg.ImageSize * cfg.ImageSize * 3
			for c := range cfg.Cameras {
				b.Field(11 + c).(*array.FixedSizeBinaryBuilder).Append(d.Images[c][i*px : (i+1)*px])
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	err := runstore.WriteFileAtomic(path, func(f io.Writer) error {
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(sc), ipc.WithAllocator(mem), ipc.WithZstd())
		if err != nil {
			return err
		}
		if err := w.Write(rec); err != nil {
			_ = w.Close()
			return err
		}
		return w.Close()
	})
	if err != nil {
		return fmt.Errorf("write demos %q: %w", path, err)
	}
	return nil
}

func appendFixed(b array.Builder, x []float64) {
	fb := b.(*array.FixedSizeListBuilder)
	fb.Append(true)
	fb.ValueBuilder().(*array.Float64Builder).AppendValues(x, nil)
}

// readFile decodes one task's file and checks that it is that task's file of cfg.
func readFile(path string, cfg Config, task int) (*Demos, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	want := schema(cfg, task)
	if !r.Schema().Equal(want) || !r.Schema().Metadata().Equal(want.Metadata()) {
		return nil, fmt.Errorf("schema or config differs from the dataset's")
	}
	d := &Demos{}
	if cfg.Images {
		d.Images = make([][]byte, len(cfg.Cameras))
	}
	for k := range r.NumRecords() {
		rec, err := r.RecordBatchAt(k)
		if err != nil {
			return nil, err
		}
		for i := range int(rec.NumRows()) {
			d.Task = append(d.Task, int(rec.Column(0).(*array.Int32).Value(i)))
			d.Episode = append(d.Episode, int(rec.Column(1).(*array.Int32).Value(i)))
			d.T = append(d.T, int(rec.Column(2).(*array.Int32).Value(i)))
			d.State = append(d.State, fixedAt(rec.Column(3), i)...)
			d.Proprio = append(d.Proprio, fixedAt(rec.Column(4), i)...)
			d.Action = append(d.Action, fixedAt(rec.Column(5), i)...)
			d.Reward = append(d.Reward, rec.Column(6).(*array.Float64).Value(i))
			d.Terminated = append(d.Terminated, rec.Column(7).(*array.Boolean).Value(i))
			d.Truncated = append(d.Truncated, rec.Column(8).(*array.Boolean).Value(i))
			d.Success = append(d.Success, rec.Column(9).(*array.Boolean).Value(i))
			l := rec.Column(10).(*array.List)
			s, e := l.ValueOffsets(i)
			vals := l.ListValues().(*array.Int32)
			instr := make([]int, 0, e-s)
			for j := s; j < e; j++ {
				instr = append(instr, int(vals.Value(int(j))))
			}
			d.Instr = append(d.Instr, instr)
			for c := range d.Images {
				d.Images[c] = append(d.Images[c], rec.Column(11+c).(*array.FixedSizeBinary).Value(i)...)
			}
		}
	}
	for i := range d.Len() {
		if d.Task[i] != task {
			return nil, fmt.Errorf("row %d is of task %d, want %d", i, d.Task[i], task)
		}
	}
	return d, nil
}

func fixedAt(col arrow.Array, i int) []float64 {
	l := col.(*array.FixedSizeList)
	s, e := l.ValueOffsets(i)
	return l.ListValues().(*array.Float64).Float64Values()[s:e]
}

// newRNG is the generator of episode ep's initial state.
func newRNG(seed, ep uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, ep)) }
