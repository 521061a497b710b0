// Package direct holds Drover's direct learned scheduling policies, the
// RL forms of STRN and SAS as their papers give them: strn-rl maps a job's
// features and per-slot placement features to a placement template and a
// sync strategy, without STRN's probes and scoring pass; sas-rl assigns a
// job to a group of nodes that behave alike (bands of predicted pace: load
// plus GPU slowness) and a sync strategy, without SAS's grouping
// optimisation per decision.
// Both use env/sched's Encoder and joint action (node group or whole
// cluster x sync strategy, or hold), so a decision costs one cheap pass
// over the nodes and one small network evaluation (nn.Infer).
//
// A Policy decides with any Actor; GreedyNet is the best valid action of
// a Network, the one-method forward pass this package defines for the
// networks it runs, and Greedy is GreedyNet over an agents/nn network
// (nn.Infer implements Network). The policy itself (direct.go) imports no
// agents package; only the checkpoint wiring (checkpoint.go: Greedy,
// FromCheckpoint, Load) reaches agents/nn, for the forward pass, never a
// learner. Teacher records a heuristic's decisions as behaviour-cloning
// samples while running it unchanged (train/direct clones STRN, and SAS
// with STRN's sync rule, then fine-tunes with PPO). Checkpoints are the
// usual checkpoints directory with the encoder's settings in the meta's
// hyperparameters (PutConfig, ConfigOf); Load is the loader drover serve
// and drover eval use.
//
// # Usage
//
//	meta, newPolicy, err := direct.Load("checkpoints/strn-rl")
//	p := newPolicy() // a policies.Policy; one per run
//	for {
//		v, err := sim.Next()
//		if err == env.ErrDone {
//			break
//		}
//		ds, _ := p.Schedule(v)
//		_ = sim.Apply(ds)
//	}
package direct
