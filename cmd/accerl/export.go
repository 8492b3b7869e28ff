package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/accerl/accerl/activities"
	"github.com/accerl/accerl/runstore"
)

// Formats of accerl export.
const (
	exportParquet     = "parquet"
	exportTensorBoard = "tensorboard"
)

// cmdExport converts the stored metrics of every run below a directory into another format.
func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", "export DIR [--format parquet|tensorboard]   — convert the metrics and episodes of every run below DIR (an experiment directory such as runs/quickstart, a run directory, or runs/) into another format, beside the Arrow files", stderr)
	format := fs.String("format", exportParquet, "parquet: <run>/parquet/metrics.parquet and episodes.parquet for SQL engines (DuckDB, polars), with null where the Arrow files hold NaN and the run's arm and seed on every row; "+
		"tensorboard: rewrite <run>/tb/ event files from the stored metrics (runs write them while they train; this rebuilds them for older runs)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitCode(2)
	}
	if *format != exportParquet && *format != exportTensorBoard {
		return fmt.Errorf("export: --format must be %q or %q, not %q", exportParquet, exportTensorBoard, *format)
	}
	// An experiment in an object store is exported in a local copy, then published.
	wc, err := runstore.OpenWorkingCopy(ctx, fs.Arg(0), runstore.Only(activities.ReportInputs))
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer wc.Close()
	root := wc.Dir
	runs, err := findRunDirs(root)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if len(runs) == 0 {
		return fmt.Errorf("export: no run below %q (a run directory holds a %s/ directory)", root, runstore.MetricsDir)
	}
	for _, dir := range runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch *format {
		case exportParquet:
			if err := runstore.ExportParquet(dir); err != nil {
				return fmt.Errorf("export: %w", err)
			}
			fmt.Fprintf(stdout, "%s\n%s\n", filepath.Join(dir, runstore.ParquetDir, runstore.MetricsParquet),
				filepath.Join(dir, runstore.ParquetDir, runstore.EpisodesParquet))
		case exportTensorBoard:
			n, err := rebuildTensorBoard(dir)
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			fmt.Fprintf(stdout, "%s (%d segments)\n", filepath.Join(dir, runstore.TensorBoardDir), n)
		}
	}
	if err := wc.Publish(ctx); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if wc.Remote() {
		fmt.Fprintf(stdout, "Published to %s\n", fs.Arg(0))
	}
	return nil
}

// findRunDirs returns, sorted, root itself if it is a run directory (it has a metrics
// directory) or else every run directory below it. Hidden directories are skipped, and the
// search does not descend into a run.
func findRunDirs(root string) ([]string, error) {
	if _, err := os.Stat(root); err != nil {
		return nil, err
	}
	var runs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if st, err := os.Stat(filepath.Join(path, runstore.MetricsDir)); err == nil && st.IsDir() {
			runs = append(runs, path)
			return filepath.SkipDir
		}
		return nil
	})
	slices.Sort(runs)
	return runs, err
}

// rebuildTensorBoard rewrites one event file per committed segment of the run in dir from
// its stored metrics, and returns the number of segments.
func rebuildTensorBoard(dir string) (int, error) {
	metrics, _, err := runstore.ReadRun(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for i := 0; i < len(metrics); {
		j := i
		for j < len(metrics) && metrics[j].Segment == metrics[i].Segment {
			j++
		}
		if err := runstore.WriteTensorBoard(dir, metrics[i].Segment, metrics[i:j]); err != nil {
			return n, err
		}
		n++
		i = j
	}
	return n, nil
}
