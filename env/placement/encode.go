package placement

import (
	"math"
	"slices"

	"github.com/drover-sched/drover/env"
)

// State is a cluster state given from outside a simulation (a live
// cluster, a serving request): what Env reads from its simulator when it
// builds an observation.
type State struct {
	// Free is the number of free GPUs on each node.
	Free []int
	// Load is each node's resource utilisation, as env.Telemetry reports
	// it; nil when there is no telemetry (Env then observes zeros).
	Load []env.Usage
	// Pending counts the jobs waiting for GPUs, the one being decided
	// included; Running counts the jobs holding GPUs.
	Pending, Running int
}

// Encoder turns a State and a job into the observation, action mask and
// placement of Env, for a fixed cluster. It holds no mutable state: one
// Encoder may be used from many goroutines.
type Encoder struct {
	cluster  *env.Cluster
	sync     bool
	groups   [][]int
	maxGroup int
	obsDim   int
}

// NewEncoder returns the encoder of the environment on cluster c (the
// sync-strategy environment when sync is set). c must not change while
// the encoder is in use. It panics on a cluster without nodes.
func NewEncoder(c *env.Cluster, sync bool) *Encoder {
	if len(c.Nodes) == 0 {
		panic("placement: NewEncoder on a cluster without nodes")
	}
	// The grouping of New: nodes by rack, racks ascending.
	e := &Encoder{cluster: c, sync: sync}
	byRack := map[int][]int{}
	var racks []int
	for i, n := range c.Nodes {
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
			gpus += c.Nodes[n].GPUs
		}
		e.maxGroup = max(e.maxGroup, gpus)
	}
	e.obsDim = 2 + len(models) + 3 + 4*len(e.groups) + 2
	if sync {
		e.obsDim += 5
	}
	return e
}

// ObsDim returns the observation length.
func (e *Encoder) ObsDim() int { return e.obsDim }

// Actions returns the number of actions: Groups()+1 for placement,
// len(SyncChoices) for the sync environment.
func (e *Encoder) Actions() int {
	if e.sync {
		return len(SyncChoices)
	}
	return len(e.groups) + 1
}

// Groups returns the number of node groups (racks).
func (e *Encoder) Groups() int { return len(e.groups) }

func (e *Encoder) free(s *State, nodes []int) int {
	f := 0
	for _, n := range nodes {
		f += s.Free[n]
	}
	return f
}

// Observe appends to dst[:0] the observation Env would give for deciding
// job in state s, bit for bit. It panics when s does not match the
// cluster.
func (e *Encoder) Observe(dst []float64, s *State, job *env.JobSpec) []float64 {
	e.check(s)
	obs := append(dst[:0], make([]float64, e.obsDim)...)
	obs[0] = float64(job.GPUs) / float64(e.maxGroup)
	obs[1] = math.Log1p(job.Duration/3600) / 5
	if k := slices.Index(models, job.Model); k >= 0 {
		obs[2+k] = 1
	}
	sens := env.Sensitivities[job.Model]
	base := 2 + len(models)
	obs[base], obs[base+1], obs[base+2] = sens.CPU, sens.MemBW, sens.Net
	base += 3
	for g, nodes := range e.groups {
		gpus, cpu, mem, net := 0, 0.0, 0.0, 0.0
		for _, n := range nodes {
			gpus += e.cluster.Nodes[n].GPUs
			if s.Load != nil {
				u := s.Load[n]
				cpu, mem, net = cpu+u.CPU, mem+u.MemBW, net+u.Net
			}
		}
		k := float64(len(nodes))
		obs[base+4*g] = float64(e.free(s, nodes)) / float64(gpus)
		obs[base+4*g+1], obs[base+4*g+2], obs[base+4*g+3] = cpu/k, mem/k, net/k
	}
	base += 4 * len(e.groups)
	obs[base], obs[base+1] = float64(s.Pending)/100, float64(s.Running)/100
	if e.sync {
		alloc := e.FirstFit(s, job.GPUs)
		nodes := map[int]bool{}
		racks := map[int]bool{}
		maxCPU, maxNet := 0.0, 0.0
		for _, n := range alloc {
			nodes[n] = true
			racks[e.cluster.Nodes[n].Rack] = true
			if s.Load != nil {
				u := s.Load[n]
				maxCPU, maxNet = max(maxCPU, u.CPU), max(maxNet, u.Net)
			}
		}
		cross := 0.0
		if len(racks) > 1 {
			cross = 1
		}
		obs[base+2] = float64(len(alloc)) / float64(e.maxGroup)
		obs[base+3] = float64(len(nodes)) / float64(len(e.cluster.Nodes))
		obs[base+4], obs[base+5], obs[base+6] = cross, maxCPU, maxNet
	}
	return obs
}

// Mask appends to dst[:0] Env's action mask (true = valid) for a job of
// gpus GPUs in state s.
func (e *Encoder) Mask(dst []bool, s *State, gpus int) []bool {
	e.check(s)
	dst = append(dst[:0], make([]bool, e.Actions())...)
	if e.sync {
		for i := range dst {
			dst[i] = i == 0 || gpus > 1
		}
		return dst
	}
	all := 0
	for g, nodes := range e.groups {
		f := e.free(s, nodes)
		dst[g] = f >= gpus
		all += f
	}
	dst[len(e.groups)] = all >= gpus
	return dst
}

// Decode returns the placement (the node of each worker) and the sync
// strategy that Env's Step gives action for a job of gpus GPUs in state s,
// or a nil placement when the action is out of range or the job does not
// fit where the action says.
func (e *Encoder) Decode(s *State, gpus, action int) ([]int, env.Sync) {
	e.check(s)
	if action < 0 || action >= e.Actions() {
		return nil, env.Sync{}
	}
	if e.sync {
		if action > 0 && gpus < 2 {
			return nil, env.Sync{}
		}
		return e.FirstFit(s, gpus), SyncChoices[action]
	}
	free := make([]int, len(s.Free))
	if action < len(e.groups) {
		for _, n := range e.groups[action] {
			free[n] = s.Free[n]
		}
	} else {
		copy(free, s.Free)
	}
	alloc := env.PackMostFree(free, gpus)
	slices.Sort(alloc)
	return alloc, env.Sync{}
}

// FirstFit returns the first-fit placement of gpus GPUs in state s (nil if
// they do not fit): the placement the sync environment gives every job.
func (e *Encoder) FirstFit(s *State, gpus int) []int {
	free := append([]int(nil), s.Free...)
	return env.PackFirstFit(free, gpus)
}

func (e *Encoder) check(s *State) {
	if len(s.Free) != len(e.cluster.Nodes) || (s.Load != nil && len(s.Load) != len(e.cluster.Nodes)) {
		panic("placement: state does not match the encoder's cluster")
	}
}
