package tabletop

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteDocImages regenerates the contact sheets in docs/tabletop when
// TABLETOP_DOCS names that folder:
//
//	TABLETOP_DOCS=$PWD/docs/tabletop go test -run WriteDocImages ./testenv/tabletop/
func TestWriteDocImages(t *testing.T) {
	out := os.Getenv("TABLETOP_DOCS")
	if out == "" {
		t.Skip("TABLETOP_DOCS not set")
	}
	for _, c := range []struct {
		suite      string
		task, size int
	}{
		{SuiteSpatial, 0, 64}, {SuiteObject, 0, 64}, {SuiteGoal, 6, 64}, {SuiteLong, 2, 64}, {SuiteGoal, 3, 128},
	} {
		frames, rec, err := playFrames(Config{Suite: c.suite, ImageSize: c.size}, c.task, true)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s-task%d.png", c.suite, c.task)
		if c.size != DefaultImageSize {
			name = fmt.Sprintf("%s-task%d-%d.png", c.suite, c.task, c.size)
		}
		if err := WriteContactSheet(filepath.Join(out, name), frames, c.size); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %q, %d steps, success %v", name, rec.Instruction, rec.Steps, rec.Success)
	}
}
