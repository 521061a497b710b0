package train

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"time"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/builtin"
)

// trainVariant trains r.Train.Env, the learned variant of a heuristic
// that proposes candidates (strn-rl, sas-rl): PPO or the contextual bandit
// chooses among the heuristic's candidates for each job on the training
// workload (by default the built-in one on 16 nodes x 4 GPUs, per-worker
// model; reward: minus the GPU-held time, the TTA objective), then the
// learned policy and the heuristic run on the held-out workloads with the
// same seeds, and the gate compares their average time-to-accuracy
// episode by episode (judge).
func trainVariant(r *Run) (map[string]*nn.MLP, map[string]float64, Verdict, error) {
	name, steps := r.Train.Env, r.Train.Steps
	heuristic := variantHeuristic[name]
	newProp, err := Proposer(heuristic)
	if err != nil {
		return nil, nil, Verdict{}, err
	}
	pcfg, wname, cdesc, late, err := variantConfig(r, newProp)
	if err != nil {
		return nil, nil, Verdict{}, err
	}
	// The environments share pcfg, which is safe: its functions build a
	// fresh model, proposer and job list per episode, and the profiles
	// they share are safe for concurrent use. PPO's environments may step
	// in parallel goroutines (ppo.parallel), and the bandit's replays do.
	mk := envMaker(pcfg)
	algo := "PPO"
	if r.Train.Algo == "bandit" {
		switch r.Train.credit() {
		case "own":
			algo = "a contextual bandit (each decision scored by its job's own slowdown)"
		default:
			algo = "a contextual bandit (each decision scored by counterfactual replays: the GPU-held hours it saved)"
		}
	}
	if r.Train.Profiles != "" && late == nil { // a trace's description names its profiles
		wname += ", profiles " + r.Train.Profiles
	}
	fmt.Fprintf(r.w, "%s: %s chooses among %s's candidates; trained on %s, %s, per-worker model\n",
		name, algo, heuristic, wname, cdesc)
	start := time.Now()
	var act func([]float64, []bool) int
	var nets map[string]*nn.MLP
	if r.Train.Algo == "bandit" {
		act, nets, err = trainBandit(r, mk(0).(*placement.Env), func() *placement.Env { return mk(0).(*placement.Env) })
		if err != nil {
			return nil, nil, Verdict{}, err
		}
	} else {
		// Evaluate the greedy policy now and then on held-out seeds.
		r.evalEnv = mk(0).(*placement.Env)
		agent, err := ppo.Train(r.PPO, mk, r.ppoReport)
		r.evalEnv = nil
		if err != nil {
			return nil, nil, Verdict{}, err
		}
		act, nets = Greedy(agent.Actor), map[string]*nn.MLP{"actor": agent.Actor, "critic": agent.Critic}
	}
	r.close()
	fmt.Fprintf(r.w, "trained %d steps in %s\n\n", steps, time.Since(start).Round(time.Millisecond))

	scores, verdict, err := judge(r, heuristic, newProp, act, late)
	if err != nil {
		return nil, nil, Verdict{}, err
	}
	return nets, scores, verdict, nil
}

