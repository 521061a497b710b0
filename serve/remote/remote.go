package remote

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
	pb "github.com/drover-sched/drover/serve/proto"
)

// Name is the policy's name in reports.
const Name = "remote"

// DefaultEpoch is the wall-clock time that simulation time 0 stands for
// in the requests and reports (Config.Epoch's default): a fixed date, so
// that a recorded run's log is the same from one day to the next.
var DefaultEpoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// Defaults of the Config fields, used where a field is zero.
const (
	// DefaultTimeout bounds each call to the server.
	DefaultTimeout = 10 * time.Second
	// DefaultWorkerCPU and DefaultWorkerMemBW are the shares of a node's
	// CPU and memory bandwidth a placed worker adds to the loads of the
	// following requests of the same decision point (env.Workers'
	// defaults: what the model's telemetry shows once the placement is
	// applied).
	DefaultWorkerCPU   = 1.0 / 16
	DefaultWorkerMemBW = 0.08
)

// ErrConfig is returned by New for an unusable Config.
var ErrConfig = errors.New("remote: bad config")

// Config configures a Remote.
type Config struct {
	// Client is the policy server's Scheduler client; required.
	Client pb.SchedulerClient
	// Context is the parent of every call's context (context.Background
	// when nil); cancelling it makes Schedule fail.
	Context context.Context
	// Timeout bounds each call (DefaultTimeout when 0).
	Timeout time.Duration
	// Epoch is the wall-clock time of simulation time 0 (DefaultEpoch
	// when zero): a request's unix_nanos is Epoch + View.Now, a job's
	// submit_unix_nanos Epoch + its submit time, an outcome's unix_nanos
	// Epoch + the event's simulation time.
	Epoch time.Time
	// WorkerCPU and WorkerMemBW are the loads booked on a node per worker
	// placed earlier in the same decision point, and a job placed on two
	// or more nodes books half of each node's NIC, as
	// policies.BookLoad does (defaults DefaultWorkerCPU and
	// DefaultWorkerMemBW; negative: book nothing). The simulator's
	// telemetry shows a placement only once it is applied, after the
	// decision point; a live cluster's would show it once the workers
	// run. Booking keeps the server from stacking a decision point's jobs
	// on the node that looked idle.
	WorkerCPU, WorkerMemBW float64
	// NoReport turns the Started and Finished reports off.
	NoReport bool
}

// Remote is a policies.Policy that asks a drover policy server where each
// pending job goes: at each decision point it sends one Place request per
// pending job that fits in the free GPUs, in arrival order with
// backfilling (a job that does not fit, or that the server does not
// place, is skipped and the next one asked), each request describing the
// cluster as the view shows it plus the placements made earlier in the
// same decision point. It never preempts or moves a running job. It
// reports every placed job's start (at the decision point) and finish
// (when the job has left the view; Flush reports those of the run's last
// decision points) through Report, so the server's decision log holds the
// whole run.
//
// A Remote is for one run: it keeps a pointer to the simulator's record of
// each job it placed (those records live as long as the env.Sim) and reads
// its State and Finish at later decision points. It is not safe for
// concurrent use.
type Remote struct {
	cfg    Config
	ids    []string       // node ids, by index
	index  map[string]int // node index, by id
	nodes  []*pb.Node     // the request's nodes (reused)
	load   []env.Usage
	free   []int
	placed []placedJob // placed, finish not reported yet
}

// placedJob is a job this Remote placed: its decision id and the
// simulator's record of it, whose Finish says when it ended.
type placedJob struct {
	decision string
	job      *env.Job
}

var _ policies.Policy = (*Remote)(nil)

// New returns a Remote for cfg. It returns an error wrapping ErrConfig
// when Client is nil or a duration is negative.
func New(cfg Config) (*Remote, error) {
	if cfg.Client == nil {
		return nil, fmt.Errorf("%w: no client", ErrConfig)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("%w: timeout %v", ErrConfig, cfg.Timeout)
	}
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Epoch.IsZero() {
		cfg.Epoch = DefaultEpoch
	}
	if cfg.WorkerCPU == 0 {
		cfg.WorkerCPU = DefaultWorkerCPU
	}
	if cfg.WorkerMemBW == 0 {
		cfg.WorkerMemBW = DefaultWorkerMemBW
	}
	return &Remote{cfg: cfg}, nil
}

