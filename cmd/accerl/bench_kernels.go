package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/accerl/accerl/kernels/kbench"
)

const benchKernelsSynopsis = `bench kernels [flags]   — GFLOP/s of the matrix products of the models (micro-VLA attention and
MLPs, the patch stem, a convolution's im2col product, square 256/512/1024) on each backend: gonum's
float64 reference (the path the float64 models take), the float32 CPU backend on one core and on
all cores, OpenBLAS's sgemm, and cuBLAS.

OpenBLAS is measured only in a binary built with -tags openblas (it needs the C library, on Debian
and Ubuntu: apt-get install libopenblas-dev), e.g.
  go run -tags openblas ./cmd/accerl bench kernels
A GPU is used when one is present (the CUDA driver and cuBLAS are loaded at run time).`

func benchKernels(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench kernels", benchKernelsSynopsis, stderr)
	minTime := fs.Duration("min-time", 250*time.Millisecond, "time spent measuring each (shape, backend) pair; the fastest of five rounds is kept, so longer is steadier on a busy machine")
	threads := fs.Int("threads", 0, "threads of the \"all cores\" columns (0: GOMAXPROCS); fewer leaves cores to other work")
	shapeList := fs.String("shapes", "", "comma-separated shape names to measure (default all: "+shapeNames(kbench.DefaultShapes())+")")
	noCUDA := fs.Bool("no-cuda", false, "skip the cuBLAS columns even when a GPU is present")
	jsonOut := fs.String("json", "", "also write the report to this JSON file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench kernels: unexpected argument %q", fs.Arg(0))
	}
	if *minTime <= 0 {
		return fmt.Errorf("bench kernels: --min-time must be positive, got %v", *minTime)
	}
	if *threads < 0 {
		return fmt.Errorf("bench kernels: --threads must not be negative, got %d", *threads)
	}
	shapes, err := pickShapes(*shapeList)
	if err != nil {
		return fmt.Errorf("bench kernels: %w", err)
	}
	fmt.Fprintf(stdout, "Measuring %d shapes, %v per shape and backend...\n", len(shapes), *minTime)
	rep, err := kbench.Run(ctx, kbench.Options{Shapes: shapes, MinTime: *minTime, Threads: *threads, SkipCUDA: *noCUDA})
	if err != nil {
		return fmt.Errorf("bench kernels: %w", err)
	}
	if err := rep.Print(stdout); err != nil {
		return err
	}
	if *jsonOut != "" {
		return writeJSONFile(*jsonOut, rep)
	}
	return nil
}

func shapeNames(shapes []kbench.Shape) string {
	var names []string
	for _, s := range shapes {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// pickShapes returns the default shapes named in a comma-separated list, in the list's order,
// or all of them for an empty list.
func pickShapes(list string) ([]kbench.Shape, error) {
	all := kbench.DefaultShapes()
	if strings.TrimSpace(list) == "" {
		return all, nil
	}
	var out []kbench.Shape
next:
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		for _, s := range all {
			if s.Name == name {
				out = append(out, s)
				continue next
			}
		}
		return nil, fmt.Errorf("unknown shape %q (known: %s)", name, shapeNames(all))
	}
	return out, nil
}
