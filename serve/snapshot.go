package serve

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/policies"
	pb "github.com/drover-sched/drover/serve/proto"
)

// snapshot is a validated Place request in the simulator's terms: what a
// heuristic's env.View and the learned policy's placement.State are built
// from. Snapshots are reused (snapshotPool): every slice in one is the
// request's scratch memory, valid until putSnapshot.
type snapshot struct {
	cluster env.Cluster
	ids     []string // node index -> id
	state   placement.State
	job     env.JobSpec
	jobID   string
	// at and submitted are the request's time and the job's submission
	// time in Unix nanoseconds (0: not given).
	at, submitted int64
	// stale counts the request's nodes the live state found stale.
	stale int

	index map[string]int // node id -> index, filled by validation
	used  []int          // checkAlloc's counts, all zero between calls
	fast  fastScratch

	// done is the request's ctx.Done(): the heuristics' long loops look
	// at it (cancelled) and stop early when it is closed, and stopped
	// says one did, so that its answer is no answer.
	done    <-chan struct{}
	stopped bool

	// runLiveSTRN's scratch: the job, GPUs per chosen node, and that as
	// the sync cache's shape.
	liveJob   env.Job
	liveTake  []int
	liveShape []byte
}

// maxPooledNodes bounds the clusters whose scratch goes back to the pool,
// so that one huge request does not make every later one clear a huge map.
const maxPooledNodes = 1024

var snapshotPool = sync.Pool{New: func() any { return &snapshot{index: make(map[string]int)} }}

// getSnapshot returns an empty snapshot from the pool.
func getSnapshot() *snapshot { return snapshotPool.Get().(*snapshot) }

// putSnapshot returns s to the pool, dropping its references to the
// request but for its node ids.
func putSnapshot(s *snapshot) {
	if len(s.cluster.Nodes) > maxPooledNodes {
		return
	}
	// index and ids stay: a request about the same nodes reuses them
	// (validatePlace). They hold the last request's node ids (at most
	// maxPooledNodes strings) until the next.
	clear(s.cluster.Nodes)
	s.job, s.jobID = env.JobSpec{}, ""
	s.done, s.stopped = nil, false
	s.liveJob = env.Job{}
	snapshotPool.Put(s)
}

// cancelled reports whether the request's context is done (its done
// channel closed), and remembers it in s.stopped. It costs a channel
// poll: the loops call it once per pass over the nodes.
func (s *snapshot) cancelled() bool {
	if s.stopped {
		return true
	}
	select {
	case <-s.done:
		s.stopped = true
		return true
	default:
		return false
	}
}

// resize returns a with length n, reusing its memory when it can.
func resize[T any](a []T, n int) []T {
	if cap(a) < n {
		return make([]T, n)
	}
	return a[:n]
}

// fill converts a request that validatePlace accepted into s, whose index
// validatePlace filled. Excluded nodes show no free GPUs.
func (s *snapshot) fill(req *pb.PlaceRequest) {
	c := req.GetCluster()
	nodes := c.GetNodes()
	s.cluster = env.Cluster{Nodes: resize(s.cluster.Nodes, len(nodes)), IntraRackGbps: c.GetIntraRackGbps(), CrossRackGbps: c.GetCrossRackGbps()}
	s.ids = resize(s.ids, len(nodes))
	s.state = placement.State{Free: resize(s.state.Free, len(nodes)), Load: resize(s.state.Load, len(nodes))}
	for i, n := range nodes {
		s.cluster.Nodes[i] = env.Node{Name: n.GetId(), GPUs: int(n.GetGpus()), GPUType: n.GetGpuType(), Speed: n.GetSpeed(),
			CPUs: int(n.GetCpus()), MemoryGiB: n.GetMemoryGib(), NICGbps: n.GetNicGbps(), Rack: int(n.GetRack())}
		s.ids[i] = n.GetId()
		s.state.Free[i] = int(n.GetFreeGpus())
		s.state.Load[i] = env.Usage{CPU: n.GetCpuUtil(), MemBW: n.GetMemBwUtil(), Net: n.GetNetUtil()}
	}
	for _, id := range req.GetJob().GetExcludeNodes() {
		s.state.Free[s.index[id]] = 0
	}
	s.state.Pending = max(1, int(c.GetPendingJobs()))
	s.state.Running = int(c.GetRunningJobs())
	j := req.GetJob()
	s.jobID = j.GetId()
	s.at, s.submitted = req.GetUnixNanos(), j.GetSubmitUnixNanos()
	s.stale = 0
	s.job = env.JobSpec{Name: j.GetId(), GPUs: int(j.GetWorkers()), Duration: j.GetExpectedDurationS(), Model: j.GetModel(),
		BatchSize: int(j.GetBatchSize()), PSShards: int(j.GetPsShards())}
	if j.GetArch() == pb.Arch_ARCH_PS {
		s.job.Arch = env.PS
		s.job.PSShards = max(1, s.job.PSShards)
	}
}

