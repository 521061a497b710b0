package forecast_test

import (
	"fmt"
	"slices"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies/sas/forecast"
)

// A node whose CPU has sat at about 30% for five hours and jumped to 60%
// in the last quarter of an hour: the window's quantiles still see the
// old level alone; the model expects the next hour between the two, with
// a wider band (the trace's CPU moves back towards a node's level with a
// time constant of about 24 minutes).
func Example() {
	hist := make([]float64, 64)
	for i := range hist {
		hist[i] = 0.3 + 0.02*float64(i%3-1)
	}
	hist[61], hist[62], hist[63] = 0.6, 0.62, 0.58
	m := forecast.Default()
	q := m.Predict(forecast.CPU, hist, nil, nil)
	fmt.Printf("model   P10 %.2f  P50 %.2f  P90 %.2f\n",
		forecast.QuantileAt(m.Levels, q, 0.1), forecast.QuantileAt(m.Levels, q, 0.5), forecast.QuantileAt(m.Levels, q, 0.9))
	w := slices.Sorted(slices.Values(hist))
	fmt.Printf("window  P10 %.2f  P50 %.2f  P90 %.2f\n",
		env.Quantile(w, 0.1), env.Quantile(w, 0.5), env.Quantile(w, 0.9))
	// Output:
	// model   P10 0.35  P50 0.45  P90 0.58
	// window  P10 0.28  P50 0.30  P90 0.32
}
