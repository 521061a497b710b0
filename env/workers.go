package env

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// Usage is a node's background utilisation of a resource, as a fraction of
// the node's capacity (0 = idle, 1 = saturated).
type Usage struct {
	// CPU is the share of CPU cores busy with other work.
	CPU float64
	// MemBW is the share of memory bandwidth used by other work.
	MemBW float64
	// Net is the share of NIC bandwidth used by other work.
	Net float64
}

// Background gives each node's background load over time. Load is
// piecewise constant over steps of Step() seconds and deterministic.
type Background interface {
	// Load returns node's background usage at time t.
	Load(node int, t float64) Usage
	// Step returns the seconds over which Load is constant.
	Step() float64
}

// Jitter draws each worker's compute slowdown (a multiplier, about 1 for a
// typical worker) one iteration at a time.
type Jitter interface {
	// Next fills dst with one iteration's slowdown per worker.
	Next(dst []float64)
}

// Sensitivity says how a job's iteration time reacts to overload: CPU and
// MemBW multiply compute time by 1 + sensitivity x overload of that
// resource on the worker's node, and Net is the share of the all-reduce
// time that is bandwidth-bound (the rest is latency), which stretches with
// the contention on the worker's NIC.
type Sensitivity struct {
	CPU, MemBW, Net float64
}

// Sensitivities are Drover's assumed sensitivities of the six measured
// models, from what dominates their input pipelines and communication
// (no trace measures them; STRN profiles them by probing, see policies):
// cifar10 and yolov3 decode and augment small images on the CPU;
// imagenet decodes JPEGs on the CPU and all-reduces a 25M-parameter model;
// ncf is embedding-bound (memory bandwidth); bert is GPU-bound with a
// 110M-parameter gradient (network); deepspeech2 is in between.
var Sensitivities = map[string]Sensitivity{
	"cifar10":     {CPU: 0.8, MemBW: 0.3, Net: 0.3},
	"yolov3":      {CPU: 0.9, MemBW: 0.3, Net: 0.4},
	"imagenet":    {CPU: 1.0, MemBW: 0.4, Net: 0.5},
	"ncf":         {CPU: 0.4, MemBW: 1.0, Net: 0.6},
	"bert":        {CPU: 0.2, MemBW: 0.3, Net: 0.9},
	"deepspeech2": {CPU: 0.6, MemBW: 0.5, Net: 0.5},
}

// Workers turns on the Drover model's per-worker behaviour. Each worker's
// compute time is slowed by its GPU's speed, by the overload of its node's
// CPU and memory bandwidth (background load plus the workers placed there,
// weighted by the job's Sensitivity), and by a jitter process; each
// worker's share of the all-reduce is stretched by the concurrent flows on
// its NIC and the NIC's background load. At every Period the model samples
// Samples iterations of per-worker times, turns them into an iteration time
// with the job's sync strategy (Sync.IterTime) and counts the workers
// slower than the median by more than Threshold: the stragglers. Under
// ASP, where each worker iterates at its own pace, a straggler's
// iterations are counted at its own (slower) rate, so an iteration (a
// global batch of gradient updates) holds fewer of them; the other
// strategies keep every worker's iteration count equal (SSP within its
// bound) and count them per synchronized iteration. A NIC flow meets the
// job's own flow in full and the other jobs' flows at their duty cycle
// (the share of time they communicate: exchange / (compute + exchange) of
// an iteration, over H iterations for local SGD(H)). A ring hop to a node in another rack also
// shares the two racks' uplinks with every other crossing hop (see
// Cluster.CrossRackGbps), and runs at the narrower of its NIC share and its
// uplink share. A parameter-server job's shards sit on its nodes
// (round robin); a server slows with its node's CPU overload and NIC
// contention, and every exchange waits for the slowest server's share,
// unless the job asked for PS rebalancing (Decision.PSRebalance), which
// gives each server a share proportional to its speed (PSTimeFactor).
//
// Every sampled iteration is also compared with its straggler-free
// counterfactual, every worker at the pace of the job's median worker
// (its compute plus exchange time): the difference is the delay the
// stragglers cause, split between computation and communication by where
// the slowest worker (and the slowest exchange) exceeds the median
// worker (Job.StragglerFree, Job.CommDelay, Job.ComputeDelay).
type Workers struct {
	// Background is the nodes' background load; nil means idle nodes.
	Background Background
	// NewJitter makes a job's jitter process; nil means no jitter.
	NewJitter func(workers int, src rand.Source) Jitter
	// Seed seeds every job's jitter (with the job's ID).
	Seed uint64
	// Threshold is the straggler threshold over the median (default 0.2).
	Threshold float64
	// Samples is the consecutive iterations sampled per update of a BSP
	// or ASP job (default 1); SSP and local SGD sample at least
	// WindowSamples, since their iteration time is about how
	// consecutive iterations overlap. Over a job's many updates the
	// samples average out, and a second consecutive sample adds little:
	// with the calibrated jitter, consecutive iterations' log slowdowns are
	// 90% correlated (a persistent share of 0.73 and AR(1) noise at 0.64:
	// 0.73 + 0.27 x 0.64), so averaging two of them removes only 5% of a
	// single sample's variance, at twice the cost. BSP's iteration time
	// (the mean slowest worker) and the straggler counts are unbiased
	// from any number of samples.
	Samples int
	// MaxSlowdown caps a worker's jitter multiplier to [1/MaxSlowdown,
	// MaxSlowdown] (default 10). The jitter process is calibrated on the
	// coefficient of variation, which cannot tell a 10x straggler from a
	// 1000x one (the CoV of ten workers is bounded by sqrt(10) whatever
	// the outlier), so its tails are unbounded; a real framework's health
	// checks would restart a worker that far behind.
	MaxSlowdown float64
	// Period is the seconds between speed updates (default
	// DefaultWorkerPeriod).
	Period float64
	// Overload is the utilisation above which a resource slows its tasks
	// (default 0.8): overload = max(0, u - Overload) / (1 - Overload).
	Overload float64
	// CPUPerWorker is the share of a node's CPUs one worker keeps busy
	// feeding its GPU (default 1/16 of the node).
	CPUPerWorker float64
	// MemBWPerWorker is the share of a node's memory bandwidth one
	// worker uses (default 0.08).
	MemBWPerWorker float64
	// Convergence is how the jobs' synchronization strategies change the
	// iterations they need and the accuracy they end with; nil means
	// DefaultConvergence (the fit's point estimates).
	Convergence *Convergence
	// Sensitivities overrides the package's Sensitivities by model name.
	Sensitivities map[string]Sensitivity
	// BurstNoise is the spread of the extra delay a worker's gradient
	// exchange meets in a congested network, as a fraction of its queueing
	// time (default 0.5): each sampled iteration adds
	// q x BurstNoise x burst x |z|, z standard normal, to the worker's
	// time, where q is the part of the worker's exchange spent queueing
	// behind the other flows and the background traffic on its NIC (the
	// exchange time beyond an idle NIC's: 0 on an idle NIC, so an
	// uncongested exchange takes its measured time) and burst is the
	// share of the job's flows that hit the network together: 1 when all
	// workers synchronize (BSP, local SGD: the incast of a collective),
	// the duty cycle of communication when they do not (ASP, SSP). Set it
	// negative for none.
	BurstNoise float64
	// Reference, when set, says under which conditions the job-level
	// times (a trace's durations, a profile's measured step times) were
	// taken, and the model reproduces them there on average: each job's
	// compute and exchange times are divided, on each placement, by its
	// expected per-worker slowdown on that many nodes under Reference
	// (see Reference).
	// Nil takes the job-level times as straggler-free.
	Reference *Reference
	// STRET turns on the runtime mitigation of MitigationSTRET.
	STRET bool
	// STRETOff turns some of STRET's stages off, for ablations (0: every
	// stage runs).
	STRETOff STRETStage
	// Replace turns on the restart/replace-straggler baseline of
	// MitigationReplace. With STRET too, both run: replacements first.
	Replace bool
	// LBBSP turns on the load-balanced BSP baseline of MitigationLBBSP.
	// Do not combine it with STRET, whose batch tuning it would undo.
	LBBSP bool
}

