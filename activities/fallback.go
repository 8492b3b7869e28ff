package activities

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/accerl/accerl/runstore"
)

// discardSegments deletes the stored metrics and episodes of segments from..to (inclusive).
//
// When segment k must resume from an older checkpoint than k-1's (because the newer ones
// failed their checksums), the training of the segments in between is rolled back: the
// engine restarts from the older state and produces those updates again under segment k.
// Their old rows describe training that no longer exists and would collide with the new
// rows' (update) keys, so they go. The metrics file is removed first: a reader only looks at
// segments whose metrics file exists, so a crash between the two removals leaves no
// half-visible segment.
func discardSegments(runDir string, from, to int32) error {
	for s := from; s <= to; s++ {
		for _, dir := range []string{runstore.MetricsDir, runstore.EpisodesDir} {
			p := filepath.Join(runDir, dir, runstore.SegmentFile(s))
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("discard rolled-back segment %d: %w", s, err)
			}
		}
	}
	return nil
}