// variantConfig builds the training environment's config of sas-rl and
// strn-rl from train's settings (cluster, workload, profiles, objective),
// with the name of the workload and of the cluster and, for a trace
// workload, its held-out later part.
func variantConfig(r *Run, newProp func() env.Proposer) (placement.Config, string, string, *evalWorkload, error) {
	nodes, gpn := cmp.Or(r.Train.Nodes, 16), cmp.Or(r.Train.GPUsPerNode, 4)
	cdesc, gpus := fmt.Sprintf("%d x %d GPUs", nodes, gpn), nodes*gpn
	var list *env.Cluster // train.cluster's node list, if any
	if spec := r.Train.Cluster; spec != "" && spec != "homogeneous" {
		c, desc, err := trace.LoadCluster(spec, r.Train.Nodes, gpn)
		if err != nil {
			return placement.Config{}, "", "", nil, fmt.Errorf("train.cluster: %w", err)
		}
		list, nodes, cdesc, gpus = &c, len(c.Nodes), desc, c.TotalGPUs()
		gpn = c.MaxNodeGPUs() // the model's packed reference is the list's node size
	}
	pcfg, w, _, err := builtinEnvConfig(nodes, gpn, r.Train.Profiles, nil)
	if err != nil {
		return placement.Config{}, "", "", nil, err
	}
	if list != nil {
		pcfg.Cluster = *list
	}
	pcfg.NewProposer, pcfg.Objective = newProp, cmp.Or(r.Train.Objective, placement.ObjectiveTTA)
	wname := fmt.Sprintf("builtin (%d jobs, Philly-fitted)", len(w.Jobs))
	var late *evalWorkload // a trace workload's held-out later jobs
	switch r.Train.Workload {
	case "", "builtin":
		// The environment cannot place a job larger than the cluster (it
		// would fail at its first reset, in the middle of training).
		big := w.Jobs[0]
		for _, j := range w.Jobs {
			if j.GPUs > big.GPUs {
				big = j
			}
		}
		if big.GPUs > gpus {
			return placement.Config{}, "", "", nil, fmt.Errorf("%w: train.nodes x train.gpus_per_node: %s is %d GPUs, but the built-in workload's largest job (%s) asks for %d: give the cluster at least %d GPUs, or train.workload: synthetic (its jobs fit the cluster)",
				ErrInvalidConfig, cdesc, gpus, big.Name, big.GPUs, big.GPUs)
		}
	case "synthetic":
		sp := datasets.DefaultParams()
		sp.MaxGPUs = gpus
		sp.RateScale *= float64(gpus) / float64(datasets.DefaultMaxGPUs) * cmp.Or(r.Train.Load, 1)
		tilt, rho := r.Train.Tilt, r.Train.OfferedLoad
		pcfg.NewJobs = func(s uint64) []env.JobSpec {
			p := sp
			if tilt > 0 {
				// The exponent has its own stream: with Tilt 0 the jobs
				// are those of an untilted run, draw for draw.
				p = sp.Tilt(tilt * rand.New(rand.NewPCG(s, 0x74696c74)).Float64())
			}
			w := datasets.Synthetic(p, datasets.DefaultJobs, rand.NewPCG(s, s))
			if rho > 0 {
				w.ScaleLoad(gpus, rho)
			}
			return trace.Specs(w)
		}
		wname = fmt.Sprintf("a fresh Philly-fitted synthetic workload per episode (%d jobs)", datasets.DefaultJobs)
		if tilt > 0 {
			wname += fmt.Sprintf(", GPU mix tilted by g^a, a uniform in [0, %g]", tilt)
		}
		if rho > 0 {
			wname += fmt.Sprintf(", offered load %g", rho)
		}
	default:
		tw, err := traceWorkload(r.Train.Workload, cmp.Or(r.Train.Split, 0.5), r.Train.OfferedLoad, pcfg.Cluster, r.Train.Profiles)
		if err != nil {
			return placement.Config{}, "", "", nil, err
		}
		pcfg.NewJobs, pcfg.NewModel = tw.newJobs, tw.newModel
		wname = tw.desc
		late = &tw.late
	}
	return pcfg, wname, cdesc, late, nil
}

// variantPrior is the default ppo.Config.ActionPrior of sas-rl and
// strn-rl: start near the heuristic, whose own choice (action 0) gets a
// logit prior of 3, e^3 against 1 for each other candidate (91% with two
// others), while the others are still explored.
func variantPrior() []float32 {
	p := make([]float32, placement.DefaultCandidates)
	p[0] = 3
	return p
}

// variantHeuristic maps a learned variant to the heuristic whose
// candidates it chooses among.
var variantHeuristic = map[string]string{"sas-rl": "sas", "strn-rl": "strn"}

// VariantHeuristics maps each learned variant (sas-rl, strn-rl) to the
// heuristic whose candidates it chooses among (sas, strn). The map is a
// fresh copy, the caller's to keep.
func VariantHeuristics() map[string]string { return maps.Clone(variantHeuristic) }

// Proposer returns a constructor of fresh heuristics of the named
// env.Proposer (a builtin policy that proposes candidates, such as
// sas or strn), or an error when the policy is unknown or proposes none.
func Proposer(heuristic string) (func() env.Proposer, error) {
	reg := builtin.Registry()
	p, err := reg.New(heuristic, policies.Config{})
	if err != nil {
		return nil, err
	}
	if _, ok := p.(env.Proposer); !ok {
		return nil, fmt.Errorf("policy %s does not propose candidates", heuristic)
	}
	return func() env.Proposer {
		p, _ := reg.New(heuristic, policies.Config{})
		return p.(env.Proposer)
	}, nil
}

// Greedy returns a policy that acts with the most probable valid action of
// actor, a policy network's logits over the actions (as PPO's actor), for
// placement.Learned and placement.Env.Run. It reuses its input buffer, so
// one policy must not be called concurrently.
func Greedy(actor *nn.MLP) func(obs []float64, mask []bool) int {
	x := nn.NewMat(1, 0)
	return func(obs []float64, mask []bool) int {
		if x.Cols != len(obs) {
			x = nn.NewMat(1, len(obs))
		}
		for i, v := range obs {
			x.Data[i] = float32(v)
		}
		return nn.NewCategorical(actor.Forward(x), mask).Mode()[0]
	}
}
