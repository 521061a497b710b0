package plot

import (
	"bytes"
	"errors"
	"image/png"
	"strings"
	"testing"
)

func TestStack(t *testing.T) {
	panels := []Panel{
		{YLabel: "goroutines", Series: []Series{{Name: "goroutines", X: []float64{0, 10, 20}, Y: []float64{20, 3000, 22}}}},
		{YLabel: "RSS (MiB)", Series: []Series{{Name: "rss", X: []float64{0, 10, 20}, Y: []float64{30, 80, 33}}}},
		{YLabel: "p99 (ms)", LogY: true, Series: []Series{{Name: "p99", X: []float64{10, 20}, Y: []float64{1.5, 4}}, {Name: "5 ms", X: []float64{0, 20}, Y: []float64{5, 5}}}},
	}
	var b bytes.Buffer
	if err := Stack(&b, Options{Title: "soak", XLabel: "s", Width: 500}, panels); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got.X != 500 || got.Y != DefaultHeight*3/2 {
		t.Errorf("size %v, want 500x%d", got, DefaultHeight*3/2)
	}
	var again bytes.Buffer
	if err := Stack(&again, Options{Title: "soak", XLabel: "s", Width: 500}, panels); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), again.Bytes()) {
		t.Error("two draws of the same data differ")
	}
}

func TestStackErrors(t *testing.T) {
	ok := Series{Name: "a", X: []float64{0, 1}, Y: []float64{1, 2}}
	tests := []struct {
		name   string
		panels []Panel
		want   string
	}{
		{"no panels", nil, ErrNoData.Error()},
		{"lengths differ", []Panel{{YLabel: "g", Series: []Series{ok}}, {YLabel: "rss", Series: []Series{{Name: "b", X: []float64{1}, Y: nil}}}}, `panel 1 ("rss"), series 0 ("b"): 1 x values, 0 y values`},
		{"empty panel", []Panel{{YLabel: "g", Series: []Series{ok}}, {YLabel: "rss"}}, `panel 1 ("rss"): plot: no data`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Stack(&bytes.Buffer{}, Options{}, tt.panels)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
			if tt.name != "lengths differ" && !errors.Is(err, ErrNoData) {
				t.Errorf("error %v, want ErrNoData", err)
			}
		})
	}
}
