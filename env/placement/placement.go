package placement

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/gym"
)

// Config sets up the environment.
type Config struct {
	// Jobs is the workload replayed in every episode.
	Jobs []env.JobSpec
	// NewJobs, when set, gives each episode its own workload for the
	// episode's seed (Jobs is then ignored): a fresh synthetic workload per
	// episode varies what the agent sees.
	NewJobs func(seed uint64) []env.JobSpec
	// Cluster is the cluster; nodes are grouped by Rack.
	Cluster env.Cluster
	// NewModel returns a fresh throughput model for an episode seed.
	NewModel func(seed uint64) env.Model
	// RestartDelay is the seconds every placement costs.
	RestartDelay float64
	// StragglerWeight weights the straggler penalty (0: none).
	StragglerWeight float64
	// Sync makes the agent choose each job's synchronization strategy
	// (SyncChoices) instead of its placement; jobs are then placed
	// first-fit (env.PackFirstFit), and the observation also
	// describes that placement.
	Sync bool
	// NewProposer, when set, makes the agent choose among a heuristic's
	// candidates for each job (env.Proposer; strn-rl and sas-rl):
	// action k takes candidate k, the heuristic's own choice is action
	// 0, and the observation is CandidateObs. It returns a fresh
	// heuristic for each episode.
	NewProposer func() env.Proposer
	// Objective is what the reward charges: ObjectiveJCT (the default)
	// or ObjectiveTTA.
	Objective string
	// Candidates is the number of candidate slots with NewProposer
	// (default DefaultCandidates); candidates beyond it are dropped.
	Candidates int
}

// Objectives of the reward. Rewards are dense: each step is charged the
// time that passed since the last one, weighted by the jobs it counts, in
// hours, so the undiscounted return of an episode is minus the sum over
// jobs of that time (Little's law).
const (
	// ObjectiveJCT counts the jobs in the system (pending or running):
	// the return is minus the total job completion time.
	ObjectiveJCT = "jct"
	// ObjectiveTTA counts the running jobs: the return is minus the total
	// time the jobs held GPUs, which is their time to accuracy plus the
	// restart delays.
	ObjectiveTTA = "tta"
	// ObjectiveTTAFinish charges each job's GPU-held time at once, at the
	// step in which it finishes: the same return as ObjectiveTTA (once
	// every job has finished), credited in lumps per job rather than
	// spread over time.
	ObjectiveTTAFinish = "tta-finish"
)

// DefaultCandidates is the default number of candidate slots: SAS's most
// node groups (sas.MaxGroups) plus its union fallback.
const DefaultCandidates = 9

// SyncChoices are the strategies of the sync environment, by action.
var SyncChoices = []env.Sync{{Kind: env.BSP}, {Kind: env.ASP}, {Kind: env.SSP, Staleness: 3}, {Kind: env.LocalSGD, Period: 8}}

