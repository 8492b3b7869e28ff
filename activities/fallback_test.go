package activities

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/accerl/accerl/reports"
)

func TestDiscardSegmentsRemovesRolledBackRows(t *testing.T) {
	dir := t.TempDir()
	for s := int32(1); s <= 4; s++ {
		rows := []reports.MetricsRow{{Segment: s, Step: int64(s), EpisodeReturn: math.NaN()}}
		eps := []reports.EpisodeRow{{Segment: s, EnvSteps: int64(10 * s)}}
		if err := reports.WriteSegment(dir, s, rows, eps); err != nil {
			t.Fatal(err)
		}
	}
	// Segment 5 resumes from segment 2's checkpoint: segments 3 and 4 are rolled back.
	if err := discardSegments(dir, 3, 4); err != nil {
		t.Fatal(err)
	}
	rows, eps, err := reports.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Step != 2 || len(eps) != 2 {
		t.Errorf("after discarding 3-4: %d rows (last step %d), %d episodes; want the 2 of segments 1-2", len(rows), rows[len(rows)-1].Step, len(eps))
	}
	if _, err := os.Stat(filepath.Join(dir, reports.EpisodesDir, reports.SegmentFile(3))); !os.IsNotExist(err) {
		t.Errorf("episodes of segment 3 still there: %v", err)
	}
	// Discarding what is already gone is not an error (a retried activity does it twice).
	if err := discardSegments(dir, 3, 4); err != nil {
		t.Error(err)
	}
}