// Reference describes the conditions a job's measured time was taken
// under, in the per-worker model's terms: the job alone on as many nodes
// as its placement spans (its workers spread evenly over them), every one
// of those nodes full of workers (a busy cluster), each node's background
// load a draw from Loads, no other job's flows on its NICs or uplinks, and
// the run's jitter and network noise. The measurement includes the
// stragglers of those conditions: a trace's duration is what the job took
// on a real, busy cluster, stragglers and all, and a profile's step time
// is a mean over iterations that waited for their slowest worker. So, on
// each placement, the model divides a job's compute and exchange times by
// R, the mean BSP iteration time it gives under the reference conditions
// on that many nodes over the measured iteration time there (Monte Carlo
// over Replicates draws of loads and jitter, with random numbers of their
// own, so R depends on the job's model, batch size, workers, nodes, node
// size and servers but not on the run's seed). The job-level model (the
// measured time on the actual placement) is then the per-worker model's
// expectation under reference conditions, on every placement: spreading
// costs what the measured profile says, and a job runs slower than
// measured on busier nodes, NICs and uplinks and faster on quieter ones;
// what stragglers cost is visible against the straggler-free time
// (Job.StragglerFree). R is an arithmetic mean over draws: variation that
// persists over a job's life (node loads, the jitter's persistent factor
// and episodes) averages that way across jobs, while a job's speed is
// resampled at every refresh, so the part that changes from refresh to
// refresh makes a job's time the harmonic mean of its periods' (slightly
// faster than measured).
//
// A Reference keeps the factors it has computed, under a lock, so runs
// that share one (a drover eval's runs, over seeds and policies) compute
// each job shape's factor once: share it only between runs whose Workers
// have the same parameters (jitter, noise, footprints), which the factors
// depend on. The factors do not depend on the order of the runs.
type Reference struct {
	// Loads are draws from the reference nodes' background load (for the
	// fitted process: its stationary law); each reference node of each
	// replicate takes one at random. Empty means idle nodes.
	Loads []Usage
	// Replicates is the number of Monte Carlo draws per job shape
	// (default DefaultReplicates).
	Replicates int

	mu      sync.Mutex
	factors map[refKey]float64
}

// DefaultReplicates is Reference.Replicates' default: 1024 draws put the
// factor's Monte Carlo error near 0.5% for the largest jobs (a 16-node,
// 128-worker job's BSP time varies by about 15% from draw to draw).
const DefaultReplicates = 1024

// refKey identifies the jobs that share a reference factor.
type refKey struct {
	model                       string
	batch, w, nodes, sz, shards int // shards: 0 for a ring job
}

// refSeed seeds the reference's Monte Carlo (with the job shape's hash).
const refSeed = 0x7265666572656e63

