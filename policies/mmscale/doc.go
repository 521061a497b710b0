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
//
// The scalers see only Windows (load, finished requests and how many met
// the SLO, pending work) and return target Sizes: the simulator
// (env/infer/mm) starts and drains instances, with their start-up time,
// and counts GPU-hours.
//
// # Usage
//
//	h, _ := mmscale.HistoryOf(lastWeek)
//	s, _ := mmscale.NewModServe(mmscale.DefaultConfig(), prof, mmscale.InitialSizes(h, prof))
//	cur := s.Initial()
//	for each monitoring window w (tick: it closes a 5-minute period) {
//		cur = s.Decide(w, cur, tick)
//	}
package mmscale