// models are the one-hot model names, in order.
var models = []string{"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}

// Env is the placement environment. It is not safe for concurrent use.
type Env struct {
	cfg      Config
	groups   [][]int // node indices per group
	gpus     []int   // GPUs per group
	maxGroup int     // GPUs of the largest group
	sim      *env.Sim
	view     *env.View
	job      *env.Job // the job being decided
	area     float64  // integral of the jobs in the system over time, s
	lastArea float64  // area at the last reward
	strag    float64  // straggling worker-iterations counted so far
	heldDone float64  // GPU-held seconds of the finished jobs at the last reward
	done     bool
	obsDim   int

	// With a Proposer.
	prop   env.Proposer
	cands  []env.Candidate
	begun  bool // Begin ran at this decision point
	cursor int  // next job of view.Active to propose for

	// Scratch buffers reused across steps.
	mask    []bool
	scratch []int
	dec     [1]env.Decision // Apply's argument
}

var _ gym.Env = (*Env)(nil)
var _ gym.Masker = (*Env)(nil)
var _ gym.StepperInto = (*Env)(nil)

// New validates cfg and returns the environment.
func New(cfg Config) (*Env, error) {
	if (len(cfg.Jobs) == 0 && cfg.NewJobs == nil) || cfg.NewModel == nil || len(cfg.Cluster.Nodes) == 0 {
		return nil, errors.New("placement: config needs jobs, a cluster and a model")
	}
	switch cfg.Objective {
	case "":
		cfg.Objective = ObjectiveJCT
	case ObjectiveJCT, ObjectiveTTA, ObjectiveTTAFinish:
	default:
		return nil, fmt.Errorf("placement: unknown objective %q (want %s or %s)", cfg.Objective, ObjectiveJCT, ObjectiveTTA)
	}
	e := &Env{cfg: cfg}
	byRack := map[int][]int{}
	var racks []int
	for i, n := range cfg.Cluster.Nodes {
		if _, ok := byRack[n.Rack]; !ok {
			racks = append(racks, n.Rack)
		}
		byRack[n.Rack] = append(byRack[n.Rack], i)
	}
	slices.Sort(racks)
	for _, r := range racks {
		g := byRack[r]
		e.groups = append(e.groups, g)
		gpus := 0
		for _, n := range g {
			gpus += cfg.Cluster.Nodes[n].GPUs
		}
		e.gpus = append(e.gpus, gpus)
		e.maxGroup = max(e.maxGroup, gpus)
	}
	e.obsDim = 2 + len(models) + 3 + 4*len(e.groups) + 2
	if cfg.Sync {
		e.obsDim += 5
	}
	if cfg.NewProposer != nil {
		if cfg.Sync {
			return nil, errors.New("placement: Sync and NewProposer exclude each other")
		}
		if e.cfg.Candidates <= 0 {
			e.cfg.Candidates = DefaultCandidates
		}
		e.obsDim = CandidateObsDim(e.cfg.Candidates, cfg.NewProposer().CandidateFeatures())
	}
	return e, nil
}

// Groups returns the number of node groups (the spread action is Groups()).
func (e *Env) Groups() int { return len(e.groups) }

// ObservationSpace implements gym.Env.
func (e *Env) ObservationSpace() gym.Box {
	lo, hi := make([]float64, e.obsDim), make([]float64, e.obsDim)
	for i := range hi {
		hi[i] = math.Inf(1)
		if e.cfg.NewProposer != nil && i >= JobFeatures {
			// Candidate features are clipped to +-featureClip, and a
			// relative cost can be below its reference (negative).
			lo[i], hi[i] = -featureClip, featureClip
		}
	}
	return gym.Box{Low: lo, High: hi}
}

// ActionSpace implements gym.Env.
func (e *Env) ActionSpace() gym.Discrete {
	if e.cfg.Sync {
		return gym.Discrete{N: len(SyncChoices)}
	}
	if e.cfg.NewProposer != nil {
		return gym.Discrete{N: e.cfg.Candidates}
	}
	return gym.Discrete{N: len(e.groups) + 1}
}

// Reset implements gym.Env: a new simulation of the workload with the
// model for seed, run to the first decision.
func (e *Env) Reset(seed uint64) ([]float64, gym.Info) {
	jobs := e.cfg.Jobs
	if e.cfg.NewJobs != nil {
		jobs = e.cfg.NewJobs(seed)
	}
	s, err := env.New(env.Config{Cluster: e.cfg.Cluster, Model: e.cfg.NewModel(seed), RestartDelay: e.cfg.RestartDelay}, jobs)
	if err != nil {
		panic(fmt.Sprintf("placement: %v", err)) // the config was validated by the caller's workload
	}
	e.sim, e.view, e.job, e.area, e.lastArea, e.strag, e.done = s, nil, nil, 0, 0, 0, false
	e.heldDone = 0
	e.prop, e.cands, e.begun, e.cursor = nil, nil, false, 0
	if e.cfg.NewProposer != nil {
		e.prop = e.cfg.NewProposer()
	}
	e.advance()
	return e.observe(nil), nil
}

// free returns the free GPUs of the nodes.
func (e *Env) free(nodes []int) int {
	f := 0
	for _, n := range nodes {
		f += e.view.Free[n]
	}
	return f
}

// advance runs the simulation until a waiting job fits somewhere (setting
// e.job) or every job has finished (setting e.done).
func (e *Env) advance() {
	for {
		if e.view != nil && e.prop != nil {
			if e.propose() {
				return
			}
		} else if e.view != nil {
			total := -1 // the free GPUs, counted at the first pending job
			for _, j := range e.view.Active {
				if j.State != env.Pending {
					continue
				}
				if total < 0 {
					total = e.totalFree()
				}
				if j.Spec.GPUs <= total {
					e.job = j
					return
				}
			}
		}
		// Between two decision points the jobs in the system are those
		// active now (finishes and arrivals happen at decision points).
		inSystem, t0 := 0, e.sim.Now()
		if e.view != nil {
			inSystem = len(e.view.Active)
			if e.cfg.Objective == ObjectiveTTA || e.cfg.Objective == ObjectiveTTAFinish {
				inSystem = 0
				for _, j := range e.view.Active {
					if j.State == env.Running {
						inSystem++
					}
				}
			}
		}
		v, err := e.sim.Next()
		if err == nil || errors.Is(err, env.ErrDone) {
			e.area += float64(inSystem) * (e.sim.Now() - t0)
		}
		if errors.Is(err, env.ErrDone) {
			e.done, e.job = true, nil
			return
		}
		if err != nil {
			panic(fmt.Sprintf("placement: %v", err))
		}
		e.view, e.begun = v, false
	}
}

// propose looks for the next job the proposer has candidates for at this
// decision point, as env.Delegate would: in arrival order, among the
// pending jobs that fit in the free GPUs. It sets e.job and e.cands and
// reports whether it found one.
func (e *Env) propose() bool {
	if !e.begun {
		e.prop.Begin(e.view)
		e.begun, e.cursor = true, 0
	}
	left := e.totalFree()
	for e.cursor < len(e.view.Active) && left > 0 {
		j := e.view.Active[e.cursor]
		e.cursor++
		if j.State != env.Pending || j.Spec.GPUs > left {
			continue
		}
		if cands := e.prop.Propose(e.view, j); len(cands) > 0 {
			e.job, e.cands = j, cands[:min(len(cands), e.cfg.Candidates)]
			return true
		}
	}
	return false
}

// totalFree returns the free GPUs of the whole cluster.
func (e *Env) totalFree() int {
	f := 0
	for _, n := range e.view.Free {
		f += n
	}
	return f
}

// ActionMask implements gym.Masker.
func (e *Env) ActionMask(dst []bool) []bool {
	n := e.ActionSpace().N
	dst = slices.Grow(dst[:0], n)[:n]
	clear(dst)
	if e.job == nil {
		return dst
	}
	if e.prop != nil {
		for i := range dst {
			dst[i] = i < len(e.cands)
		}
		return dst
	}
	if e.cfg.Sync {
		// One worker has nothing to synchronize: BSP only.
		for i := range dst {
			dst[i] = i == 0 || e.job.Spec.GPUs > 1
		}
		return dst
	}
	g := e.job.Spec.GPUs
	for i, nodes := range e.groups {
		dst[i] = e.free(nodes) >= g
	}
	dst[len(e.groups)] = e.totalFree() >= g
	return dst
}

// valid reports whether ActionMask holds action valid, computing that
// entry only.
func (e *Env) valid(action int) bool {
	if e.job == nil || action < 0 || action >= e.ActionSpace().N {
		return false
	}
	switch {
	case e.prop != nil:
		return action < len(e.cands)
	case e.cfg.Sync:
		return action == 0 || e.job.Spec.GPUs > 1
	case action < len(e.groups):
		return e.free(e.groups[action]) >= e.job.Spec.GPUs
	default:
		return e.totalFree() >= e.job.Spec.GPUs
	}
}

// Step implements gym.Env: it places the current job as the action says
// and runs the simulation to the next decision.
func (e *Env) Step(action int) ([]float64, float64, bool, bool, gym.Info) {
	return e.StepInto(nil, action)
}

// StepInto implements gym.StepperInto: Step writing the observation into
// dst when it has room.
func (e *Env) StepInto(dst []float64, action int) ([]float64, float64, bool, bool, gym.Info) {
	if e.done {
		panic(gym.ErrStepAfterEnd)
	}
	if !e.valid(action) {
		e.mask = e.ActionMask(e.mask)
		panic(fmt.Sprintf("placement: action %d is not valid (mask %v)", action, e.mask))
	}
	var d env.Decision
	switch {
	case e.prop != nil:
		c := e.cands[action]
		e.prop.Commit(e.view, e.job, c)
		d = c.Decision
		e.cands = nil
	case e.cfg.Sync:
		d = env.Decision{Job: e.job.ID, Nodes: e.firstFit(), Sync: SyncChoices[action]}
	default:
		free := append(e.scratch[:0], e.view.Free...)
		e.scratch = free
		if action < len(e.groups) {
			clear(free)
			for _, n := range e.groups[action] {
				free[n] = e.view.Free[n]
			}
		}
		alloc := env.PackMostFree(free, e.job.Spec.GPUs)
		slices.Sort(alloc)
		d = env.Decision{Job: e.job.ID, Nodes: alloc}
	}
	e.dec[0] = d
	err := e.sim.Apply(e.dec[:])
	e.dec[0] = env.Decision{}
	if err != nil {
		panic(fmt.Sprintf("placement: %v", err))
	}
	// The view's jobs and free counts are live: the next pending job that
	// fits is decided at the same time; otherwise the simulation runs on.
	e.job = nil
	e.advance()
	reward := -(e.area - e.lastArea) / 3600
	e.lastArea = e.area
	if e.cfg.Objective == ObjectiveTTAFinish {
		held := 0.0
		for i := range e.sim.Jobs() {
			if j := &e.sim.Jobs()[i]; j.State == env.Done {
				held += j.Held
			}
		}
		reward = -(held - e.heldDone) / 3600
		e.heldDone = held
	}
	if e.cfg.StragglerWeight > 0 {
		s := 0.0
		for _, j := range e.sim.Jobs() {
			s += j.Stragglers
		}
		reward -= e.cfg.StragglerWeight * (s - e.strag) / 1000
		e.strag = s
	}
	return e.observe(dst), reward, e.done, false, nil
}

// observe builds the observation of the current state in dst[:obsDim]
// when dst has room, else in a new slice.
func (e *Env) observe(dst []float64) []float64 {
	var obs []float64
	if cap(dst) >= e.obsDim {
		obs = dst[:e.obsDim]
		clear(obs)
	} else {
		obs = make([]float64, e.obsDim)
	}
	if e.job == nil {
		return obs
	}
	if e.prop != nil {
		return CandidateObs(obs[:0], e.view, e.job, e.cands, e.cfg.Candidates, e.prop.CandidateFeatures())
	}
	j := e.job
	obs[0] = float64(j.Spec.GPUs) / float64(e.maxGroup)
	obs[1] = math.Log1p(j.Spec.Duration/3600) / 5
	if k := slices.Index(models, j.Spec.Model); k >= 0 {
		obs[2+k] = 1
	}
	sens := env.Sensitivities[j.Spec.Model]
	base := 2 + len(models)
	obs[base], obs[base+1], obs[base+2] = sens.CPU, sens.MemBW, sens.Net
	base += 3
	tel, _ := e.view.Model.(env.Telemetry)
	for g, nodes := range e.groups {
		free, cpu, mem, net := 0, 0.0, 0.0, 0.0
		for _, n := range nodes {
			free += e.view.Free[n]
			if tel != nil {
				u := tel.NodeLoad(n, e.view.Now)
				cpu, mem, net = cpu+u.CPU, mem+u.MemBW, net+u.Net
			}
		}
		k := float64(len(nodes))
		obs[base+4*g] = float64(free) / float64(e.gpus[g])
		obs[base+4*g+1], obs[base+4*g+2], obs[base+4*g+3] = cpu/k, mem/k, net/k
	}
	base += 4 * len(e.groups)
	pending, running := 0, 0
	for _, a := range e.view.Active {
		if a.State == env.Pending {
			pending++
		} else {
			running++
		}
	}
	obs[base], obs[base+1] = float64(pending)/100, float64(running)/100
	if e.cfg.Sync {
		// The first-fit placement the job will get: its size, node count,
		// whether it crosses racks, and its nodes' worst CPU and NIC load.
		alloc := e.firstFit()
		nodes := map[int]bool{}
		racks := map[int]bool{}
		maxCPU, maxNet := 0.0, 0.0
		for _, n := range alloc {
			nodes[n] = true
			racks[e.cfg.Cluster.Nodes[n].Rack] = true
			if tel != nil {
				u := tel.NodeLoad(n, e.view.Now)
				maxCPU, maxNet = max(maxCPU, u.CPU), max(maxNet, u.Net)
			}
		}
		cross := 0.0
		if len(racks) > 1 {
			cross = 1
		}
		obs[base+2] = float64(len(alloc)) / float64(e.maxGroup)
		obs[base+3] = float64(len(nodes)) / float64(len(e.cfg.Cluster.Nodes))
		obs[base+4], obs[base+5], obs[base+6] = cross, maxCPU, maxNet
	}
	return obs
}

// firstFit returns the first-fit placement of the current job.
func (e *Env) firstFit() []int {
	free := append([]int(nil), e.view.Free...)
	return env.PackFirstFit(free, e.job.Spec.GPUs)
}

// Summary returns the finished (or current) run's summary.
func (e *Env) Summary() env.Summary { return e.sim.Summary() }

// Job returns the job being decided (nil once the episode is over).
func (e *Env) Job() *env.Job { return e.job }

// Jobs returns the episode's jobs (index = ID), as the simulation has them
// now; the slice belongs to the environment.
func (e *Env) Jobs() []env.Job { return e.sim.Jobs() }