// reference returns the factor R of Reference for a job of spec sp with w
// workers on nodes nodes: the mean BSP iteration time of the job spread
// evenly over that many nodes under the reference conditions over its
// measured iteration time there (1 when that is not a positive finite
// number).
func (m *Drover) reference(sp JobSpec, s *droverJob, w, nodes int) float64 {
	wk := m.Workers
	gpn := m.gpusPerNode()
	shards := 0
	if sp.Arch == PS {
		shards = max(1, sp.PSShards)
	}
	w = max(w, 1)
	n := min(max(nodes, 1), w)
	key := refKey{sp.Model, s.batch, w, n, gpn, shards}
	ref := wk.Reference
	ref.mu.Lock()
	defer ref.mu.Unlock()
	if r, ok := ref.factors[key]; ok {
		return r
	}
	// Even: the first w mod n nodes hold one worker more.
	placement := make([]int, n)
	for k := range placement {
		placement[k] = w / n
		if k < w%n {
			placement[k]++
		}
	}
	compute, sync := split(s.prof, placement, s.batch)
	alloc := make([]int, 0, w)
	for k, g := range placement {
		for range g {
			alloc = append(alloc, k)
		}
	}
	// Full nodes: as many workers as a node has GPUs, at least the
	// placement's.
	full := make([]int, n)
	for k, g := range placement {
		full[k] = max(g, gpn)
	}
	sens := wk.sensitivity(sp.Model)
	h := fnv64(sp.Model) ^ uint64(s.batch)<<40 ^ uint64(w)<<20 ^ uint64(n)<<32 ^ uint64(gpn) ^ uint64(shards)<<52
	rng := rand.New(rand.NewPCG(refSeed, h))
	reps := ref.Replicates
	if reps <= 0 {
		reps = DefaultReplicates
	}
	slow := make([]float64, n)
	mm := make([]float64, n)
	amp := make([]float64, n)
	us := make([]Usage, n)
	var srv []float64
	row := make([]float64, w)
	lo, hi := 1/wk.MaxSlowdown, wk.MaxSlowdown
	// A PS job exchanges with its servers (shard k on node k mod n, even
	// shares): the slower of a worker's link and the servers' side.
	xsync := sync
	if shards > 0 {
		xsync = sync * psOverRing(w, shards)
	}
	total := 0.0
	var jit Jitter
	var src rand.PCG
	for range reps {
		if wk.NewJitter != nil {
			// A fresh job per draw; a process that can be reset is
			// reused (the same draws as a new one).
			src.Seed(rng.Uint64(), rng.Uint64())
			if r, ok := jit.(interface{ Reset(rand.Source) }); ok {
				r.Reset(&src)
			} else {
				jit = wk.NewJitter(w, &src)
			}
		}
		for k := range n {
			us[k] = Usage{}
			if len(ref.Loads) > 0 {
				us[k] = ref.Loads[rng.IntN(len(ref.Loads))]
			}
		}
		f := 1.0
		if shards > 0 && n > 1 {
			srv = srv[:0]
			for k := range shards {
				// Alone on the NIC: its own flow only.
				srv = append(srv, serverSlowdown(wk, sens, us[k%n], full[k%n], 1, 1))
			}
			f = PSTimeFactor(srv, false)
		}
		mmax := 0.0
		for k := range n {
			u := us[k]
			slow[k] = nodeSlowdown(wk, sens, u, full[k], 1)
			mm[k], amp[k] = xsync, 0
			if n > 1 {
				// Alone on the NIC: its own flow meets the background.
				var q float64
				mm[k], q = exchange(xsync, sens.Net, u.Net, 1, 1, 1)
				if x := xsync * f; x > mm[k] {
					mm[k], q = x, max(q, x-xsync)
				}
				amp[k] = q * max(wk.BurstNoise, 0)
			}
			mmax = max(mmax, mm[k])
		}
		if jit != nil {
			jit.Next(row)
		} else {
			for i := range row {
				row[i] = 1
			}
		}
		slowest := 0.0
		for i, x := range row {
			k := alloc[i]
			t := min(max(x, lo), hi) * compute * slow[k]
			if amp[k] > 0 {
				t += amp[k] * math.Abs(rng.NormFloat64())
			}
			slowest = max(slowest, t)
		}
		total += slowest + mmax
	}
	r := total / float64(reps) / (compute + sync)
	if !(r > 0) || math.IsInf(r, 0) {
		r = 1
	}
	if ref.factors == nil {
		ref.factors = make(map[refKey]float64)
	}
	ref.factors[key] = r
	return r
}

// fnv64 is the 64-bit FNV-1a hash of s.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(s) {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// nodeSlowdown is how much slower than on an idle reference GPU a worker
// computes on a node with background load u, workers workers of any job
// and GPU speed speed (<= 0 reads as 1): 1 + the job's CPU and memory
// bandwidth sensitivities times the overload of each.
func nodeSlowdown(wk *Workers, sens Sensitivity, u Usage, workers int, speed float64) float64 {
	if speed <= 0 {
		speed = 1
	}
	cpu := u.CPU + wk.CPUPerWorker*float64(workers)
	mem := u.MemBW + wk.MemBWPerWorker*float64(workers)
	return (1 + sens.CPU*overload(cpu, wk.Overload) + sens.MemBW*overload(mem, wk.Overload)) / speed
}

// serverSlowdown is how much slower than a reference server a parameter
// server serves on a node with background load u, workers workers of any
// job and flows NIC flows (the job's own counted at its duty cycle duty):
// its CPU overload slows all of it, and its bandwidth-bound part (the
// job's Net sensitivity) stretches with its NIC's contention as a
// worker's exchange does.
func serverSlowdown(wk *Workers, sens Sensitivity, u Usage, workers int, flows, duty float64) float64 {
	cpu := u.CPU + wk.CPUPerWorker*float64(workers)
	contention := max(1, (flows+1-duty)/max(0.05, 1-u.Net))
	return (1 + sens.CPU*overload(cpu, wk.Overload)) * (1 - sens.Net + sens.Net*contention)
}

// exchange returns a worker's exchange seconds and their queueing part
// (the time beyond an idle NIC's) for a measured all-reduce of sync
// seconds, the job's NIC sensitivity net, the NIC's background share bg,
// the concurrent flows on the NIC (the job's own counted at its duty
// cycle, as occupancy counts everyone's), the job's duty cycle and the
// slowdown link of the worker's ring hop across racks (1 within a rack).
// The job's own flow is on the NIC whenever it communicates, so the rest
// of it is added back. The flow runs at the narrower of its NIC share and
// its uplink share, so the bandwidth-bound part stretches by the larger
// of the two slowdowns: a flow slowed by its own NIC does not also lose
// its uplink share to the same congestion.
func exchange(sync, net, bg, flows, duty, link float64) (m, q float64) {
	avail := max(0.05, 1-bg)
	c := max(max(1, (flows+1-duty)/avail), link)
	return sync * (1 - net + net*c), sync * net * (c - 1)
}

