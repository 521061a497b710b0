// Package autoscale is the simulator's side of autoscaling a multimodal
// deployment (env/infer/mm): what a scaler observes over a monitoring
// window (Window: load, finished requests and how many met their
// objective, pending work, where the misses waited), the sizes it returns
// (Sizes), the settings of a scaling rule (Config: period, monitoring
// window, SLO threshold and objective, bounds) and the driver that runs
// the simulation window by window and starts or drains instances to reach
// the sizes asked, counting GPU-hours (Run, or Driver for a caller that
// steps the loop itself, as env/mmgym does). It defines what it calls,
// Scaler; the rules (ModServe's, the monolith's) are in policies/mmscale.
//
// # Usage
//
//	s, _ := mm.New(mm.Decoupled(model, 1, 1), week)
//	d, _ := autoscale.NewDriver(s, week, router, cfg, sc.Initial())
//	for !d.Done() {
//		w, tick, err := d.Next()
//		if err != nil {
//			return err
//		}
//		if err := d.Set(sc.Decide(w, d.Sizes(), tick)); err != nil {
//			return err
//		}
//	}
//	fmt.Println(d.Outcome().Summary.GPUHours, d.Outcome().Attainment)
package autoscale