// freeGPUs returns the free GPUs of the nodes the job may use.
func (s *snapshot) freeGPUs() int {
	t := 0
	for _, f := range s.state.Free {
		t += f
	}
	return t
}

// telemetry is the env.Model a heuristic sees: the request's node loads
// through env.Telemetry, and nothing to simulate.
type telemetry struct{ load []env.Usage }

var (
	_ env.Model     = telemetry{}
	_ env.Telemetry = telemetry{}
)

func (telemetry) Name() string                              { return "request" }
func (telemetry) Admit(*env.Job, *env.Meta) error           { return nil }
func (telemetry) Place(*env.Job, *env.Cluster)              {}
func (telemetry) Advance(*env.Job, float64) (float64, bool) { return 0, false }
func (telemetry) Remaining(*env.Job) float64                { return math.Inf(1) }
func (t telemetry) NodeLoad(n int, _ float64) env.Usage     { return t.load[n] }

// runHeuristic asks a fresh policy from f where the snapshot's job goes:
// the job is the only pending one, the cluster's free GPUs are the
// request's. It returns the node index of each worker (nil when the
// policy placed nothing) and the sync strategy.
func runHeuristic(f policies.Factory, s *snapshot) ([]int, env.Sync, error) {
	p, err := f(policies.Config{Seed: 1})
	if err != nil {
		return nil, env.Sync{}, err
	}
	alloc, sy, err := schedule(p, s, s.done)
	if err != nil || alloc == nil {
		return nil, env.Sync{}, err
	}
	if err := s.checkAlloc(alloc); err != nil {
		return nil, env.Sync{}, err
	}
	return alloc, sy, nil
}

// schedule asks p where the snapshot's job goes, on a view of its own
// (the job, a copy of the free GPUs; the cluster and the loads are shared
// and only read; done as its Done), and returns the job's allocation
// (nil: not placed) and sync strategy, unchecked. It writes nothing in
// s, so it may run beside another reader of s.
func schedule(p policies.Policy, s *snapshot, done <-chan struct{}) ([]int, env.Sync, error) {
	job := &env.Job{ID: 0, Spec: s.job, State: env.Pending, FirstStart: math.NaN(), Finish: math.NaN()}
	v := &env.View{Cluster: &s.cluster, Free: append([]int(nil), s.state.Free...), Active: []*env.Job{job}, Model: telemetry{s.state.Load},
		Done: done}
	return scheduleView(p, v)
}

// scheduleView asks p for its decisions on v and returns those of the job
// of ID 0, the request's (nil nodes: not placed), unchecked.
func scheduleView(p policies.Policy, v *env.View) ([]int, env.Sync, error) {
	ds, err := p.Schedule(v)
	if err != nil {
		return nil, env.Sync{}, err
	}
	for _, d := range ds {
		if d.Job == 0 && len(d.Nodes) > 0 {
			return d.Nodes, d.Sync, nil
		}
	}
	return nil, env.Sync{}, nil
}

// checkAlloc verifies that an allocation fits the snapshot's free GPUs.
func (s *snapshot) checkAlloc(alloc []int) error {
	if len(alloc) != s.job.GPUs {
		return fmt.Errorf("allocation of %d workers for a job of %d", len(alloc), s.job.GPUs)
	}
	s.used = resize(s.used, len(s.state.Free))
	defer func() {
		for _, n := range alloc {
			if n >= 0 && n < len(s.used) {
				s.used[n] = 0
			}
		}
	}()
	for _, n := range alloc {
		if n < 0 || n >= len(s.state.Free) {
			return fmt.Errorf("allocation names node %d of %d", n, len(s.state.Free))
		}
		s.used[n]++
		if s.used[n] > s.state.Free[n] {
			return fmt.Errorf("allocation puts %d workers on node %s with %d free GPUs", s.used[n], s.ids[n], s.state.Free[n])
		}
	}
	return nil
}

// psNodes places a PS job's shards: round robin over the distinct nodes
// of its workers, in allocation order (the parameter servers share the
// workers' machines, as in the simulator's PS model).
func psNodes(alloc []int, shards int) []int {
	var distinct []int
	for _, n := range alloc {
		if !slices.Contains(distinct, n) {
			distinct = append(distinct, n)
		}
	}
	out := make([]int, shards)
	for i := range out {
		out[i] = distinct[i%len(distinct)]
	}
	return out
}
