package plot

import (
	"bytes"
	"errors"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPNGSize(t *testing.T) {
	jct := []Sample{
		{Name: "first-fit", Values: []float64{10, 20, 30, 400, 5000}},
		{Name: "strn", Values: []float64{8, 15, 22, math.NaN(), 100, 0}},
	}
	lines := []Series{
		{Name: "a", X: []float64{0, 1, 2, 3}, Y: []float64{0, 5, 3, 8}},
		{Name: "b", X: []float64{0, 1, 2}, Y: []float64{1, math.Inf(1), 2}},
	}
	tests := []struct {
		name          string
		draw          func(*bytes.Buffer) error
		width, height int
	}{
		{"cdf default size", func(b *bytes.Buffer) error { return CDF(b, Options{Title: "JCT", XLabel: "s"}, jct) }, DefaultWidth, DefaultHeight},
		{"cdf log x", func(b *bytes.Buffer) error {
			return CDF(b, Options{Title: "JCT", LogX: true, Width: 640, Height: 480}, jct)
		}, 640, 480},
		{"lines", func(b *bytes.Buffer) error {
			return Lines(b, Options{Title: "stragglers", XLabel: "h", YLabel: "n", Width: 333, Height: 211}, lines)
		}, 333, 211},
		{"lines log y", func(b *bytes.Buffer) error {
			return Lines(b, Options{LogY: true, Width: 400, Height: 300}, lines)
		}, 400, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.draw(&b); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b.Bytes()))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if got := img.Bounds().Size(); got.X != tt.width || got.Y != tt.height {
				t.Errorf("size %v, want %dx%d", got, tt.width, tt.height)
			}
			// Deterministic: the same data gives the same bytes.
			var again bytes.Buffer
			if err := tt.draw(&again); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), again.Bytes()) {
				t.Error("two draws of the same data differ")
			}
		})
	}
}

func TestErrors(t *testing.T) {
	var b bytes.Buffer
	if err := CDF(&b, Options{}, nil); !errors.Is(err, ErrNoData) {
		t.Errorf("CDF of nothing: %v, want ErrNoData", err)
	}
	if err := CDF(&b, Options{LogX: true}, []Sample{{Name: "z", Values: []float64{0, -1}}}); !errors.Is(err, ErrNoData) {
		t.Errorf("log CDF of non-positive values: %v, want ErrNoData", err)
	}
	err := Lines(&b, Options{}, []Series{{Name: "bad", X: []float64{1, 2}, Y: []float64{1}}})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(`"bad"`)) {
		t.Errorf("mismatched series: %v, want an error naming it", err)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cdf.png")
	err := WriteFile(p, func(w io.Writer) error {
		return CDF(w, Options{Width: 200, Height: 100}, []Sample{{Name: "x", Values: []float64{1, 2, 3}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st, _ := f.Stat(); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Width != 200 || cfg.Height != 100 {
		t.Errorf("written file: %+v, %v; want a 200x100 PNG", cfg, err)
	}
	// A failing encoder leaves nothing behind.
	bad := filepath.Join(dir, "bad.png")
	if err := WriteFile(bad, func(io.Writer) error { return ErrNoData }); !errors.Is(err, ErrNoData) {
		t.Errorf("failing encoder: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only cdf.png", len(ents))
	}
}

// TestWriteFileErrorNamesPath: a figure that cannot be written is
// reported under the path asked for, not the temporary file's name.
func TestWriteFileErrorNamesPath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "missing", "tail.png")
	err := WriteFile(p, func(w io.Writer) error { return nil })
	if err == nil || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), ".plot-") {
		t.Errorf("WriteFile into a missing directory: %v; want an error naming %s and no temporary file", err, p)
	}
}

// TestLogAxisOneValue: lines whose values on a log axis are all equal (a
// latency tail with every call in one bucket) draw; gonum widened such
// an axis to 0 and panicked.
func TestLogAxisOneValue(t *testing.T) {
	var b bytes.Buffer
	err := Lines(&b, Options{Width: 200, Height: 100, LogX: true, LogY: true}, []Series{{Name: "flat", X: []float64{1, 1}, Y: []float64{1, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.DecodeConfig(&b); err != nil {
		t.Errorf("not a PNG: %v", err)
	}
}
