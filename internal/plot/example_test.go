package plot_test

import (
	"bytes"
	"fmt"
	"image/png"

	"github.com/drover-sched/drover/internal/plot"
)

func ExampleCDF() {
	jct := []plot.Sample{
		{Name: "first-fit", Values: []float64{120, 300, 900, 4000}},
		{Name: "strn", Values: []float64{100, 250, 600, 2500}},
	}
	var b bytes.Buffer
	err := plot.CDF(&b, plot.Options{Title: "JCT CDF", XLabel: "JCT (s)", LogX: true, Width: 480, Height: 320}, jct)
	if err != nil {
		fmt.Println(err)
		return
	}
	img, _ := png.Decode(&b)
	fmt.Println(img.Bounds().Size())
	// Output: (480,320)
}

func ExampleLines() {
	curve := []plot.Series{{Name: "ppo seed 1", X: []float64{0, 1000, 2000}, Y: []float64{-10, -4, -2}}}
	var b bytes.Buffer
	err := plot.Lines(&b, plot.Options{Title: "learning curve", XLabel: "steps", YLabel: "return", Width: 400, Height: 250}, curve)
	fmt.Println(err, b.Len() > 0)
	// Output: <nil> true
}
