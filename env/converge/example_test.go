package converge_test

import (
	"errors"
	"fmt"

	"github.com/drover-sched/drover/env/converge"
)

// Predict ASP's cost against BSP for ResNet32 on CIFAR-10 at 8 and 16
// workers, at the fit and at both ends of the confidence band.
func Example() {
	m := converge.Default()
	for _, w := range []int{8, 16} {
		for _, band := range []converge.Band{converge.BandLow, converge.BandFit, converge.BandHigh} {
			out, err := m.Predict("resnet32-cifar10", converge.Strategy{Kind: converge.ASP}, w, 0, 0.85, band)
			if err != nil {
				fmt.Println(err)
				return
			}
			fmt.Printf("asp on %d workers, %s: iterations x%.2f, final accuracy %.3f, reached %v\n", w, band, out.IterFactor, out.FinalAccuracy, out.Reached)
		}
	}
	_, err := m.Predict("resnet32-cifar10", converge.Strategy{Kind: converge.LocalSGD, Period: 8}, 8, 0, 0.85, converge.BandFit)
	fmt.Println(errors.Is(err, converge.ErrNotMeasured))
	// Output:
	// asp on 8 workers, low: iterations x3.71, final accuracy 0.905, reached true
	// asp on 8 workers, fit: iterations x4.05, final accuracy 0.892, reached true
	// asp on 8 workers, high: iterations x4.33, final accuracy 0.879, reached true
	// asp on 16 workers, low: iterations x+Inf, final accuracy NaN, reached false
	// asp on 16 workers, fit: iterations x+Inf, final accuracy NaN, reached false
	// asp on 16 workers, high: iterations x+Inf, final accuracy NaN, reached false
	// true
}
