// Package mmgym is the gym environment of learned multimodal autoscaling
// (issue 35's mm-rl): ModServe's decoupled image and text pools
// (env/infer/mm) over a day of the synthetic LMM week, one step a scaling
// period, driven by env/infer/mm/autoscale. At each period's end the rule
// Config.NewRule returns (ModServe's, policies/mmscale.ModServe, which the
// caller passes in: env imports no policy) asks for ceil(load / capacity)
// instances a pool; the action scales each ask down (x 2/3, at least one
// fewer), keeps it, or scales it up (x 1.5, at least one more): 9
// actions, Rule (4) being the rule's own decision. Within a period the
// rule's SLO triggers act as in ModServe. The reward of a step is minus
// the period's GPU-hours and Penalty GPU-hours for each request that
// missed its TTFT objective, so an episode's return is minus the day's
// cost.
//
// # Usage
//
//	e, err := mmgym.New(mmgym.Config{Model: mm.Llama32_11BVision, Days: []int{0, 1, 2, 3, 4},
//		Scale: cfg, Profile: prof, Penalty: 0.05, Router: router,
//		NewRule: func() (autoscale.Scaler, error) { return mmscale.NewModServe(cfg, prof, init) }})
//	obs, _ := e.Reset(seed)
//	for {
//		obs, r, terminated, _, info := e.Step(policy(obs))
//		if terminated {
//			fmt.Println(info["gpu_hours"], info["attainment"])
//			break
//		}
//	}
package mmgym