// Mitigation names.
const (
	// MitigationNone runs jobs as placed.
	MitigationNone = "none"
	// MitigationSTRET is straggler-aware time- and resource-efficient
	// training (Tairin, Zhang and Shen, ICCCN 2025), its three stages at
	// every refresh of a multi-worker job, each only while stragglers
	// remain after the one before:
	//
	//   - (a) Relay: a communication straggler (a worker that would not
	//     straggle with the median exchange instead of its own) leaves the
	//     ring and sends its gradient through the non-straggler with the
	//     highest bandwidth to it (its pair's hop slowdown, NICs and
	//     uplinks as loaded now), which aggregates it into its own
	//     exchange and carries the extra flow on its NIC; only when that
	//     shortens the exchange. A change of relays pays the restart
	//     delay, so it is made only when the time it saves over the
	//     job's remaining iterations exceeds that. See Drover.relay.
	//   - (b) Withholding: in a BSP iteration that still has stragglers,
	//     their gradients are withheld (the iteration ends without them
	//     and counts for (w-k)/w of a global batch) while the accuracy
	//     increment is marginal: the job's validation curve, at its
	//     progress, rose over the last MarginalWindow of training at no
	//     more than MarginalRate of its average rate so far. Profiles
	//     without curves (see Curve) never withhold.
	//   - (c) One-time batch tuning: at the first refresh of a placement
	//     whose sampled iterations still have a straggler that withholding
	//     does not take, local batch sizes are set inversely to each
	//     worker's measured compute time, which equalises the persistent
	//     part of compute times (transient jitter remains).
	//
	// Workers.STRETOff turns stages off for ablations.
	// Job.Relayed, Job.Withheld and Job.Tunings report the stages' use.
	MitigationSTRET = "stret"
	// MitigationReplace is the simple baseline against STRET: a worker
	// that straggles at two refreshes in a row (in at least half of each
	// one's sampled iterations) is replaced at the next: the job
	// checkpoints and restarts (paying its restart delay, counted in its
	// TTA) with the worker's process started afresh on the same GPU, whose
	// jitter is drawn anew from the regime's law (a process of its own).
	// Moving it to another node would take the scheduler, which the
	// throughput model is not; so a replacement cures what is the
	// worker's own (the jitter's persistent factor and episodes) and not
	// what is its node's (background load, NIC and uplink contention),
	// which is what a framework's restart of a slow worker does.
	// Job.Replacements counts them.
	MitigationReplace = "replace"
	// MitigationLBBSP is load-balanced BSP (LB-BSP: Chen, Wang, Li and
	// Li, "Semi-Dynamic Load Balancing: Efficient Distributed Learning in
	// Non-Dedicated Environments", SoCC 2020), the batch-size baseline
	// against STRET's stage (c). LB-BSP keeps BSP and gives each worker a
	// share of the global batch proportional to its predicted throughput,
	// b_i = B v_i / sum_j v_j (equal b_i / v_i: every worker's computation
	// takes as long; BalancedBatches), set again from the latest
	// measurements at intervals (semi-dynamic: speeds in a non-dedicated
	// cluster drift slowly and jitter fast, and only the drift is worth
	// following). Unlike STRET's one-time tuning it re-balances
	// throughout, and does nothing else. In the per-worker model a
	// refresh is one interval: at each refresh of a multi-worker BSP job
	// the shares follow each worker's compute seconds per unit of batch
	// share measured at the previous refresh (network noise left out), or,
	// at a placement's first refresh, its node's slowdown (GPU speed, CPU
	// and memory-bandwidth overload) as monitoring reports it; the
	// period's own jitter is not known in advance and stays. Only
	// computation is balanced (the all-reduce is every worker's, as in the
	// paper's iteration time compute(b_i) + comm). The global batch is
	// unchanged, so convergence is BSP's (Convergence: factor 1, BSP's
	// final accuracy). Local batches beyond a GPU's memory are not modelled
	// (the paper caps b_i there). Jobs under other strategies run as
	// placed: the rule is for BSP.
	MitigationLBBSP = "lb-bsp"
)

// sensitivity returns the sensitivity of a model.
func (w *Workers) sensitivity(model string) Sensitivity {
	if s, ok := w.Sensitivities[model]; ok {
		return s
	}
	return Sensitivities[model]
}

// MinWindowSamples is the fewest consecutive iterations a refresh samples
// for SSP and local SGD, whose iteration times depend on how consecutive
// iterations interact (staleness absorbing jitter, averaging windows).
const MinWindowSamples = 2

// WindowSamples is the number of consecutive iterations a refresh samples
// for a job under sync with Workers.Samples samples (at least 1): samples
// for BSP and ASP; for local SGD(H) at least one whole averaging window,
// H iterations (and MinWindowSamples; a window longer than ProbeSamples is
// cut to ProbeSamples, as the probe cuts it); for SSP at least the probe's
// ProbeSamples, the horizon over which Prober answers. A probe measures a
// window strategy over ProbeSamples iterations, so with fewer the
// simulated job would not run at the pace its probe promised: local
// SGD(16) cut to 2-iteration windows averages out little of its workers'
// jitter, and an SSP schedule of 2 iterations never meets its staleness
// bound. Local SGD's mean window maximum is the same over one window as
// over the probe's several (when H divides ProbeSamples); SSP's cold start
// is amortized over as many iterations as the probe's.
func WindowSamples(sync Sync, samples int) int {
	k := max(samples, 1)
	switch sync.Kind {
	case LocalSGD:
		return max(k, MinWindowSamples, min(sync.Period, ProbeSamples))
	case SSP:
		return max(k, MinWindowSamples, ProbeSamples)
	}
	return k
}

// DefaultWorkerPeriod is the default seconds between per-worker speed
// updates: 30 minutes, about the time constant of the fitted CPU background
// load (24 min; env/background), so a refresh sees a fresh load state
// without spending time on steps that barely differ. Each refresh costs
// Samples x workers draws per running job (WindowSamples for SSP and
// local SGD).
const DefaultWorkerPeriod = 1800

func (w *Workers) defaults() {
	if w.Threshold == 0 {
		w.Threshold = 0.2
	}
	if w.Samples == 0 {
		w.Samples = 1
	}
	if w.MaxSlowdown == 0 {
		w.MaxSlowdown = 10
	}
	if w.Period == 0 {
		w.Period = DefaultWorkerPeriod
	}
	if w.Overload == 0 {
		w.Overload = 0.8
	}
	if w.CPUPerWorker == 0 {
		w.CPUPerWorker = 1.0 / 16
	}
	if w.MemBWPerWorker == 0 {
		w.MemBWPerWorker = 0.08
	}
	if w.BurstNoise == 0 {
		w.BurstNoise = 0.5
	}
}

// occupancy is what the placed jobs put on one node.
type occupancy struct {
	workers int     // workers of any job
	flows   float64 // concurrent NIC flows of multi-node jobs
}

// background returns Workers.Background's load of node at now (idle
// without one).
// A node's load is kept for the time it was last asked at: the jobs on
// one node ask for it at the same refresh, and Background.Load is
// deterministic, so it is asked once.
func (m *Drover) background(node int, now float64) Usage {
	b := m.Workers.Background
	if b == nil {
		return Usage{}
	}
	if m.bgFor != m.Workers || node >= len(m.bg) {
		return b.Load(node, now)
	}
	e := &m.bg[node]
	if e.t != now {
		e.t, e.u = now, b.Load(node, now)
	}
	return e.u
}

// bgLoad is a node's background load at time t (NaN: none yet).
type bgLoad struct {
	t float64
	u Usage
}

