package reports

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// regen rewrites the golden figures instead of comparing against them:
//
//	go test ./reports -run Golden -regen
//
// Look at every rewritten PNG before committing it.
var regen = flag.Bool("regen", false, "rewrite reports/testdata/golden/*.png from the current code")

// goldenDir holds the reference renderings of the demo experiment.
const goldenDir = "testdata/golden"

// goldenFigures are the figures guarded by golden images.
var goldenFigures = []string{FigLearningCurve, FigEvaluationCurve, FigThroughput, FigStepsToTarget, FigPipeline, FigUtilization, FigWorldModel}

// Golden-image tolerance. gonum/plot embeds its fonts (Liberation), so
// text renders the same everywhere, but the rasteriser's floating point
// can differ in the last bits between CPUs and Go versions (fused
// multiply-add on arm64, for one), moving anti-aliased edges by a fraction
// of a pixel. Such jitter changes an edge pixel by a few levels; a pixel
// counts as different only past goldenChannelTol levels (of 255) in some
// channel, and the figure fails when more than goldenMaxFrac of its
// pixels differ. A moved line, a recoloured arm, a missing band or a
// shifted legend changes several thousand pixels (≥ 0.5% of the 708,750
// of a 1050×675 figure); 0.1% still lets through a rewording of a short
// label, which the report.md checks catch instead.
const (
	goldenChannelTol = 48
	goldenMaxFrac    = 0.001
)

// TestGoldenFigures renders the demo experiment (demo_test.go) and
// compares the main figures with testdata/golden.
func TestGoldenFigures(t *testing.T) {
	dir := writeDemo(t, t.TempDir())
	rep, err := Generate(dir, Options{NoHTML: true}) // defaults, as `accerl report` draws them
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 0 {
		t.Fatalf("the demo skipped figures %v; the golden test needs all of them", rep.Skipped)
	}
	for _, name := range goldenFigures {
		got, err := os.ReadFile(filepath.Join(dir, figuresDir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(goldenDir, name+".png")
		if *regen {
			if err := os.MkdirAll(goldenDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote %s", path)
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run `go test ./reports -run Golden -regen` to create the golden figures)", err)
		}
		n, total, err := pixelDiff(got, want)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if frac := float64(n) / float64(total); frac > goldenMaxFrac {
			out := filepath.Join(os.TempDir(), "accerl-golden-"+name+".png")
			_ = os.WriteFile(out, got, 0o644)
			t.Errorf("%s: %d of %d pixels (%.3f%%) differ from %s by more than %d levels (allowed %.2f%%); new rendering in %s. "+
				"If the change is intended, look at it and run `go test ./reports -run Golden -regen`.",
				name, n, total, 100*frac, path, goldenChannelTol, 100*goldenMaxFrac, out)
		}
	}
}

// pixelDiff decodes two PNGs and counts the pixels whose colour differs
// by more than goldenChannelTol in any channel. Different sizes are an
// error.
func pixelDiff(a, b []byte) (diff, total int, err error) {
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		return 0, 0, fmt.Errorf("decode new rendering: %w", err)
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return 0, 0, fmt.Errorf("decode golden image: %w", err)
	}
	if ia.Bounds().Size() != ib.Bounds().Size() {
		return 0, 0, fmt.Errorf("size %v, golden %v", ia.Bounds().Size(), ib.Bounds().Size())
	}
	ra, rb := ia.Bounds(), ib.Bounds()
	for y := 0; y < ra.Dy(); y++ {
		for x := 0; x < ra.Dx(); x++ {
			if colourDistance(ia, ib, ra.Min.Add(image.Pt(x, y)), rb.Min.Add(image.Pt(x, y))) > goldenChannelTol {
				diff++
			}
		}
	}
	return diff, ra.Dx() * ra.Dy(), nil
}

// colourDistance is the largest per-channel difference, in 8-bit levels,
// between pixel pa of a and pb of b.
func colourDistance(a, b image.Image, pa, pb image.Point) int {
	r1, g1, b1, a1 := a.At(pa.X, pa.Y).RGBA()
	r2, g2, b2, a2 := b.At(pb.X, pb.Y).RGBA()
	d := 0
	for _, c := range [][2]uint32{{r1, r2}, {g1, g2}, {b1, b2}, {a1, a2}} {
		v := int(c[0]>>8) - int(c[1]>>8)
		d = max(d, v, -v)
	}
	return d
}

func TestPixelDiff(t *testing.T) {
	encode := func(img image.Image) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	base := image.NewGray(image.Rect(0, 0, 10, 10))
	jitter := image.NewGray(image.Rect(0, 0, 10, 10))
	changed := image.NewGray(image.Rect(0, 0, 10, 10))
	for i := range base.Pix {
		base.Pix[i], jitter.Pix[i], changed.Pix[i] = 100, 100+goldenChannelTol, 100
	}
	changed.Pix[0], changed.Pix[99] = 0, 255 // two pixels far off
	if n, total, err := pixelDiff(encode(base), encode(jitter)); err != nil || n != 0 || total != 100 {
		t.Errorf("jitter at the tolerance: %d of %d differ (%v), want 0 of 100", n, total, err)
	}
	if n, _, err := pixelDiff(encode(base), encode(changed)); err != nil || n != 2 {
		t.Errorf("two changed pixels: %d differ (%v), want 2", n, err)
	}
	if _, _, err := pixelDiff(encode(base), encode(image.NewGray(image.Rect(0, 0, 5, 5)))); err == nil {
		t.Error("different sizes compared without error")
	}
}
