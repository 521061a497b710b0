// Package profile holds per-model performance and convergence profiles: how
// long one training iteration takes on a placement, and how many iterations
// (and how much statistical-efficiency-adjusted progress) a model needs.
//
// Two implementations of Profile exist. Measured loads the Pollux
// artifact's traces (placements.csv, scalability.csv, validation-<bsz>.csv)
// and reproduces the Pollux simulator's applications.py, with one
// documented deviation (below). Fitted needs no files: it evaluates under a
// hundred fitted numbers per model (Params), embedded for the six Pollux
// models in builtin.json. Its gradient statistics are fitted in log space
// and its step times have a positive compute share, so the values are
// positive wherever they are defined (TestFittedSane sweeps them).
//
// # Deviation from Pollux
//
// Convergence statistics and the step and sync times of measured placements
// (1-D interpolation in the per-GPU batch size) agree with Pollux's to
// rounding. Unmeasured placements are interpolated piecewise-linearly over
// (nodes, replicas, local_bsz), which Pollux does with scipy's
// LinearNDInterpolator on a Qhull Delaunay triangulation. Measured uses its
// own exact-predicate Delaunay triangulation instead (delaunay.go), with
// deterministic tie-breaking. The Pollux point sets are grid-like, so many
// Delaunay cells have five or more cospherical vertices, and Qhull splits
// those degenerate cells into tetrahedra differently. Both are valid
// Delaunay triangulations and agree at every measured point, but an
// individual off-grid query can differ from scipy's value by tens of
// percent, mostly in small sync times (the checked reference queries differ
// by up to 15%).
//
// On whole-cluster replays the effect is small. Against the Pollux
// simulator's published average JCTs (16 nodes x 4 GPUs), the trace
// package's replay gives 3469.69 s for Tiresias on workload-6 (Pollux:
// 3469.69 s, identical), 4038.03 s for Tiresias averaged over workloads 1-8
// (Pollux: 4038.18 s, -0.004%), and 5270.81 s for Optimus on workload-6
// (Pollux: 5301.88 s, -0.59%).
//
// # Usage
//
// Load measured profiles when the traces are at hand, and fall back to the
// builtin fitted ones otherwise:
//
//	m, err := profile.Load("../shared/traces/pollux_apps/imagenet")
//	if err != nil {
//		return err
//	}
//	step, sync := m.Throughput([]int{4, 4, 2}, 100) // seconds per iteration
//	iters := m.Iteration(3200, m.CompletionEpoch(3200))
//
//	f, err := profile.Builtin("imagenet") // no files needed
//
// Refit and rewrite builtin.json from the traces:
//
//	ps := map[string]profile.Params{}
//	for name, m := range measured {
//		ps[name] = profile.Fit(m)
//	}
//	err := profile.WriteBuiltinJSON(w, ps)
//
// and then run go generate ./env/profile, which writes builtin.json's
// numbers as Go (builtin_params.go: the binary does not decode JSON at
// start-up) and the embedded Delaunay triangulations of the Pollux models'
// interpolation points (triangulations.bin, from ../shared/traces; see
// docs/format/triangulations.md).
//
// Throughput panics where Pollux's own code fails (batch sizes outside the
// measurements, placements outside their convex hull); Measured.TryThroughput
// reports those cases instead.
package profile