// sizeLoads makes room for c's nodes' background loads.
func (m *Drover) sizeLoads(c *Cluster) {
	if m.bgFor == m.Workers && len(m.bg) >= len(c.Nodes) {
		return
	}
	m.bg, m.bgFor = make([]bgLoad, len(c.Nodes)), m.Workers
	for i := range m.bg {
		m.bg[i].t = math.NaN()
	}
}

// workerState is a job's per-worker model state.
type workerState struct {
	jit      Jitter
	jitSrc   rand.PCG // the source of jit
	jitSize  int      // workers of jit
	spareJit int      // workers of jit when it is a finished job's (0: none)
	compute  float64  // uncontended per-GPU compute seconds per iteration
	sync     float64  // measured all-reduce seconds on the placement
	duty     float64  // share of time the job's NIC flows are active
	// relayDuty is the weight of a STRET relay's flow on its peer's NIC:
	// 1 for a synchronous job (BSP), whose relayed and own exchanges run
	// at the same time, else duty.
	relayDuty float64
	sens      Sensitivity // the job's model's, looked up at placement
	c         [][]float64
	m         []float64
	q         []float64 // per worker: the queueing part of m (burst noise scale)
	slow      []float64
	scratch   []float64
	sorted    []float64     // scratch for medians
	net       rand.Rand     // network burst noise
	netSrc    rand.PCG      // its source
	shares    []float64     // STRET: tuned local batch share x workers (1 = even)
	nodes     []int         // distinct nodes, for occupancy
	hops      []rackHop     // per worker: its ring hop's racks
	psSlow    []float64     // per PS shard: its server's slowdown (scratch)
	nz        [][]float64   // per sample and worker: the network noise in c
	ef        []float64     // PS: per worker, the straggler-free exchange
	ft        []float64     // PS: scratch for the straggler-free times
	amp       []float64     // per worker: the network noise's scale
	stret     *stretState   // with Workers.STRET
	lb        []float64     // LB-BSP: per worker, the sum of its measured speed factors
	lbN       float64       // LB-BSP: the refreshes summed in lb
	replace   *replaceState // with Workers.Replace
}

func overload(u, theta float64) float64 {
	return max(0, u-theta) / (1 - theta)
}

// prefetch implements prefetcher: it reads, job by job in stages, the
// lines of memory that the jobs' refreshes start with (the job, its model
// state, its per-worker state and samples, its first node's occupancy),
// so that the loads of one stage overlap across the jobs, and asks the
// background load of the jobs' nodes at now.
func (m *Drover) prefetch(jobs []*Job, now float64) {
	if m.Workers == nil || len(jobs) > prefetchJobs {
		return
	}
	var ss [prefetchJobs]*droverJob
	var ws [prefetchJobs]*workerState
	sink := 0
	for i, j := range jobs {
		ss[i] = j.m.(*droverJob)
		sink += int(j.Sync.Kind) + len(j.Alloc) + int(j.Spec.Arch)
	}
	for i, s := range ss[:len(jobs)] {
		ws[i] = s.w
	}
	var rows [prefetchJobs][]float64
	fsink := 0.0
	for i, w := range ws[:len(jobs)] {
		if w == nil {
			continue
		}
		if p, ok := w.jit.(prefetchable); ok {
			fsink += p.Prefetch()
		}
		sink += w.jitSize + len(w.c) + len(w.m) + len(w.slow) + len(w.sorted) + len(w.shares) +
			len(w.hops) + len(w.nz) + len(w.amp) + len(w.ft)
		if w.stret != nil || w.replace != nil {
			sink++
		}
		if len(w.c) > 0 {
			rows[i] = w.c[0]
		}
		if a := jobs[i].Alloc; len(a) > 0 && a[0] < len(m.occ) {
			sink += m.occ[a[0]].workers
		}
	}
	if m.Workers.Background != nil && now >= 0 {
		// The nodes' loads, asked one after another: a node's load is
		// the same whenever it is asked at now, and asking in a row lets
		// the loads' memory reads overlap.
		for _, w := range ws[:len(jobs)] {
			if w == nil {
				continue
			}
			for _, n := range w.nodes {
				if n < len(m.bg) {
					m.background(n, now)
				}
				if n < len(m.occ) && m.cluster != nil && n < len(m.cluster.Nodes) {
					fsink += m.cluster.Nodes[n].Speed + m.occ[n].flows
				}
			}
		}
	}
	for _, r := range rows[:len(jobs)] {
		if len(r) > 0 && r[0] != 0 {
			sink++
		}
	}
	m.sink += sink
	if fsink > 0 {
		m.sink++
	}
}

// prefetchAdvance implements prefetcher: it reads the lines of memory that
// advancing the jobs reads, the jobs' and their model states'.
func (m *Drover) prefetchAdvance(jobs []*Job) {
	if len(jobs) > prefetchJobs {
		return
	}
	var ss [prefetchJobs]*droverJob
	x := 0.0
	for i, j := range jobs {
		ss[i], _ = j.m.(*droverJob)
		x += j.last + j.Held + j.Iterations + j.CommDelay
	}
	for _, s := range ss[:len(jobs)] {
		if s != nil {
			x += s.delay + s.iterTime + s.withheld
		}
	}
	if x > 0 {
		m.sink++
	}
}

// prefetchable is a Jitter that can read ahead what its Next reads
// (jitter.Process).
type prefetchable interface {
	Prefetch() float64
}

