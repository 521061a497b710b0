// Package train is the training pipeline: it turns a config into a
// trained, judged and saved policy. A Run trains an agent on an
// environment (PPO on the placement and sync environments, PPO or a
// contextual bandit for the learned variants sas-rl and strn-rl, PPO or
// DQN on CartPole as the known-answer check), evaluates it against the
// heuristics on held-out episodes, asks the convergence gate whether it
// may replace the heuristic, and writes a run directory: the effective
// config, TensorBoard and CSV logs (train/runlog), the learning curve and
// the checkpoint (checkpoints). `drover train` parses its flags into a Run
// and prints its report.
//
// The pieces read top to bottom, one concept a file:
//
//   - config.go: Config, the `train:` section (docs/format/train-config.md).
//   - run.go: Run and Execute, the main loop; cartpole.go and
//     placement.go train CartPole and the placement and sync environments,
//     and report.go logs the run and reports on it.
//   - variant.go: the learned variants, trained on the heuristic's
//     candidates; bandit.go trains their contextual bandit, and replay.go
//     replays an episode's prefixes for its counterfactual credit.
//   - split.go: a trace as the training workload, split into training
//     windows and a held-out later part (LateWorkload).
//   - heldout.go: the held-out workloads (the built-in one, Helios, PAI
//     and a trace's later part) and how the variants are judged on them.
//   - gate.go: the convergence gate (policies/gate, where it lives so that
//     the server links no trainer) that lets a learned policy replace the
//     heuristic only when it beats it on held-out episodes by a margin,
//     with confidence.
//
// The training loops themselves live with the algorithms, in agents/ppo,
// agents/dqn and agents/bandit.
//
// # Usage
//
// The main loop, as `drover train` runs it:
//
//	r := train.NewRun(train.Config{Env: "sas-rl", Algo: "bandit", Steps: 100000, Seed: 1, EvalSeeds: 5})
//	if err := runlog.LoadConfig(path, r.Sections()...); err != nil { ... } // optional config file
//	r.Out, r.Progress = os.Stdout, os.Stderr
//	res, err := r.Execute() // train, judge on held-out workloads, save
//	if err != nil { ... }
//	if res.Verdict.Converged { ... serve the checkpoint in r.Dir ... }
//
// The gate alone, on per-episode costs of the learned and the heuristic
// policy (same seeds, lower is better):
//
//	v := train.Gate(learnedTTA, heuristicTTA, train.GateConfig{Seed: 1})
//	if v.Converged { ... switch to the learned policy ... }
//
// The held-out evaluation of sas-rl and strn-rl reads the Helios and PAI
// traces from ../shared/traces relative to the working directory (the
// repository's root when drover runs from it).
package train
