package tabletop

import (
	"fmt"
	"image"
	"image/png"
	"os"
)

// RGBImage wraps an RGB HWC buffer of side size as an image.Image (a copy,
// with opaque alpha).
func RGBImage(buf []uint8, size int) *image.RGBA {
	if len(buf) != size*size*3 {
		panic(fmt.Sprintf("tabletop: RGB buffer has %d bytes, want %d for %d×%d", len(buf), size*size*3, size, size))
	}
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	for i := range size * size {
		img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2], img.Pix[4*i+3] = buf[3*i], buf[3*i+1], buf[3*i+2], 255
	}
	return img
}

// WritePNG writes an image to path.
func WritePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write png: %w", err)
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("write png %q: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write png %q: %w", path, err)
	}
	return nil
}

// contactSheet tiles frames (each a list of per-camera RGB buffers of side
// size) into one image, cols frames per row, each frame's cameras side by
// side, on white with a 2-pixel gutter.
func contactSheet(frames [][][]uint8, size, cols int) *image.RGBA {
	if len(frames) == 0 {
		return image.NewRGBA(image.Rect(0, 0, 1, 1))
	}
	cams := len(frames[0])
	const gap = 2
	cellW := cams*size + (cams-1)*1 + gap
	cellH := size + gap
	rows := (len(frames) + cols - 1) / cols
	img := image.NewRGBA(image.Rect(0, 0, cols*cellW+gap, rows*cellH+gap))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for f, frame := range frames {
		ox := gap + (f%cols)*cellW
		oy := gap + (f/cols)*cellH
		for c, buf := range frame {
			x0 := ox + c*(size+1)
			for y := range size {
				for x := range size {
					k := 3 * (y*size + x)
					p := img.PixOffset(x0+x, oy+y)
					img.Pix[p], img.Pix[p+1], img.Pix[p+2], img.Pix[p+3] = buf[k], buf[k+1], buf[k+2], 255
				}
			}
		}
	}
	return img
}
