// Package checkpoints stores trained policies: a directory per checkpoint
// version holding the network weights (weights.safetensors, the format of
// docs/format/checkpoint-weights.md) and the metadata (meta.json: format
// version, environment, observation and action sizes, network shapes,
// hyperparameters, seed, steps, evaluation scores, and a probe: inputs with
// the outputs the saved networks give, so that any reader can check that
// it runs the same forward pass). Both files are written atomically, to a
// temporary file renamed into place, so a crash never leaves a half-written
// checkpoint, and Load validates everything it reads.
//
// A learned variant's checkpoint may also carry a Support, the box of the
// contexts it was trained on, outside which its decisions give way to the
// heuristic's (Support.Gate). It lives here, with the metadata that holds
// it, rather than with the bandit learner that fills it, so that reading
// a checkpoint links no learner.
//
// A learned multimodal autoscaler's checkpoint (env mm-rl) carries an
// MMScale: the observation and action layout, the rule it scales with its
// profile, how it trained and the gate's verdict, so that a server
// rebuilds the autoscaler and its baseline from the checkpoint alone
// (serve.LoadMMRL).
//
// The format is specified in docs/format/checkpoint.md;
// scripts/check_checkpoint.py reads a checkpoint with numpy alone and
// checks the probe to 1e-5.
//
// # Usage
//
//	meta := checkpoints.Meta{Env: "cartpole", Algo: "ppo", ObsDim: 4, Actions: 2, Hidden: []int{64, 64}, Activation: "tanh"}
//	err := checkpoints.Save(dir, meta, agent.Actor, agent.Critic)
//	meta, tensors, err := checkpoints.Load(dir)
package checkpoints
