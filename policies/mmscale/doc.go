// Package mmscale is the autoscaling half of issue 35's policies for
// multimodal inference (ModServe, SoCC'25, arXiv 2502.00937): how many
// instances each pool of a deployment runs, period by period.
//
//   - ModServe is ModServe's token-aware pool autoscaler (section 4.2):
//     every 5 minutes each pool gets ceil(ML / MC) instances, ML its
//     modality's load (image tokens a second for the Image Instances,
//     prompt tokens a second for the Text Instances: text tokens for a
//     cross-attention model, text and image tokens for a decoder-only
//     one) and MC one instance's capacity within the SLO from an offline
//     profile; the pools start at InitialSizes (image = median image QPS x
//     median encode latency, text = that / median images per request);
//     and a monitoring window whose SLO attainment falls below 0.99
//     rescales at once.
//   - Monolith scales vLLM-style monolithic instances by request rate with
//     a capacity profile per instance, under the same periods and trigger
//     (the paper gives both "similar SLO-driven autoscaling heuristics
//     based on offline model profiling").
//   - ProfileOf measures the capacities by simulation (steady load on a
//     pool of each kind, bisection on the rate that keeps 99% of requests
//     within their objective).
//
// What the paper leaves open is a Config field, the same for both rules:
// the objective (Objective), the period's load (its busiest monitoring
// window's), the share of the profiled capacity pools are sized for
// (Target; 1 is the rule), and a scale-in stabilization window (Stabilize;
// 1 is the rule). docs/results/multimodal.md, section Autoscaling, says
// why each and what they change.
//
// The scalers see only Windows (load, finished requests and how many met
// the objective, pending work, where the misses waited) and return target
// Sizes; Run (or Driver, its loop stepped by the caller, as env/mmgym
// does) starts and drains the simulator's (env/infer/mm) instances, with
// their start-up time, and counts GPU-hours. Those types and the driver
// are the simulator's side, in env/infer/mm/autoscale; the names here are
// aliases of them.
//
// # Usage
//
//	h, _ := mmscale.HistoryOf(lastWeek)
//	prof, _ := mmscale.ProfileOf(mmscale.ProfileSpec{Base: base, History: lastWeek, SLO: slo, Router: router})
//	sc, _ := mmscale.NewModServe(cfg, prof.Profile, mmscale.InitialSizes(h, prof.Profile))
//	s, _ := mm.New(mm.Decoupled(model, 1, 1), week)
//	out, err := mmscale.Run(s, week, router(true), sc, cfg)
//	fmt.Println(out.Summary.GPUHours, out.Attainment)
package mmscale
