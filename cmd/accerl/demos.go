package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/accerl/accerl/activities/demos"
	"github.com/accerl/accerl/testenv/tabletop"
)

// cmdDemos records expert demonstrations of a tabletop suite as an Arrow IPC dataset.
func cmdDemos(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demos", "demos --suite NAME [flags]   — record the scripted expert's demonstrations of every task of a tabletop suite as an Arrow IPC dataset (one file per task), the data behaviour cloning trains on\n\nSuites: "+strings.Join(tabletop.Suites(), ", "), stderr)
	suite := fs.String("suite", "", "tabletop suite: "+strings.Join(tabletop.Suites(), ", ")+" (required)")
	perTask := fs.Int("per-task", tabletop.DemosPerTask, "expert episodes per task (LIBERO has 50); more demonstrations cover more initial states")
	images := fs.Bool("images", true, "record both cameras' frames with every step (what a pixel policy trains on); --images=false records states only, about 100× smaller")
	size := fs.Int("image-size", tabletop.DefaultImageSize, "camera image side in pixels, a power of two from 16 to 256; each doubling quadruples the bytes per step")
	seed := fs.Uint64("seed", 1, "selects the episodes' initial states and the expert's action noise; the same seed gives the same bytes")
	out := fs.String("out", "", "dataset directory (default demos/<suite>/); an interrupted run continues where it stopped, and a finished dataset of the same settings is kept as is")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("demos: unexpected argument %q; the suite is a flag (--suite)", fs.Arg(0))
	}
	if *suite == "" {
		return fmt.Errorf("demos: --suite is required (known: %s)", strings.Join(tabletop.Suites(), ", "))
	}
	cfg := demos.Config{Suite: *suite, PerTask: *perTask, Images: *images, Seed: *seed}
	if *images {
		cfg.ImageSize = *size
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("demos: %w", err)
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("demos", *suite)
	}
	start := time.Now()
	info, err := demos.Collect(ctx, cfg, dir, func(done, total int) {
		const width = 30
		full := width * done / total
		fmt.Fprintf(stderr, "\r%s %s %d/%d episodes  %s", *suite, strings.Repeat("█", full)+strings.Repeat("░", width-full),
			done, total, time.Since(start).Round(time.Second))
	})
	fmt.Fprintln(stderr)
	if err != nil {
		return fmt.Errorf("demos: %w", err)
	}
	var bytes int64
	for _, f := range info.Files {
		if st, err := os.Stat(filepath.Join(dir, f.Name)); err == nil {
			bytes += st.Size()
		}
	}
	succ := 0
	for _, f := range info.Files {
		succ += f.Successes
	}
	fmt.Fprintf(stdout, "Wrote %d demonstrations (%d steps, %d succeeded) of suite %q to %s\n", info.Episodes, info.Rows, succ, *suite, dir)
	fmt.Fprintf(stdout, "Bytes per step: %d in memory, %.0f on disk (ZSTD); %s in all\n", info.BytesPerRow,
		float64(bytes)/float64(max(1, info.Rows)), humanBytes(bytes))
	return nil
}

// humanBytes formats a byte count.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