// NodeID returns the id a Remote gives node i of c: its Name, or "n<i>"
// when the name is empty or an earlier node has it.
func NodeID(c *env.Cluster, i int) string {
	name := c.Nodes[i].Name
	if name == "" {
		return fmt.Sprintf("n%d", i)
	}
	for k := range i {
		if c.Nodes[k].Name == name {
			return fmt.Sprintf("n%d", i)
		}
	}
	return name
}

// UnixNanos returns the wall-clock time of simulation time t, as the
// requests and reports give it.
func (r *Remote) UnixNanos(t float64) int64 {
	return r.cfg.Epoch.UnixNano() + int64(math.Round(t*1e9))
}

// setup builds the node ids of v's cluster once.
func (r *Remote) setup(c *env.Cluster) {
	if len(r.ids) == len(c.Nodes) {
		return
	}
	r.ids = make([]string, len(c.Nodes))
	r.index = make(map[string]int, len(c.Nodes))
	r.nodes = make([]*pb.Node, len(c.Nodes))
	for i, n := range c.Nodes {
		r.ids[i] = NodeID(c, i)
		r.index[r.ids[i]] = i
		r.nodes[i] = &pb.Node{Id: r.ids[i], Gpus: int32(n.GPUs), GpuType: n.GPUType, Speed: n.Speed, Cpus: int32(n.CPUs),
			MemoryGib: n.MemoryGiB, NicGbps: n.NICGbps, Rack: int32(n.Rack)}
	}
}

// Schedule implements policies.Policy: it reports the finishes seen since
// the last call, asks the server about each pending job that fits, and
// reports the starts of the jobs it placed. A failed call is an error.
func (r *Remote) Schedule(v *env.View) ([]env.Decision, error) {
	r.setup(v.Cluster)
	if err := r.reportFinished(); err != nil {
		return nil, err
	}
	r.load = policies.NodeLoads(v, r.load)
	r.free = append(r.free[:0], v.Free...)
	total := 0
	for _, f := range r.free {
		total += f
	}
	pending, running := 0, 0
	for _, j := range v.Active {
		switch j.State {
		case env.Pending:
			pending++
		case env.Running:
			running++
		}
	}
	var ds []env.Decision
	var started []*pb.Outcome
	for _, j := range v.Active {
		if j.State != env.Pending {
			continue
		}
		if j.Spec.GPUs > total {
			pending--
			continue
		}
		req := r.request(v, j, pending, running)
		pending--
		resp, err := r.place(req)
		if err != nil {
			return nil, fmt.Errorf("remote: place job %s: %w", j.Spec.Name, err)
		}
		if !resp.GetPlaced() {
			continue
		}
		d, err := r.decision(j, resp)
		if err != nil {
			return nil, fmt.Errorf("remote: job %s: %w", j.Spec.Name, err)
		}
		nodes, take := policies.NodeShares(d.Nodes)
		for k, n := range nodes {
			r.free[n] -= take[k]
			total -= take[k]
		}
		if r.cfg.WorkerCPU > 0 || r.cfg.WorkerMemBW > 0 {
			policies.BookLoad(r.load, nodes, take, max(0, r.cfg.WorkerCPU), max(0, r.cfg.WorkerMemBW))
		}
		running++
		ds = append(ds, d)
		r.placed = append(r.placed, placedJob{resp.GetDecisionId(), j})
		ids := make([]string, len(d.Nodes))
		for k, n := range d.Nodes {
			ids[k] = r.ids[n]
		}
		started = append(started, &pb.Outcome{JobId: j.Spec.Name, DecisionId: resp.GetDecisionId(), UnixNanos: r.UnixNanos(v.Now),
			Event: &pb.Outcome_Started{Started: &pb.Started{NodeIds: ids}}})
	}
	if err := r.report(started); err != nil {
		return nil, err
	}
	return ds, nil
}

// request builds the Place request for job j at v's decision point, with
// the free GPUs and loads of the placements made so far.
func (r *Remote) request(v *env.View, j *env.Job, pending, running int) *pb.PlaceRequest {
	for i, n := range r.nodes {
		n.FreeGpus = int32(r.free[i])
		// A model's load sums and takes away shares, which may leave a
		// rounding error below 0; a request must not carry one.
		n.CpuUtil, n.MemBwUtil, n.NetUtil = max(0, r.load[i].CPU), max(0, r.load[i].MemBW), max(0, r.load[i].Net)
	}
	s := j.Spec
	job := &pb.Job{Id: s.Name, Model: s.Model, Workers: int32(s.GPUs), BatchSize: int32(s.BatchSize),
		ExpectedDurationS: s.Duration, SubmitUnixNanos: r.UnixNanos(s.Submit)}
	if s.Arch == env.PS {
		job.Arch, job.PsShards = pb.Arch_ARCH_PS, int32(max(1, s.PSShards))
	}
	return &pb.PlaceRequest{Job: job, UnixNanos: r.UnixNanos(v.Now), Cluster: &pb.Cluster{Nodes: r.nodes,
		IntraRackGbps: v.Cluster.IntraRackGbps, CrossRackGbps: v.Cluster.CrossRackGbps,
		PendingJobs: int32(pending), RunningJobs: int32(running)}}
}