// refresh recomputes j's iteration time at time now.
func (m *Drover) refresh(j *Job, s *droverJob, c *Cluster, now float64) {
	wk := m.Workers
	ws := s.w
	w := len(j.Alloc)
	K := WindowSamples(j.Sync, wk.Samples)
	if len(ws.c) != K || len(ws.m) != w {
		// One allocation for the samples, their network-noise parts, the
		// exchange and compute factors, and the scratch for straggler
		// counts and medians.
		buf := make([]float64, (2*K+6)*w)
		rows := make([][]float64, 2*K)
		ws.c, ws.nz = rows[:K:K], rows[K:]
		for k := range ws.c {
			ws.c[k] = buf[k*w : (k+1)*w : (k+1)*w]
			ws.nz[k] = buf[(K+k)*w : (K+k+1)*w : (K+k+1)*w]
		}
		buf = buf[2*K*w:]
		ws.m, ws.slow = buf[:w:w], buf[w:2*w:2*w]
		ws.scratch, ws.sorted = buf[2*w:2*w:3*w], buf[3*w:3*w:4*w]
		ws.q = buf[4*w : 5*w : 5*w]
		ws.amp = buf[5*w : 6*w : 6*w]
	}
	sens := ws.sens
	multi := len(ws.nodes) > 1
	st := ws.stret
	if ws.replace != nil {
		m.replace(j, s)
	}
	if st != nil {
		// The previous refresh's relays leave the peers' NICs: the
		// exchanges below are the ring's, and the relay decides anew.
		m.unrelay(ws)
	}
	for i, n := range j.Alloc {
		if i > 0 && n == j.Alloc[i-1] {
			// The same node as the previous worker (a node's workers are
			// a run in Alloc, and its ring link is the node's): the same
			// slowdown and exchange time.
			ws.slow[i], ws.m[i], ws.q[i] = ws.slow[i-1], ws.m[i-1], ws.q[i-1]
			if st != nil {
				st.bg[i] = st.bg[i-1]
			}
			continue
		}
		u := m.background(n, now)
		o := &m.occ[n]
		ws.slow[i] = nodeSlowdown(wk, sens, u, o.workers, c.Nodes[n].Speed)
		ws.m[i], ws.q[i] = ws.sync, 0
		if multi {
			ws.m[i], ws.q[i] = exchange(ws.sync, sens.Net, u.Net, o.flows, ws.duty, m.up.factor(ws.hops[i], ws.duty))
		}
		if st != nil {
			st.bg[i] = u.Net
		}
	}
	f := 1.0
	var ef []float64 // PS: the straggler-free counterfactual's exchanges
	if j.Spec.Arch == PS && multi {
		// Parameter servers: shard k of the job's PSShards sits on the
		// job's k-th node (round robin) and serves slower when that node's
		// CPU is overloaded or its NIC contended; every exchange waits for
		// the slowest server's share. A push-pull takes the slower side's
		// time (PSTime): the worker's own link, already in m, or the
		// servers'.
		f = m.psFactor(j, s, c, now)
		// Without stragglers every server would serve at the median
		// server's pace: the counterfactual's exchanges.
		if len(ws.ef) != w {
			ws.ef, ws.ft = make([]float64, w), make([]float64, 0, w)
		}
		medSrv := median(ws.psSlow, ws.sorted)
		for i := range ws.m {
			ws.ef[i] = max(ws.m[i], ws.sync*medSrv)
			if srv := ws.sync * f; srv > ws.m[i] {
				ws.m[i], ws.q[i] = srv, max(ws.q[i], srv-ws.sync)
			}
		}
		ef = ws.ef
	}
	s.relayed, s.withheld = 0, 0
	if st != nil && multi && wk.STRETOff&STRETRelay == 0 {
		// (a) Relay the communication stragglers through the peers with
		// the most bandwidth to them. A change of relays reconfigures the
		// job's communication: the authors' method_1.py checkpoints and
		// relaunches the workers with the new parameter-server map, so it
		// pays the restart delay (and is made only when it pays off).
		n, changed := m.relay(j, s, f)
		s.relayed = float64(n)
		if changed {
			j.RelayChanges++
			s.delay += max(s.restart, 0)
		}
	}
	// The network noise's scale per worker: the queueing part of its
	// exchange times BurstNoise times the share of the job's flows that
	// hit the network together: 1 when all workers synchronize (BSP, local
	// SGD), the duty cycle of communication when they do not (ASP, SSP).
	burst := 1.0
	if j.Sync.Kind == ASP || j.Sync.Kind == SSP {
		burst = ws.duty
	}
	bn := max(wk.BurstNoise, 0) * burst
	noisy := multi && bn > 0
	for i := range ws.amp {
		ws.amp[i] = 0
		if noisy {
			ws.amp[i] = ws.q[i] * bn
		}
	}
	times := ws.scratch[:0]
	lo, hi := 1/wk.MaxSlowdown, wk.MaxSlowdown
	lb := wk.LBBSP && w > 1 && j.Sync.Kind == BSP
	if lb {
		ws.balance(w)
	}
	for k := range K {
		row, nz := ws.c[k], ws.nz[k]
		if ws.jit != nil {
			ws.jit.Next(row)
		} else {
			for i := range row {
				row[i] = 1
			}
		}
		if ws.replace != nil {
			for i, r := range ws.replace.jit {
				if r != nil {
					// A replaced worker draws from its own process.
					r.Next(row[i : i+1])
				}
			}
		}
		for i, x := range row {
			// Clamped by comparisons: cheaper than float min and max,
			// whose NaN and signed-zero rules a slowdown never needs.
			if x < lo {
				x = lo
			} else if x > hi {
				x = hi
			}
			row[i] = x * ws.compute * ws.slow[i]
			if ws.shares != nil {
				row[i] *= ws.shares[i]
			}
			nz[i] = 0
			if noisy {
				nz[i] = ws.amp[i] * math.Abs(ws.net.NormFloat64())
				row[i] += nz[i]
			}
		}
	}
	if lb {
		ws.measure(K, w)
	}
	// (b) Withholding, when stragglers remain after the relay: a BSP
	// iteration does not wait for its stragglers' gradients while the
	// validation curve says their increment is marginal.
	hold := st != nil && w > 1 && j.Sync.Kind == BSP && wk.STRETOff&STRETWithhold == 0 && st.curve.marginal(s.done/s.work)
	if st != nil && w > 1 && !st.tuned && !hold && wk.STRETOff&STRETTune == 0 && ws.stragglersRemain(K, w, wk.Threshold) {
		// (c) Stragglers remain that withholding does not take: the
		// one-time batch tuning of this placement.
		ws.tune(K, w)
		st.tuned = true
		j.Tunings++
	}
	mmax := 0.0
	for _, x := range ws.m {
		if x > mmax {
			mmax = x
		}
	}
	progress := 1.0 // share of a global batch an iteration delivers
	bsp := j.Sync.Kind == BSP
	worst := 0.0 // BSP: the sum over samples of the slowest compute
	exch := 0.0  // BSP with withholding: the sum of the slowest exchanges
	withheld := 0.0
	with, count := 0.0, 0.0
	// The straggler-free counterfactual: every worker at the median
	// worker's pace; the slowest worker's excess over that worker in
	// computation and in communication splits the difference.
	free, compEx, commEx := 0.0, 0.0, 0.0
	for k := range K {
		row, nz := ws.c[k], ws.nz[k]
		times = times[:0]
		slowest, at := 0.0, 0
		for i, x := range row {
			times = append(times, x+ws.m[i])
			if x > slowest {
				slowest, at = x, i
			}
		}
		worst += slowest
		if w < 2 {
			free += times[0]
			continue
		}
		med, mi := typical(times, ws.sorted)
		fmed, fm := med, ws.m
		if ef != nil {
			// A PS job's counterfactual has its own exchanges.
			ft := ws.ft[:0]
			for i, x := range row {
				ft = append(ft, x+ef[i])
			}
			fmed, mi = typical(ft, ws.sorted)
			fm = ef
		}
		free += fmed
		compEx += max(0, (slowest-nz[at])-(row[mi]-nz[mi]))
		commEx += max(0, nz[at]+mmax-nz[mi]-fm[mi])
		lim := med * (1 + wk.Threshold)
		n := 0
		for i, t := range times {
			if t > lim {
				n++
				if ws.replace != nil {
					ws.replace.hits[i]++
				}
			}
		}
		if n > 0 && j.Sync.Kind == ASP {
			// Under ASP every worker iterates at its own pace, so a
			// straggler contributes fewer of the job's gradient updates:
			// a global batch (w updates) holds w x share of them, where
			// share is the stragglers' part of the update rate.
			share := asyncStragglerShare(times, lim)
			with += 1 - math.Pow(1-share, float64(w))
			count += float64(w) * share
		} else if n > 0 {
			with++
			count += float64(n)
		}
		if hold && n > 0 {
			// The iteration ends with the slowest kept worker's compute
			// and exchange, and delivers (w-n)/w of a global batch.
			kc, km := 0.0, 0.0
			for i, t := range times {
				if t <= lim {
					kc, km = max(kc, row[i]), max(km, ws.m[i])
				}
			}
			worst += kc - slowest
			exch += km - mmax
			withheld += float64(n)
			progress -= float64(n) / float64(w) / float64(K)
		}
	}
	ws.scratch = times
	s.withStraggler = with / float64(K)
	s.stragglers = count / float64(K)
	s.withheld = withheld / float64(K)
	if ws.replace != nil {
		ws.replace.count(K)
	}
	if bsp {
		// Sync.IterTime's BSP case from the maxima found above, less
		// what withholding saved.
		s.iterTime = bspTime(worst, K, mmax+exch/float64(K))
	} else {
		s.iterTime = j.Sync.IterTime(ws.c, ws.m)
	}
	s.freeIter = min(free/float64(K), s.iterTime)
	excess := s.iterTime - s.freeIter
	s.commDelay, s.computeDelay = 0, excess
	if compEx+commEx > 0 {
		s.commDelay = excess * commEx / (compEx + commEx)
		s.computeDelay = excess - s.commDelay
	}
	s.rate = s.ref * progress / (s.iterTime * s.conv.Run)
	if !(s.rate > 0) || math.IsInf(s.rate, 0) {
		s.rate = 0
	}
}

