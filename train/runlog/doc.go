// Package runlog records a training run the way CleanRL does: a run
// directory named <env>__<algo>__<seed>__<unix time> (RunName) holding the
// effective config (config.yaml), a TensorBoard event file with CleanRL's
// tag names (charts/episodic_return, losses/value_loss, ...) and the same
// scalars as scalars.csv.
//
// The event file is written from the format, without TensorFlow:
// TFRecord framing with masked CRC-32C around hand-encoded Event protobufs
// (docs/format/tfevents.md). Encoding is kept apart from I/O: AppendEvent,
// AppendRecord, AppendCSVRow and their decoders DecodeEvent, NextRecord,
// DecodeEvents and DecodeCSV are pure; Logger writes files on top of them.
// scripts/read_tfevents.py reads event files with Python's standard
// library alone.
//
// A run's YAML config overlays the defaults of the structs it configures
// (OverlayConfig, LoadConfig), section by section, with keys that are the
// snake_case of the Go field names (see Section and SnakeCase); it is
// strict, so a misspelt key is an error naming its file:line:column, not
// a silently ignored setting.
//
// # Usage
//
//	cfg := ppo.DefaultConfig()
//	tr := TrainConfig{Env: "cartpole", Algo: "ppo", Seed: 1}
//	sections := []runlog.Section{{Name: "train", Config: &tr}, {Name: "ppo", Config: &cfg}}
//	if err := runlog.LoadConfig(path, sections...); err != nil { ... }
//	cfg.Seed = tr.Seed
//	dir := filepath.Join("runs", runlog.RunName(tr.Env, tr.Algo, tr.Seed, time.Now()))
//	if err := runlog.WriteConfig(dir, sections...); err != nil { ... }
//	text, _ := runlog.RenderConfig(sections...)
//	fmt.Print(string(text)) // the full config, logged at start
//	lg, err := runlog.Open(dir, runlog.Options{})
//	if err != nil { ... }
//	defer lg.Close()
//	start := time.Now()
//	ppo.Train(cfg, mk, func(u ppo.Update) {
//		for _, r := range u.Episodes {
//			lg.Scalar(runlog.TagEpisodicReturn, u.Step, r)
//		}
//		lg.Scalar(runlog.TagLearningRate, u.Step, u.LR)
//		lg.Scalar(runlog.TagPolicyLoss, u.Step, float64(u.PolicyLoss))
//		lg.Scalar(runlog.TagValueLoss, u.Step, float64(u.ValueLoss))
//		lg.Scalar(runlog.TagSPS, u.Step, float64(u.Step)/time.Since(start).Seconds())
//	})
//	if err := lg.Close(); err != nil { ... }
//
// Then `tensorboard --logdir runs` plots the run next to CleanRL's.
package runlog
