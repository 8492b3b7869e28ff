package main

import (
	"context"
	"fmt"
	"io"

	"github.com/accerl/accerl/runstore"
)

// pinnedDeps are the modules whose versions decide what accerl can talk to and replay: the
// embedded Temporal server, the SDK and API the workflows are recorded with, and the Arrow
// library that writes the run files.
var pinnedDeps = []string{"go.temporal.io/server", "go.temporal.io/sdk", "go.temporal.io/api", "github.com/apache/arrow-go/v18"}

// cmdVersion prints the binary's version, VCS revision, Go version and the pinned modules
// (what every run's manifest.json records as its build).
func cmdVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "version   — print accerl's version, revision, Go version and the Temporal and Arrow modules it is built with", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	b := runstore.NewBuildInfo()
	version := b.Version
	if version == "" {
		version = "(unknown)"
	}
	fmt.Fprintf(stdout, "accerl %s", version)
	if b.Revision != "" {
		fmt.Fprintf(stdout, " (revision %s)", b.Revision)
	}
	fmt.Fprintf(stdout, ", %s\n", b.GoVersion)
	for _, m := range pinnedDeps {
		if v, ok := b.Deps[m]; ok {
			fmt.Fprintf(stdout, "  %s %s\n", m, v)
		}
	}
	return nil
}