// typical returns the median of times (the mean of the middle two for an
// even count) and the index of the worker at the upper middle, using
// scratch (reordered) and leaving times as it is.
func typical(times, scratch []float64) (med float64, at int) {
	med, hi := middle(append(scratch[:0], times...))
	for i, t := range times {
		if t == hi {
			return med, i
		}
	}
	return med, 0
}

// asyncStragglerShare is the share of an asynchronous job's gradient
// updates that come from its stragglers (workers slower than lim, the
// median times 1 + the threshold), when each worker i updates at rate
// 1/times[i].
func asyncStragglerShare(times []float64, lim float64) float64 {
	slow, all := 0.0, 0.0
	for _, t := range times {
		all += 1 / t
		if t > lim {
			slow += 1 / t
		}
	}
	return slow / all
}

// occupy adds (sign 1) or removes (sign -1) j's workers and flows.
func (m *Drover) occupy(j *Job, s *droverJob, sign float64) {
	if sign < 0 {
		m.unrelay(s.w) // STRET's relays leave with the job
	}
	for _, n := range j.Alloc {
		m.occ[n].workers += int(sign)
	}
	if len(s.w.nodes) > 1 {
		for _, n := range s.w.nodes {
			m.occ[n].flows += sign * s.w.duty
		}
		m.up.add(s.w.nodes, m.cluster, s.w.duty, sign)
	}
}

// ringHops sets, for each worker, the racks of its node's outgoing ring
// hop (from, to), or from = -1 when the hop stays in a rack: the ring
// visits the job's nodes in allocation order.
func ringHops(j *Job, nodes []int, c *Cluster, dst []rackHop) []rackHop {
	dst = dst[:0]
	h, prev := rackHop{from: -1}, -1
	for _, n := range j.Alloc {
		if n != prev && len(nodes) > 1 {
			// The ring's next hop from n (a node's workers are mostly a
			// run in Alloc, so this search runs about once per node).
			k := slices.Index(nodes, n)
			a, b := c.Nodes[n].Rack, c.Nodes[nodes[(k+1)%len(nodes)]].Rack
			h = rackHop{from: -1}
			if a != b {
				h = rackHop{from: int32(a), to: int32(b)}
			}
			prev = n
		}
		dst = append(dst, h)
	}
	return dst
}

// rackHop is a ring hop's source and destination racks (from = -1: within
// a rack).
type rackHop struct{ from, to int32 }

// uplinks is the cross-rack traffic of the placed jobs: per rack, the
// flows leaving and entering it (each job's counted at its duty cycle) and
// the flows its uplink carries at the intra-rack speed (its nodes x
// CrossRackGbps / IntraRackGbps; 0 when racks do not slow anything).
type uplinks struct {
	out, in, cap []float64
}

// size makes room for c's racks and computes their capacities.
func (u *uplinks) size(c *Cluster) {
	if u.cap != nil {
		return
	}
	racks := 0
	for _, n := range c.Nodes {
		racks = max(racks, n.Rack+1)
	}
	u.out, u.in, u.cap = make([]float64, racks), make([]float64, racks), make([]float64, racks)
	if !(c.CrossRackGbps > 0 && c.IntraRackGbps > c.CrossRackGbps) {
		return
	}
	for _, n := range c.Nodes {
		u.cap[n.Rack] += c.CrossRackGbps / c.IntraRackGbps
	}
}

