package runstore

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Subdirectories of a run directory that hold one file per segment.
const (
	MetricsDir  = "metrics"
	EpisodesDir = "episodes"
)

// SegmentFile returns the file name of a segment's table, "seg-000001.arrow"
// for segment 1. Numbers above 999999 simply get more digits.
func SegmentFile(segment int32) string {
	return fmt.Sprintf("seg-%06d.arrow", segment)
}

// parseSegmentFile returns the segment number of a file named by
// SegmentFile, and false for anything else (temporary files included).
func parseSegmentFile(name string) (int32, bool) {
	digits, ok := strings.CutPrefix(name, "seg-")
	if !ok {
		return 0, false
	}
	digits, ok = strings.CutSuffix(digits, ".arrow")
	if !ok || len(digits) < 6 {
		return 0, false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(digits, 10, 32)
	if err != nil || n < 1 || SegmentFile(int32(n)) != name {
		return 0, false
	}
	return int32(n), true
}

// WriteSegment writes the metrics and episodes of one training segment of
// the run in runDir, replacing the segment's files if they exist (a retried
// segment). Both files are always written, even when a slice is empty, so a
// retry that finished no episode also clears a stale episodes file.
//
// Rows whose Segment is 0 are stored with segment; any other value that
// differs from segment is an error. Segments are numbered from 1. Metric
// steps must be unique within the segment: (segment, step) is the row key.
// The episodes file and the segment's TensorBoard event file
// (WriteTensorBoard) are renamed into place before the metrics file, which
// commits the segment (see the package documentation).
func WriteSegment(runDir string, segment int32, metrics []MetricsRow, episodes []EpisodeRow) error {
	return writeSegment(memory.DefaultAllocator, runDir, segment, metrics, episodes, true)
}

// WriteSegmentFiles is WriteSegment with the TensorBoard event file optional: without it,
// the segment's event file is removed if a previous attempt wrote one.
func WriteSegmentFiles(runDir string, segment int32, metrics []MetricsRow, episodes []EpisodeRow, tensorBoard bool) error {
	return writeSegment(memory.DefaultAllocator, runDir, segment, metrics, episodes, tensorBoard)
}

func writeSegment(mem memory.Allocator, runDir string, segment int32, metrics []MetricsRow, episodes []EpisodeRow, tensorBoard bool) error {
	if segment < 1 {
		return fmt.Errorf("write segment %d in %q: segments are numbered from 1", segment, runDir)
	}
	m := slices.Clone(metrics)
	seen := make(map[int64]bool, len(m))
	for i := range m {
		if err := fixSegment(&m[i].Segment, segment); err != nil {
			return fmt.Errorf("write segment %d in %q: metrics row %d: %w", segment, runDir, i, err)
		}
		if seen[m[i].Step] {
			return fmt.Errorf("write segment %d in %q: duplicate metrics step %d", segment, runDir, m[i].Step)
		}
		seen[m[i].Step] = true
	}
	e := slices.Clone(episodes)
	for i := range e {
		if err := fixSegment(&e[i].Segment, segment); err != nil {
			return fmt.Errorf("write segment %d in %q: episode row %d: %w", segment, runDir, i, err)
		}
	}
	name := SegmentFile(segment)
	if err := writeTable(mem, filepath.Join(runDir, EpisodesDir, name), episodesTable, e); err != nil {
		return fmt.Errorf("write segment %d in %q: %w", segment, runDir, err)
	}
	if tensorBoard {
		if err := WriteTensorBoard(runDir, segment, m); err != nil {
			return fmt.Errorf("write segment %d in %q: %w", segment, runDir, err)
		}
	} else if err := os.Remove(filepath.Join(runDir, TensorBoardDir, TensorBoardFile(segment))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("write segment %d in %q: %w", segment, runDir, err)
	}
	if err := writeTable(mem, filepath.Join(runDir, MetricsDir, name), metricsTable, m); err != nil {
		return fmt.Errorf("write segment %d in %q: %w", segment, runDir, err)
	}
	return nil
}

func fixSegment(got *int32, want int32) error {
	switch *got {
	case 0:
		*got = want
	case want:
	default:
		return fmt.Errorf("row has segment %d", *got)
	}
	return nil
}

// writeTable writes rows as a one-batch Arrow IPC file at path, atomically.
func writeTable[R any](mem memory.Allocator, path string, t *table[R], rows []R) error {
	rec := t.record(mem, rows)
	defer rec.Release()
	err := WriteFileAtomic(path, func(w io.Writer) error {
		fw, err := ipc.NewFileWriter(w, ipc.WithSchema(t.schema), ipc.WithAllocator(mem))
		if err != nil {
			return err
		}
		if err := fw.Write(rec); err != nil {
			fw.Close()
			return err
		}
		return fw.Close()
	})
	if err != nil {
		return fmt.Errorf("write %s table %q: %w", t.name, path, err)
	}
	return nil
}

// ReadRun reads every committed segment of the run in runDir. Metrics come
// back sorted by (segment, step) and episodes by (segment, env_steps); ties
// keep file order. A run directory without a metrics directory yields no
// rows and no error (the run has not finished a segment yet). Episode files
// of a segment without a metrics file are ignored: that segment is still
// being written.
//
// A segment file that cannot be read (truncated, corrupt) does not hide the
// others: ReadRun returns the rows of every readable segment, leaving out a
// segment whose metrics file is unreadable, with an error that wraps
// UnreadableSegments.
func ReadRun(runDir string) (metrics []MetricsRow, episodes []EpisodeRow, err error) {
	return readRun(memory.DefaultAllocator, runDir)
}

func readRun(mem memory.Allocator, runDir string) ([]MetricsRow, []EpisodeRow, error) {
	segs, err := listSegments(filepath.Join(runDir, MetricsDir))
	if err != nil {
		return nil, nil, fmt.Errorf("read run %q: %w", runDir, err)
	}
	epSegs, err := listSegments(filepath.Join(runDir, EpisodesDir))
	if err != nil {
		return nil, nil, fmt.Errorf("read run %q: %w", runDir, err)
	}
	var metrics []MetricsRow
	var episodes []EpisodeRow
	var bad UnreadableSegments
	for _, s := range segs {
		path := filepath.Join(runDir, MetricsDir, SegmentFile(s))
		m, err := readTable(mem, path, metricsTable, metrics)
		if err != nil {
			bad = append(bad, &SegmentFileError{Path: path, Segment: s, Err: err})
			continue
		}
		metrics = m
		if _, ok := slices.BinarySearch(epSegs, s); ok {
			path := filepath.Join(runDir, EpisodesDir, SegmentFile(s))
			e, err := readTable(mem, path, episodesTable, episodes)
			if err != nil {
				bad = append(bad, &SegmentFileError{Path: path, Segment: s, Err: err})
				continue
			}
			episodes = e
		}
	}
	slices.SortStableFunc(metrics, func(a, b MetricsRow) int {
		return cmp.Or(cmp.Compare(a.Segment, b.Segment), cmp.Compare(a.Step, b.Step))
	})
	slices.SortStableFunc(episodes, func(a, b EpisodeRow) int {
		return cmp.Or(cmp.Compare(a.Segment, b.Segment), cmp.Compare(a.EnvSteps, b.EnvSteps))
	})
	if len(bad) > 0 {
		return metrics, episodes, fmt.Errorf("read run %q: %w", runDir, bad)
	}
	return metrics, episodes, nil
}

// SegmentFileError is a segment's metrics or episodes file that cannot be read: truncated,
// corrupt, or not a table accerl wrote.
type SegmentFileError struct {
	Path    string
	Segment int32
	Err     error
}

func (e *SegmentFileError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }

// Unwrap returns the reading error.
func (e *SegmentFileError) Unwrap() error { return e.Err }

// UnreadableSegments are the segment files of a run that ReadRun could not read.
type UnreadableSegments []*SegmentFileError

func (u UnreadableSegments) Error() string {
	msgs := make([]string, len(u))
	for i, e := range u {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// LastEpisodes returns the run's last n finished episodes (fewer if it has fewer), oldest
// first, reading committed segments newest first and stopping once it has n. A training
// segment calls it to report its recent return without re-reading a long run's whole history.
func LastEpisodes(runDir string, n int) ([]EpisodeRow, error) {
	mem := memory.DefaultAllocator
	segs, err := listSegments(filepath.Join(runDir, MetricsDir))
	if err != nil {
		return nil, fmt.Errorf("read episodes of %q: %w", runDir, err)
	}
	var newest [][]EpisodeRow // per segment, newest segment first
	total := 0
	for i := len(segs) - 1; i >= 0 && total < n; i-- {
		path := filepath.Join(runDir, EpisodesDir, SegmentFile(segs[i]))
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		eps, err := readTable(mem, path, episodesTable, nil)
		if err != nil {
			return nil, fmt.Errorf("read episodes of %q: %w", runDir, &SegmentFileError{Path: path, Segment: segs[i], Err: err})
		}
		slices.SortStableFunc(eps, func(a, b EpisodeRow) int { return cmp.Compare(a.EnvSteps, b.EnvSteps) })
		newest = append(newest, eps)
		total += len(eps)
	}
	var out []EpisodeRow
	for i := len(newest) - 1; i >= 0; i-- {
		out = append(out, newest[i]...)
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out, nil
}

// listSegments returns the sorted segment numbers of the files in dir; a
// missing directory has none.
func listSegments(dir string) ([]int32, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list segments: %w", err)
	}
	var segs []int32
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if s, ok := parseSegmentFile(e.Name()); ok {
			segs = append(segs, s)
		}
	}
	slices.Sort(segs)
	return segs, nil
}

// readTable appends the rows of every record batch in the IPC file at path
// to dst. It checks the accerl.table metadata when the file carries it. Its
// errors do not name the file: callers wrap them in a SegmentFileError.
func readTable[R any](mem memory.Allocator, path string, t *table[R], dst []R) ([]R, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s table: %w", t.name, err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("read %s table: %w", t.name, err)
	}
	defer r.Close()
	md := r.Schema().Metadata()
	if i := md.FindKey(metaTable); i >= 0 && md.Values()[i] != t.name {
		return nil, fmt.Errorf("read %s table: file holds a %q table", t.name, md.Values()[i])
	}
	for i := range r.NumRecords() {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			return nil, fmt.Errorf("read %s table: batch %d: %w", t.name, i, err)
		}
		dst, err = t.appendRows(dst, rec)
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("read %s table: %w", t.name, err)
		}
	}
	return dst, nil
}
