package live

import (
	"errors"
	"fmt"
	"math"

	"github.com/drover-sched/drover/env"
)

// ErrBadState reports a snapshot the environment cannot use: a field out
// of range or inconsistent with another. The wrapped message names the
// field, for example "live: bad state: load[2].CPU = NaN, want a finite
// share >= 0".
var ErrBadState = errors.New("live: bad state")

// State is one snapshot of a live cluster, as a Source writes it: what
// sched.Encoder reads through an env.View at a decision point. The
// environment owns the State it hands to Source.Snapshot and reads it
// until the next call; a Source may reuse the State's slices (append to
// dst.Free[:0] and so on) and must not keep references into it.
type State struct {
	// Now is the snapshot's time in seconds on the source's clock (any
	// origin, Unix seconds included). It must not go back within an
	// episode. The waited time of a job is Now minus its Submit, the
	// reward's elapsed time the difference of two snapshots' Now.
	Now float64
	// Cluster is the cluster: nodes (index = node id in Free, Load and
	// every Decision), racks, GPU speeds and bandwidths. A change of the
	// cluster between snapshots rebuilds the encoder, whose per-node
	// history restarts.
	Cluster env.Cluster
	// Free is the number of free GPUs on each node, 0 to the node's GPUs.
	// A node the scheduler must avoid (stale telemetry, drained) shows 0.
	Free []int
	// Load is each node's current utilisation of CPU, memory bandwidth
	// and NIC, as shares of its capacity (0 idle, 1 saturated; finite and
	// >= 0; above 1 is read as given). It is what env.Telemetry's NodeLoad
	// answers at Now; the encoder keeps the per-node history (the moving
	// mean and variance behind GroupLoad's P90) itself.
	Load []env.Usage
	// Pending lists the jobs waiting for GPUs. Name is the job's id (it
	// names the job in Decision.Job and must be unique among Pending and
	// Running), Submit its submission time on the source's clock. They
	// are decided in order of Submit, ties in the order given. A job whose
	// Decision the Actuator accepted must not be listed here again (list
	// it in Running, with the decision's nodes, even before it has
	// started): a pending job is decided again.
	Pending []env.JobSpec
	// Running lists the jobs holding GPUs.
	Running []Running
}

// Running is a job that holds GPUs.
type Running struct {
	// Spec is the job as submitted; Spec.Name is its id.
	Spec env.JobSpec
	// Nodes is the node of each of its workers (one entry per GPU held).
	Nodes []int
	// Start is when it started on the source's clock.
	Start float64
}

