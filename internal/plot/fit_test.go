package plot

import (
	"bytes"
	"errors"
	"image/png"
	"math"
	"testing"
)

// TestFit draws a two-panel fit figure (a curve with its band over a
// log x axis, points with a NaN and a non-positive x left out) and
// decodes it: the asked width, two-thirds of the default height per
// panel; mismatched lengths and a panel without a curve are errors.
func TestFit(t *testing.T) {
	xs := []float64{64, 128, 256, 512, 1024}
	curve := Series{Name: "fit", X: xs, Y: []float64{2, 3, 5, 9, 17}}
	band := Band{Name: "band", X: xs, Lo: []float64{1.5, 2.5, 4, 7, 13}, Hi: []float64{3, 4, 7, 12, 22}}
	pts := Points{Name: "runs", X: []float64{64, 0, 256, math.NaN()}, Y: []float64{2.2, 1, 4.5, 3}}
	panels := []FitPanel{
		{YLabel: "epochs", Curves: []Series{curve}, Bands: []Band{band}, Points: []Points{pts}},
		{YLabel: "efficiency", LegendBottomLeft: true, Curves: []Series{curve}, Points: []Points{pts, pts}},
	}
	var b bytes.Buffer
	if err := Fit(&b, Options{Title: "t", XLabel: "batch", Width: 600, LogX: true}, panels); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got.X != 600 || got.Y != DefaultHeight*2*2/3 {
		t.Errorf("size %v, want 600x%d", got, DefaultHeight*2*2/3)
	}
	bad := []FitPanel{{Curves: []Series{curve}, Bands: []Band{{X: xs, Lo: xs[:2], Hi: xs}}}}
	if err := Fit(&b, Options{}, bad); err == nil {
		t.Error("band of mismatched lengths accepted")
	}
	if err := Fit(&b, Options{}, []FitPanel{{Points: []Points{pts}}}); !errors.Is(err, ErrNoData) {
		t.Errorf("panel without a curve: %v, want ErrNoData", err)
	}
}
