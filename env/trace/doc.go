// Package trace is the replay driver of the simulator: it turns a workload
// (datasets) into jobs, picks the throughput model and the model profiles,
// runs a policy over it with env.Sim and collects the results. It is where
// file I/O (profiles) meets the pure core in env.
//
// # Usage
//
//	w, _ := datasets.Load("builtin", datasets.FormatAuto, datasets.Options{})
//	profiles, src, _ := trace.Profiles("", "")
//	p, _ := builtin.Registry().New("tiresias", policies.Config{Seed: 1})
//	res, _ := trace.Run(trace.Options{Workload: w, Model: "pollux", Profiles: profiles, Policy: p, Nodes: 16, GPUsPerNode: 4})
//	fmt.Println(src, res.Summary.AvgJCT)
//
// Profiles are the measured Pollux profiles when a pollux_apps directory
// is given or found near the workload, and otherwise the fitted parameters
// embedded in the binary (env/profile), so a run needs no files.
package trace
