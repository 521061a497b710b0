// Package plot draws the few figures Drover writes as PNG files: empirical
// CDFs (one line per series, e.g. the JCT distribution per policy) and line
// plots over time or steps (e.g. stragglers over time per policy, or a
// learning curve of return against steps). It is a thin layer over
// gonum.org/v1/plot that fixes the size, palette, fonts and legend so that
// every figure looks alike and the same data always gives the same bytes
// (no timestamps, no randomness).
//
// Drawing is separate from file I/O: CDF and Lines encode a PNG to any
// io.Writer, and WriteFile puts one in place atomically.
//
// # Usage
//
//	jct := []plot.Sample{
//		{Name: "tiresias", Values: tiresiasJCTs},
//		{Name: "strn", Values: strnJCTs},
//	}
//	opts := plot.Options{Title: "JCT CDF", XLabel: "JCT (s)", YLabel: "fraction of jobs", LogX: true}
//	err := plot.WriteFile("jct_cdf.png", func(w io.Writer) error { return plot.CDF(w, opts, jct) })
//
//	curves := []plot.Series{{Name: "seed 1", X: steps, Y: returns}}
//	err = plot.WriteFile("return.png", func(w io.Writer) error {
//		return plot.Lines(w, plot.Options{Title: "learning curve", XLabel: "steps", YLabel: "return"}, curves)
//	})
package plot
