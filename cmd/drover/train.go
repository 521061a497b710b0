package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/train"
	"github.com/drover-sched/drover/train/runlog"
)

// runTrain trains an agent: it reads the flags and the --config file into
// a train.Run, validates the whole config before any work (train.Validate:
// an error names the field and the file), and executes it, printing its
// report. Every run writes a fresh directory (--out, which must not hold
// files, or runs/<env>__<algo>__<seed>__<unix time>): config.yaml, a
// TensorBoard event file and scalars.csv with CleanRL's tags, the
// learning curve and the checkpoint (weights.safetensors + meta.json).
// --resume CKPT starts from a checkpoint where the trainer can (PPO's
// actor and critic; a direct policy's actor), into the new directory.
// trainFlags are drover train's flags.
type trainFlags struct {
	envName    *string
	algo       *string
	steps      *int
	seed       *uint64
	quiet      *bool
	out        *string
	resume     *string
	evalSeeds  *int
	fromLog    *string
	initDir    *string
	logCluster *string
	logNodes   *int
	logGPN     *int
	backend    *string
	device     *string
	configFile *string
	teacher    *string // pd-rl's
	judge      *string // pd-rl's: re-judge a saved checkpoint
}

// defineTrainFlags defines drover train's flags on fs.
func defineTrainFlags(fs *flag.FlagSet) *trainFlags {
	f := new(trainFlags)
	f.envName = fs.String("env", "placement", "environment: placement or sync (the built-in workload; learned vs the heuristics), sas-rl or strn-rl (the direct learned policies: node group x sync strategy per job, no heuristic in the loop; judged on the held-out built-in, Philly-late, Helios and PAI workloads), pd-rl (the learned LLM inference router: prefill instance x KV format x decode instance per request, bc or ppo; judged by the gate against HACK on held-out windows of the Azure 2023 conv trace, read from ../shared/traces/llm), mm-rl (the learned multimodal autoscaler: PPO over env/mmgym, each 5-minute period ModServe's two pool asks scaled down, kept or up; judged by the gate against ModServe's rule on held-out days, --eval-seeds episodes; the --mm-* flags), or cartpole (the known-answer check)")
	f.algo = fs.String("algo", "ppo", "algorithm: ppo or dqn (cartpole, placement, sync); for sas-rl and strn-rl: bc (behaviour cloning of the heuristic), ppo (bc, then PPO), dqn, or the older candidate re-rankers bandit (a contextual bandit scoring each decision by counterfactual replays, or by its job's own slowdown with train.credit: own) and rerank-ppo")
	f.steps = fs.Int("steps", 0, "environment steps, 1 to 1e9 (default: 500000 for cartpole, 100000 for placement, 20000 5-minute periods for mm-rl)")
	f.seed = fs.Uint64("seed", 1, "random seed")
	f.quiet = fs.Bool("quiet", false, "no progress output")
	f.out = fs.String("out", "", "the run directory, new or empty: config.yaml, TensorBoard events, scalars.csv and the checkpoint (default runs/<env>__<algo>__<seed>__<unix time>); a directory holding files is refused, so runs never mix")
	f.resume = fs.String("resume", "", "the checkpoint directory (an earlier run's --out) to start from, into a new --out: PPO runs (cartpole, placement, sync, rerank-ppo) copy its actor and critic, direct policies (strn-rl, sas-rl with bc or ppo) its actor; Adam's state, the learning-rate schedule and the step count start afresh, and --steps more are trained. DQN and bandit runs cannot resume")
	f.evalSeeds = fs.Int("eval-seeds", 5, "sas-rl, strn-rl: held-out seeds per workload, 0 to 1000 (Helios; PAI gets half; 0: no held-out evaluation); pd-rl: held-out gap-scale seeds; mm-rl: held-out episodes (days) the gate judges on")
	f.fromLog = fs.String("from-log", "", "sas-rl, strn-rl (bc, ppo, dqn): fine-tune on what a deployment served: the decision log DIR that drover serve wrote (datasets/declog) is replayed in the simulator, each logged job arriving as it did with its GPUs, model and run time, and the policy trains on those arrivals (background loads and jitter vary per episode) and is judged on them with --eval-seeds paired seeds against --init (or the heuristic); the node loads the deployment saw are not in the log, so they are not learned from")
	f.initDir = fs.String("init", "", "with --from-log: the direct checkpoint (strn-rl or sas-rl, bc or ppo) training starts from; its groups, hold and hidden widths are kept")
	f.logCluster = fs.String("cluster", "homogeneous", "with --from-log: the cluster the log's jobs are replayed on: homogeneous (--nodes x --gpus-per-node), pai, synth:N or the path of a PAI-format node list")
	f.logNodes = fs.Int("nodes", 16, "with --from-log: number of nodes, 1 to 100000 (with --cluster pai, synth:N or a node list: keep the first N GPU nodes; default all)")
	f.logGPN = fs.Int("gpus-per-node", 4, "with --from-log: GPUs per node of a homogeneous cluster, 1 to 64")
	f.backend = fs.String("backend", "", "NN backend of the updates (ppo, dqn): go (the default, pure Go) or torch (libtorch, in a binary built with -tags torch: make build-torch); rollouts act on the Go networks and checkpoints are the same files either way")
	f.device = fs.String("device", "", "with --backend torch: cpu (the default), cuda or cuda:N")
	f.configFile = fs.String("config", "", "YAML file with sections train (env, algo, steps, seed, eval_seeds, ...: docs/format/train-config.md, with each field's bounds), ppo and dqn (the agents' config fields in snake_case); flags given on the command line win")
	f.teacher = fs.String("teacher", "", "pd-rl: the rule behaviour cloning copies: speed (the speed-aware rule, the default) or hack (HACK's router)")
	f.judge = fs.String("judge", "", "pd-rl: no training; judge the checkpoint in this directory by the gate against HACK on the held-out windows at --eval-seeds seeds, as drover train judges a new one, and print the verdict beside the one its meta.json records (the checkpoint is not changed)")
	return f
}

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", stderr)
	f := defineTrainFlags(fs)
	mf := defineTrainMMRLFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("train takes no arguments (got %q); the config file goes in --config", fs.Args())
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if done, err := runTrainInference(f, mf, given, stdout); done {
		return err
	}
	r, err := f.config(given)
	if err != nil {
		return err
	}
	// The device is checked before the run directory is made.
	for _, c := range [][2]string{{r.PPO.Backend, r.PPO.Device}, {r.DQN.Backend, r.DQN.Device}} {
		if _, err := nn.OpenBackend(c[0], c[1]); err != nil {
			return fmt.Errorf("--backend %q --device %q: %w", c[0], c[1], err)
		}
	}
	direct := (r.Train.Env == "strn-rl" || r.Train.Env == "sas-rl") && isDirectAlgo(r.Train.Algo)
	logFlags := map[string]bool{}
	for _, f := range []string{"from-log", "init", "cluster", "nodes", "gpus-per-node"} {
		logFlags[f] = given[f]
	}
	if err := checkLogFlags(logFlags, direct, r.Train.Env, r.Train.Algo); err != nil {
		return err
	}
	if direct {
		if keys := directIgnored(r); len(keys) > 0 {
			return fmt.Errorf("%s: %s --algo %s trains a direct policy, which takes env, algo, steps, seed and eval_seeds from the config and would ignore %s", *f.configFile, r.Train.Env, r.Train.Algo, strings.Join(keys, ", "))
		}
	}
	if *f.resume != "" && given["from-log"] {
		return errors.New("--resume goes without --from-log: a log's fine-tuning starts from --init")
	}
	dir := *f.out
	if dir == "" {
		dir = filepath.Join("runs", runlog.RunName(r.Train.Env, r.Train.Algo, r.Train.Seed, time.Now()))
	}
	if err := runlog.CheckFreshDir(dir); err != nil {
		return err
	}
	if direct {
		be := r.PPO // bc and ppo; dqn's section for dqn
		if r.Train.Algo == "dqn" {
			be.Backend, be.Device = r.DQN.Backend, r.DQN.Device
		}
		return runTrainDirect(directRun{name: r.Train.Env, algo: r.Train.Algo, seed: r.Train.Seed, steps: r.Train.Steps,
			evalSeeds: r.Train.EvalSeeds, dir: dir, quiet: *f.quiet, fromLog: *f.fromLog, init: *f.initDir, resume: *f.resume,
			cluster: *f.logCluster, nodes: *f.logNodes, nodesSet: logFlags["nodes"], gpusPerNode: *f.logGPN,
			backend: be.Backend, device: be.Device}, stdout, stderr)
	}
	if r.Train.Algo == "rerank-ppo" {
		r.Train.Algo = "ppo" // the candidate re-ranker trained by PPO
	}
	if *f.resume != "" {
		m, nets, err := checkpoints.Load(*f.resume)
		if err != nil {
			return fmt.Errorf("--resume %s: %w", *f.resume, err)
		}
		if err := r.ResumeFrom(m, nets); err != nil {
			return fmt.Errorf("--resume %s: %w", *f.resume, err)
		}
		fmt.Fprintf(stdout, "starting from %s (%s/%s, hidden %v): a warm start, with a fresh optimizer and %d more steps\n", *f.resume, m.Env, m.Algo, m.Hidden, r.Train.Steps)
	}
	r.Dir, r.Out = dir, stdout
	if !*f.quiet {
		r.Progress = stderr
	}
	_, err = r.Execute()
	return err
}

