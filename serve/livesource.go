package serve

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/live"
	"github.com/drover-sched/drover/serve/state"
)

// LiveSource is env/live's Source and Actuator over the server's live
// state, so that a policy trained in simulation (policies/direct's
// checkpoints) runs unchanged on live telemetry: a scheduler that embeds
// Drover steps a live.Env built on it.
//
// A snapshot's cluster is the nodes whose agent said hello, by id (their
// GPUs, type, CPUs, memory, NIC and rack as the hello gave them; rack -1
// reads 0), their latest sampled load, and their free GPUs: GPUs minus
// the workers of the jobs running there, none on a stale node. Running
// jobs are those the store knows started and have not finished, plus
// those decided through Apply (and Carry) and not yet reported started. Pending jobs
// come from the scheduler's queue (Pending), less the jobs decided. Now is
// seconds since the Unix epoch on Clock.
type LiveSource struct {
	// Store is the live state (Core.State()).
	Store *state.Store
	// Pending returns the scheduler's queue: the jobs waiting for GPUs,
	// Name their id and Submit in Unix seconds. Nil: none.
	Pending func() []env.JobSpec
	// Carry carries a decision to the cluster: the job, its workers'
	// node ids and its sync strategy (nil: decisions are only booked).
	Carry func(job string, nodes []string, sync env.Sync) error
	// IntraRackGbps and CrossRackGbps are the cluster's bandwidths.
	IntraRackGbps, CrossRackGbps float64
	// Clock is the source's clock (nil: RealClock).
	Clock Clock

	mu      sync.Mutex
	ids     []string // node index -> id, of the last snapshot
	decided map[string]decided
}

// decided is a decision Apply accepted whose job has not been reported
// started.
type decided struct {
	spec  env.JobSpec
	nodes []string
	at    float64
}

var (
	_ live.Source   = (*LiveSource)(nil)
	_ live.Actuator = (*LiveSource)(nil)
)

func (s *LiveSource) now() time.Time {
	if s.Clock == nil {
		return RealClock{}.Now()
	}
	return s.Clock.Now()
}

// Snapshot implements live.Source.
func (s *LiveSource) Snapshot(dst *live.State) error {
	if s.Store == nil {
		return fmt.Errorf("serve: live source without a store")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	nodes := s.Store.Nodes(now)
	if len(nodes) == 0 {
		return fmt.Errorf("serve: live source: no agent has said hello")
	}
	dst.Now = unixSeconds(now)
	dst.Cluster = env.Cluster{Nodes: dst.Cluster.Nodes[:0], IntraRackGbps: s.IntraRackGbps, CrossRackGbps: s.CrossRackGbps}
	dst.Free, dst.Load = dst.Free[:0], dst.Load[:0]
	s.ids = s.ids[:0]
	index := make(map[string]int, len(nodes))
	for i, n := range nodes {
		in := n.Info
		dst.Cluster.Nodes = append(dst.Cluster.Nodes, env.Node{Name: in.ID, GPUs: in.GPUs, GPUType: in.GPUType, Speed: 1, CPUs: in.CPUs,
			MemoryGiB: in.MemoryGiB, NICGbps: in.NICGbps, Rack: max(in.Rack, 0)})
		dst.Free = append(dst.Free, 0) // set once the running jobs are counted
		dst.Load = append(dst.Load, n.Last.Usage)
		s.ids = append(s.ids, in.ID)
		index[in.ID] = i
	}
	dst.Running = dst.Running[:0]
	used := make([]int, len(nodes))
	take := func(id string, spec env.JobSpec, ns []string, start float64) {
		r := live.Running{Spec: spec, Start: start}
		r.Spec.Name = id
		for _, n := range ns {
			// A worker on a node the cluster does not know, or beyond the
			// node's GPUs (reports that disagree), is left out rather than
			// the snapshot refused.
			if i, ok := index[n]; ok && used[i] < nodes[i].Info.GPUs {
				r.Nodes = append(r.Nodes, i)
				used[i]++
			}
		}
		if len(r.Nodes) > 0 {
			r.Spec.GPUs = len(r.Nodes)
			dst.Running = append(dst.Running, r)
		}
	}
	run := s.Store.RunningJobs()
	ids := make([]string, 0, len(run))
	for id := range run {
		ids = append(ids, id)
		delete(s.decided, id) // reported started: the store has it
	}
	slices.Sort(ids)
	for _, id := range ids {
		j := run[id]
		take(id, env.JobSpec{Model: j.Model}, j.Nodes, unixSeconds(j.Started))
	}
	dids := make([]string, 0, len(s.decided))
	for id := range s.decided {
		dids = append(dids, id)
	}
	slices.Sort(dids)
	for _, id := range dids {
		d := s.decided[id]
		take(id, d.spec, d.nodes, d.at)
	}
	for i, n := range nodes {
		if !n.Stale {
			dst.Free[i] = n.Info.GPUs - used[i]
		}
	}
	dst.Pending = dst.Pending[:0]
	if s.Pending != nil {
		for _, j := range s.Pending() {
			if _, ok := s.decided[j.Name]; ok {
				continue
			}
			if _, ok := run[j.Name]; ok {
				continue
			}
			dst.Pending = append(dst.Pending, j)
		}
	}
	return nil
}

// Apply implements live.Actuator: it hands the decision to Carry and,
// when accepted, counts the job running on those
// nodes until the store hears it started.
func (s *LiveSource) Apply(d live.Decision) error {
	s.mu.Lock()
	ids := make([]string, len(d.Nodes))
	for i, n := range d.Nodes {
		if n < 0 || n >= len(s.ids) {
			s.mu.Unlock()
			return fmt.Errorf("serve: live decision for %s: node %d of %d", d.Job, n, len(s.ids))
		}
		ids[i] = s.ids[n]
	}
	s.mu.Unlock()
	if s.Carry != nil {
		if err := s.Carry(d.Job, ids, d.Sync); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.decided == nil {
		s.decided = map[string]decided{}
	}
	s.decided[d.Job] = decided{spec: env.JobSpec{Name: d.Job, GPUs: len(ids)}, nodes: ids, at: unixSeconds(s.now())}
	return nil
}