// factor returns how much slower than within a rack a hop h runs for a job
// of duty cycle duty whose own flows are counted in the loads: the share
// of the busier end's uplink that the hop's flow gets, against a full
// intra-rack link. A lone flow on an oversubscribed uplink still runs at
// the intra-rack speed when the uplink has room for it.
func (u *uplinks) factor(h rackHop, duty float64) float64 {
	if h.from < 0 || u.cap == nil || u.cap[h.from] == 0 || u.cap[h.to] == 0 {
		return 1
	}
	return max(1, (u.out[h.from]+1-duty)/u.cap[h.from], (u.in[h.to]+1-duty)/u.cap[h.to])
}

// add puts (sign 1) or takes (sign -1) the ring hops of a job on distinct
// nodes nodes (in ring order) on the uplinks, at its duty cycle.
func (u *uplinks) add(nodes []int, c *Cluster, duty, sign float64) {
	if u.cap == nil || len(nodes) < 2 {
		return
	}
	for k, n := range nodes {
		a, b := c.Nodes[n].Rack, c.Nodes[nodes[(k+1)%len(nodes)]].Rack
		if a != b {
			u.out[a] += sign * duty
			u.in[b] += sign * duty
		}
	}
}

// distinct returns the distinct entries of a in order of appearance.
func distinct(a []int, dst []int) []int {
	dst = dst[:0]
	for _, x := range a {
		seen := false
		for _, y := range dst {
			if y == x {
				seen = true
				break
			}
		}
		if !seen {
			dst = append(dst, x)
		}
	}
	return dst
}

var _ Telemetry = (*Drover)(nil)
var _ Prober = (*Drover)(nil)

// NodeLoad implements Telemetry: the background load plus what the placed
// workers use (CPUPerWorker and MemBWPerWorker each; the NIC share of the
// multi-node jobs' concurrent flows). Without Workers every node reads idle.
func (m *Drover) NodeLoad(node int, now float64) Usage {
	if m.Workers == nil {
		return Usage{}
	}
	u := m.background(node, now)
	if node < len(m.occ) {
		o := &m.occ[node]
		u.CPU += m.Workers.CPUPerWorker * float64(o.workers)
		u.MemBW += m.Workers.MemBWPerWorker * float64(o.workers)
		u.Net += 0.5 * o.flows // a flow takes half the NIC in this model's units
	}
	u.CPU, u.MemBW, u.Net = min(u.CPU, 1), min(u.MemBW, 1), min(u.Net, 1)
	return u
}

// ProbeSamples is the number of consecutive iterations a probe
// (Drover.Probe) measures.
const ProbeSamples = 64

// Probe implements Prober. It builds a throw-away copy of j's per-worker
// state on fresh nodes, so it changes nothing in the run; with jitter it
// draws from a process seeded by the job's ID and the probe's shape, so
// the same probe gives the same answer.
func (m *Drover) Probe(j *Job, placement []int, load Usage, jitter bool) float64 {
	s := j.m.(*droverJob)
	wk := m.Workers
	if wk == nil {
		wk = &Workers{}
	}
	wk.defaults()
	w := 0
	for _, g := range placement {
		w += g
	}
	if w == 0 {
		return math.NaN()
	}
	compute, sync := split(s.prof, placement, s.batch)
	if wk.Reference != nil {
		r := m.reference(j.Spec, s, w, len(placement))
		compute /= r
		sync /= r
	}
	if j.Spec.Arch == PS {
		sync *= psOverRing(w, max(1, j.Spec.PSShards))
	}
	sens := wk.sensitivity(j.Spec.Model)
	c := make([][]float64, ProbeSamples)
	mm := make([]float64, w)
	var jit Jitter
	if jitter && wk.NewJitter != nil {
		jit = wk.NewJitter(w, rand.NewPCG(uint64(j.ID), uint64(w)<<32|uint64(len(placement))))
	}
	i := 0
	slow := make([]float64, w)
	for _, g := range placement {
		f := nodeSlowdown(wk, sens, load, g, 1)
		for range g {
			slow[i] = f
			mm[i] = sync
			if len(placement) > 1 {
				mm[i], _ = exchange(sync, sens.Net, load.Net, 1, 1, 1)
			}
			i++
		}
	}
	lo, hi := 1/wk.MaxSlowdown, wk.MaxSlowdown
	for k := range c {
		c[k] = make([]float64, w)
		if jit != nil {
			jit.Next(c[k])
		} else {
			for i := range c[k] {
				c[k][i] = 1
			}
		}
		for i := range c[k] {
			c[k][i] = min(max(c[k][i], lo), hi) * compute * slow[i]
		}
	}
	return j.Sync.IterTime(c, mm)
}

// psFactor is how much a PS job's exchange stretches because of its
// servers: PSTimeFactor of the servers' slowdowns. A server's slowdown is
// 1 + CPU sensitivity x CPU overload of its node (background plus the
// workers there), times the stretch of its bandwidth-bound part by the
// node's NIC contention (1 - Net + Net x contention, as a worker's flow
// meets it). With PSRebalance the shares follow the servers' speeds. The
// refresh takes the slower of the worker's side and the servers' side
// for each exchange.
func (m *Drover) psFactor(j *Job, s *droverJob, c *Cluster, now float64) float64 {
	wk := m.Workers
	ws := s.w
	k := max(1, j.Spec.PSShards)
	sens := ws.sens
	slow := ws.psSlow[:0]
	for shard := range k {
		n := ws.nodes[shard%len(ws.nodes)]
		u := m.background(n, now)
		o := &m.occ[n]
		slow = append(slow, serverSlowdown(wk, sens, u, o.workers, o.flows, ws.duty))
	}
	ws.psSlow = slow
	return PSTimeFactor(slow, j.PSRebalance)
}

// PSTimeFactor returns how much longer a parameter-server exchange takes
// on servers with the given slowdowns (1 = a reference server) than on k
// reference servers with even shares. Even shares wait for the slowest
// server: max(slow). Rebalanced shares, each proportional to its server's
// speed 1/slow, finish together: k / sum(1/slow). It is 1 for reference
// servers either way.
func PSTimeFactor(slow []float64, rebalance bool) float64 {
	if len(slow) == 0 {
		return 1
	}
	if !rebalance {
		worst := 0.0
		for _, x := range slow {
			worst = max(worst, x)
		}
		return worst
	}
	speed := 0.0
	for _, x := range slow {
		speed += 1 / x
	}
	return float64(len(slow)) / speed
}
