package main

import (
	"flag"
	"io"
	"path/filepath"
	"time"

	"github.com/drover-sched/drover/train"
	"github.com/drover-sched/drover/train/runlog"
)

// runTrain trains an agent: it reads the flags and the --config file into
// a train.Run and executes it, printing its report. Every run writes its
// directory (--out, or runs/<env>__<algo>__<seed>__<unix time>):
// config.yaml, a TensorBoard event file and scalars.csv with CleanRL's
// tags, the learning curve and the checkpoint (weights.safetensors +
// meta.json).
func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", stderr)
	envName := fs.String("env", "placement", "environment: placement or sync (the built-in workload; learned vs the heuristics), sas-rl or strn-rl (the direct learned policies: node group x sync strategy per job, no heuristic in the loop; judged on the held-out built-in, Philly-late, Helios and PAI workloads), or cartpole (the known-answer check)")
	algo := fs.String("algo", "ppo", "algorithm: ppo or dqn (cartpole, placement, sync); for sas-rl and strn-rl: bc (behaviour cloning of the heuristic), ppo (bc, then PPO), dqn, or the older candidate re-rankers bandit (a contextual bandit scoring each decision by counterfactual replays, or by its job's own slowdown with train.credit: own) and rerank-ppo")
	steps := fs.Int("steps", 0, "environment steps (default: 500000 for cartpole, 100000 for placement)")
	seed := fs.Uint64("seed", 1, "random seed")
	quiet := fs.Bool("quiet", false, "no progress output")
	out := fs.String("out", "", "the run directory: config.yaml, TensorBoard events, scalars.csv and the checkpoint (default runs/<env>__<algo>__<seed>__<unix time>)")
	evalSeeds := fs.Int("eval-seeds", 5, "sas-rl, strn-rl: held-out seeds per workload (Helios; PAI gets half; 0: no held-out evaluation)")
	fromLog := fs.String("from-log", "", "sas-rl, strn-rl (bc, ppo, dqn): fine-tune on what a deployment served: the decision log DIR that drover serve wrote (serve/declog) is replayed in the simulator, each logged job arriving as it did with its GPUs, model and run time, and the policy trains on those arrivals (background loads and jitter vary per episode) and is judged on them with --eval-seeds paired seeds against --init (or the heuristic); the node loads the deployment saw are not in the log, so they are not learned from")
	initDir := fs.String("init", "", "with --from-log: the direct checkpoint (strn-rl or sas-rl, bc or ppo) training starts from; its groups, hold and hidden widths are kept")
	logCluster := fs.String("cluster", "homogeneous", "with --from-log: the cluster the log's jobs are replayed on: homogeneous (--nodes x --gpus-per-node), pai, synth:N or the path of a PAI-format node list")
	logNodes := fs.Int("nodes", 16, "with --from-log: number of nodes (with --cluster pai, synth:N or a node list: keep the first N GPU nodes; default all)")
	logGPN := fs.Int("gpus-per-node", 4, "with --from-log: GPUs per node of a homogeneous cluster")
	configFile := fs.String("config", "", "YAML file with sections train (env, algo, steps, seed, eval_seeds, ...: docs/format/train-config.md), ppo and dqn (the agents' config fields in snake_case); flags given on the command line win")
	if err := parse(fs, args); err != nil {
		return err
	}
	r := train.NewRun(train.Config{Env: *envName, Algo: *algo, Steps: *steps, Seed: *seed, EvalSeeds: *evalSeeds})
	if *configFile != "" {
		if err := runlog.LoadConfig(*configFile, r.Sections()...); err != nil {
			return err
		}
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "env":
				r.Train.Env = *envName
			case "algo":
				r.Train.Algo = *algo
			case "steps":
				r.Train.Steps = *steps
			case "seed":
				r.Train.Seed = *seed
			case "eval-seeds":
				r.Train.EvalSeeds = *evalSeeds
			}
		})
	}
	direct := (r.Train.Env == "strn-rl" || r.Train.Env == "sas-rl") && isDirectAlgo(r.Train.Algo)
	logFlags := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "from-log", "init", "cluster", "nodes", "gpus-per-node":
			logFlags[f.Name] = true
		}
	})
	if err := checkLogFlags(logFlags, direct, r.Train.Env, r.Train.Algo); err != nil {
		return err
	}
	if direct {
		dir := *out
		if dir == "" {
			dir = filepath.Join("runs", runlog.RunName(r.Train.Env, r.Train.Algo, r.Train.Seed, time.Now()))
		}
		return runTrainDirect(directRun{name: r.Train.Env, algo: r.Train.Algo, seed: r.Train.Seed, steps: r.Train.Steps,
			evalSeeds: r.Train.EvalSeeds, dir: dir, quiet: *quiet, fromLog: *fromLog, init: *initDir,
			cluster: *logCluster, nodes: *logNodes, nodesSet: logFlags["nodes"], gpusPerNode: *logGPN}, stdout, stderr)
	}
	if r.Train.Algo == "rerank-ppo" {
		r.Train.Algo = "ppo" // the candidate re-ranker trained by PPO
	}
	r.Dir, r.Out = *out, stdout
	if !*quiet {
		r.Progress = stderr
	}
	_, err := r.Execute()
	return err
}