func (r *Remote) place(req *pb.PlaceRequest) (*pb.PlaceResponse, error) {
	ctx, cancel := context.WithTimeout(r.cfg.Context, r.cfg.Timeout)
	defer cancel()
	return r.cfg.Client.Place(ctx, req)
}

// decision turns the server's answer into the job's decision: the worker
// assignments' node ids back to indices (parameter servers are where the
// simulator puts them, on the workers' nodes), the sync strategy parsed.
// An unknown node, a worker index out of range or missing, or more
// workers than the job asked for is an error.
func (r *Remote) decision(j *env.Job, resp *pb.PlaceResponse) (env.Decision, error) {
	nodes := make([]int, j.Spec.GPUs)
	set := make([]bool, j.Spec.GPUs)
	for _, a := range resp.GetAssignments() {
		if a.GetRole() != pb.Role_ROLE_WORKER {
			continue
		}
		k := int(a.GetIndex())
		if k < 0 || k >= len(nodes) || set[k] {
			return env.Decision{}, fmt.Errorf("worker index %d: out of range or assigned twice (%d workers)", k, len(nodes))
		}
		n, ok := r.index[a.GetNodeId()]
		if !ok {
			return env.Decision{}, fmt.Errorf("worker %d: unknown node %q", k, a.GetNodeId())
		}
		nodes[k], set[k] = n, true
	}
	for k, ok := range set {
		if !ok {
			return env.Decision{}, fmt.Errorf("worker %d not assigned", k)
		}
	}
	sy, err := syncOf(resp.GetSync())
	if err != nil {
		return env.Decision{}, err
	}
	return env.Decision{Job: j.ID, Nodes: nodes, Sync: sy}, nil
}

// syncOf converts the answer's sync strategy.
func syncOf(s *pb.Sync) (env.Sync, error) {
	switch s.GetKind() {
	case pb.SyncKind_SYNC_BSP:
		return env.Sync{Kind: env.BSP}, nil
	case pb.SyncKind_SYNC_ASP:
		return env.Sync{Kind: env.ASP}, nil
	case pb.SyncKind_SYNC_SSP:
		return env.Sync{Kind: env.SSP, Staleness: int(s.GetStaleness())}, nil
	case pb.SyncKind_SYNC_LOCAL_SGD:
		return env.Sync{Kind: env.LocalSGD, Period: int(s.GetPeriod())}, nil
	}
	return env.Sync{}, fmt.Errorf("unknown sync kind %v", s.GetKind())
}

// reportFinished reports the placed jobs that have finished.
func (r *Remote) reportFinished() error {
	var out []*pb.Outcome
	keep := r.placed[:0]
	for _, p := range r.placed {
		if p.job.State != env.Done {
			keep = append(keep, p)
			continue
		}
		out = append(out, &pb.Outcome{JobId: p.job.Spec.Name, DecisionId: p.decision, UnixNanos: r.UnixNanos(p.job.Finish),
			Event: &pb.Outcome_Finished{Finished: &pb.Finished{Success: true, JctS: p.job.JCT()}}})
	}
	clear(r.placed[len(keep):])
	r.placed = keep
	return r.report(out)
}

// report sends outcomes in one Report call (none: no call).
func (r *Remote) report(out []*pb.Outcome) error {
	if len(out) == 0 || r.cfg.NoReport {
		return nil
	}
	ctx, cancel := context.WithTimeout(r.cfg.Context, r.cfg.Timeout)
	defer cancel()
	if _, err := r.cfg.Client.Report(ctx, &pb.ReportRequest{Outcomes: out}); err != nil {
		return fmt.Errorf("remote: report %d outcomes: %w", len(out), err)
	}
	return nil
}

// Flush reports the finishes not reported yet: call it once the run is
// over (the simulator calls Schedule no more after its last finish).
func (r *Remote) Flush() error { return r.reportFinished() }