// Validate returns an error wrapping ErrBadState that names the first
// field of s out of range: a non-finite Now, a cluster without nodes or
// with a node of no GPUs, Free or Load of another length than the nodes,
// free GPUs outside 0 to the node's GPUs, a NaN, infinite or negative
// load, a job without a name, with a duplicate name, with GPUs < 1 or a
// non-finite time, a running job on a node outside the cluster, or a node
// whose free GPUs plus running workers exceed its GPUs.
func (s *State) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadState}, a...)...)
	}
	if !finite(s.Now) {
		return bad("now = %v, want a finite time", s.Now)
	}
	nodes := s.Cluster.Nodes
	if len(nodes) == 0 {
		return bad("cluster has no nodes")
	}
	for i, n := range nodes {
		switch {
		case n.GPUs < 1:
			return bad("cluster.nodes[%d] (%s): GPUs = %d, want > 0", i, n.Name, n.GPUs)
		case !finite(n.Speed) || n.Speed < 0:
			return bad("cluster.nodes[%d] (%s): speed = %v, want a finite value >= 0", i, n.Name, n.Speed)
		case !finite(n.NICGbps) || n.NICGbps < 0:
			return bad("cluster.nodes[%d] (%s): NIC = %v Gbit/s, want a finite value >= 0", i, n.Name, n.NICGbps)
		}
	}
	switch {
	case !finite(s.Cluster.IntraRackGbps) || s.Cluster.IntraRackGbps < 0:
		return bad("cluster.intra_rack_gbps = %v, want a finite value >= 0", s.Cluster.IntraRackGbps)
	case !finite(s.Cluster.CrossRackGbps) || s.Cluster.CrossRackGbps < 0:
		return bad("cluster.cross_rack_gbps = %v, want a finite value >= 0", s.Cluster.CrossRackGbps)
	case len(s.Free) != len(nodes):
		return bad("free has %d entries for %d nodes", len(s.Free), len(nodes))
	case len(s.Load) != len(nodes):
		return bad("load has %d entries for %d nodes", len(s.Load), len(nodes))
	}
	for i, f := range s.Free {
		if f < 0 || f > nodes[i].GPUs {
			return bad("free[%d] = %d GPUs, want 0 to node %s's %d", i, f, nodes[i].Name, nodes[i].GPUs)
		}
	}
	for i, u := range s.Load {
		for _, x := range []struct {
			name string
			v    float64
		}{{"CPU", u.CPU}, {"MemBW", u.MemBW}, {"Net", u.Net}} {
			if !finite(x.v) || x.v < 0 {
				return bad("load[%d].%s = %v, want a finite share >= 0", i, x.name, x.v)
			}
		}
	}
	names := make(map[string]bool, len(s.Pending)+len(s.Running))
	for i := range s.Pending {
		if err := checkSpec(&s.Pending[i], names); err != nil {
			return bad("pending[%d]%v", i, err)
		}
	}
	used := make([]int, len(nodes))
	for i := range s.Running {
		r := &s.Running[i]
		if err := checkSpec(&r.Spec, names); err != nil {
			return bad("running[%d]%v", i, err)
		}
		if len(r.Nodes) == 0 {
			return bad("running[%d] (job %s): no nodes", i, r.Spec.Name)
		}
		if !finite(r.Start) {
			return bad("running[%d] (job %s): start = %v, want a finite time", i, r.Spec.Name, r.Start)
		}
		for k, n := range r.Nodes {
			if n < 0 || n >= len(nodes) {
				return bad("running[%d] (job %s): nodes[%d] = %d, not a node of the cluster's %d", i, r.Spec.Name, k, n, len(nodes))
			}
			used[n]++
		}
	}
	for n, u := range used {
		if s.Free[n]+u > nodes[n].GPUs {
			return bad("node %d (%s): free[%d] = %d plus %d running workers exceed its %d GPUs", n, nodes[n].Name, n, s.Free[n], u, nodes[n].GPUs)
		}
	}
	return nil
}

// checkSpec checks one job of a snapshot and records its name in names;
// the error's text continues "pending[i]" or "running[i]".
func checkSpec(s *env.JobSpec, names map[string]bool) error {
	switch {
	case s.Name == "":
		return errors.New(": empty name")
	case names[s.Name]:
		return fmt.Errorf(" (job %s): name used twice", s.Name)
	case s.GPUs < 1:
		return fmt.Errorf(" (job %s): GPUs = %d, want > 0", s.Name, s.GPUs)
	case !finite(s.Submit):
		return fmt.Errorf(" (job %s): submit = %v, want a finite time", s.Name, s.Submit)
	case !finite(s.Duration) || s.Duration < 0:
		return fmt.Errorf(" (job %s): duration = %v, want a finite time >= 0", s.Name, s.Duration)
	case s.BatchSize < 0:
		return fmt.Errorf(" (job %s): batch size = %d, want >= 0", s.Name, s.BatchSize)
	case s.PSShards < 0:
		return fmt.Errorf(" (job %s): PS shards = %d, want >= 0", s.Name, s.PSShards)
	}
	names[s.Name] = true
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// telemetry is the env.Model of the environment's views: the snapshot's
// node loads through env.Telemetry, and nothing to simulate. NodeLoad
// answers the reading taken at the snapshot's Now whatever the time
// asked; the encoder asks only at Now.
type telemetry struct{ load []env.Usage }

var (
	_ env.Model     = (*telemetry)(nil)
	_ env.Telemetry = (*telemetry)(nil)
)

func (*telemetry) Name() string                              { return "live" }
func (*telemetry) Admit(*env.Job, *env.Meta) error           { return nil }
func (*telemetry) Place(*env.Job, *env.Cluster)              {}
func (*telemetry) Advance(*env.Job, float64) (float64, bool) { return 0, false }
func (*telemetry) Remaining(*env.Job) float64                { return math.Inf(1) }
func (t *telemetry) NodeLoad(n int, _ float64) env.Usage     { return t.load[n] }