// config is the run the flags and the config file (--config) describe,
// validated: the flags' own bounds first, so that a file's error is the
// file's; then the file, with the flags given on the command line
// winning.
func (f *trainFlags) config(given map[string]bool) (*train.Run, error) {
	switch {
	case given["steps"] && (*f.steps < 1 || *f.steps > train.MaxSteps):
		return nil, fmt.Errorf("--steps %d: want 1 to %d (leave the flag out for the env's default)", *f.steps, train.MaxSteps)
	}
	r := train.NewRun(train.Config{Env: *f.envName, Algo: *f.algo, Steps: *f.steps, Seed: *f.seed, EvalSeeds: *f.evalSeeds})
	if *f.configFile != "" {
		if err := train.LoadConfig(*f.configFile, r); err != nil {
			return nil, err
		}
		for name, set := range map[string]func(){
			"env": func() { r.Train.Env = *f.envName }, "algo": func() { r.Train.Algo = *f.algo },
			"steps": func() { r.Train.Steps = *f.steps }, "seed": func() { r.Train.Seed = *f.seed },
			"eval-seeds": func() { r.Train.EvalSeeds = *f.evalSeeds },
		} {
			if given[name] {
				set()
			}
		}
	}
	for _, set := range []struct {
		flag string
		f    func()
	}{{"backend", func() { r.PPO.Backend, r.DQN.Backend = *f.backend, *f.backend }}, {"device", func() { r.PPO.Device, r.DQN.Device = *f.device, *f.device }}} {
		if given[set.flag] {
			set.f()
		}
	}
	if err := r.Validate(); err != nil {
		if *f.configFile != "" {
			return nil, fmt.Errorf("%s with the flags: %w", *f.configFile, err)
		}
		return nil, fmt.Errorf("flags: %w", err)
	}
	return r, nil
}
