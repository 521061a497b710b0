package serve

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	pb "github.com/drover-sched/drover/serve/proto"
)

// ErrInvalid is wrapped by every FieldError: a request the server refuses.
var ErrInvalid = errors.New("serve: invalid request")

// FieldError names the first invalid field of a request and what is wrong
// with it, e.g. "cluster.nodes[3].free_gpus: negative (-1)". The gRPC
// service answers it with codes.InvalidArgument and this message.
type FieldError struct {
	// Field is the field's path in the request, proto names.
	Field string
	// Problem says what is wrong.
	Problem string
}

// Error implements error.
func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// Unwrap returns ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// Limits bound the size of the requests the server accepts.
type Limits struct {
	// MaxNodes is the most nodes a cluster may have.
	MaxNodes int
	// MaxGPUsPerNode is the most GPUs a node may have.
	MaxGPUsPerNode int
	// MaxWorkers is the most workers a job may ask for.
	MaxWorkers int
	// MaxPSShards is the most parameter servers a job may have.
	MaxPSShards int
	// MaxIDLen is the longest id (node, job, model name) in bytes.
	MaxIDLen int
	// MaxOutcomes is the most outcomes in one Report.
	MaxOutcomes int
	// MaxSamples is the most iteration-time samples in one outcome.
	MaxSamples int
	// MaxUtil is the highest utilisation reading accepted (a share; loads
	// above 1 mean oversubscription).
	MaxUtil float64
	// MaxWork bounds a Place request's work: its nodes times its job's
	// workers. The heuristics' greedy passes scan every node for each
	// node they pick, and a job picks at most one node per worker, so a
	// request's time grows with that product (4,096 nodes x 4,096 workers
	// took 1.5-1.7 s: issue 32). A request above it is refused, naming
	// both fields and the bound; 0 takes DefaultMaxWork.
	MaxWork int
}

// DefaultMaxWork is Limits.MaxWork unless set: 4,096 nodes for a job of
// 1,024 workers, or 2,048 nodes for one of 2,048 workers. The extender's
// clusters (at most MaxNodes, 4,096 nodes), drover place's (16 nodes)
// and the tests' are under it for any job of up to 1,024 workers.
const DefaultMaxWork = 1 << 22

// work is a request's work as MaxWork counts it.
func work(nodes, workers int) int { return nodes * workers }

// DefaultLimits are the limits unless WithLimits sets others.
var DefaultLimits = Limits{
	MaxNodes:       4096,
	MaxGPUsPerNode: 64,
	MaxWorkers:     4096,
	MaxPSShards:    256,
	MaxIDLen:       253, // a Kubernetes object name
	MaxOutcomes:    10000,
	MaxSamples:     100000,
	MaxUtil:        10,
	MaxWork:        DefaultMaxWork,
}

// checkFloat reports a NaN, infinite or negative value.
func checkFloat(field string, v float64) error {
	switch {
	case math.IsNaN(v):
		return fieldErr(field, "not a number (NaN)")
	case math.IsInf(v, 0):
		return fieldErr(field, "infinite (%v)", v)
	case v < 0:
		return fieldErr(field, "negative (%v)", v)
	}
	return nil
}

func checkID(field, id string, l Limits, required bool) error {
	switch {
	case id == "" && required:
		return fieldErr(field, "empty")
	case len(id) > l.MaxIDLen:
		return fieldErr(field, "too long (%d > %d bytes)", len(id), l.MaxIDLen)
	}
	return nil
}

// ValidatePlace checks every field of a Place request against l and
// returns a *FieldError naming the first invalid one, or nil.
func ValidatePlace(req *pb.PlaceRequest, l Limits) error {
	return validatePlace(req, l, make(map[string]int, len(req.GetCluster().GetNodes())), nil)
}

// validatePlace is ValidatePlace; it leaves in ids the index of each node
// id. On entry ids holds exactly the index of each of known's ids (known:
// the node ids, in order, of the last request validated into ids; nil
// when ids is empty): when the request's node ids are known's, one by
// one (a scheduler asking again about the same cluster), ids is kept as
// it is and their duplicates are not looked for again; else ids is
// cleared and refilled. After an error ids holds nothing known.
func validatePlace(req *pb.PlaceRequest, l Limits, ids map[string]int, known []string) error {
	if req == nil {
		return fieldErr("request", "missing")
	}
	c := req.GetCluster()
	if c == nil {
		return fieldErr("cluster", "missing")
	}
	switch n := len(c.GetNodes()); {
	case n == 0:
		return fieldErr("cluster.nodes", "empty")
	case n > l.MaxNodes:
		return fieldErr("cluster.nodes", "too many (%d > %d)", n, l.MaxNodes)
	}
	same := len(ids) == len(known) &&
		slices.EqualFunc(c.GetNodes(), known, func(nd *pb.Node, id string) bool { return nd.GetId() == id })
	if !same {
		clear(ids)
	}
	for i, nd := range c.GetNodes() {
		if err := validateNode(i, nd, ids, !same, l); err != nil {
			return err
		}
	}
	if err := checkFloat("cluster.intra_rack_gbps", c.GetIntraRackGbps()); err != nil {
		return err
	}
	if err := checkFloat("cluster.cross_rack_gbps", c.GetCrossRackGbps()); err != nil {
		return err
	}
	if c.GetPendingJobs() < 0 {
		return fieldErr("cluster.pending_jobs", "negative (%d)", c.GetPendingJobs())
	}
	if c.GetRunningJobs() < 0 {
		return fieldErr("cluster.running_jobs", "negative (%d)", c.GetRunningJobs())
	}
	if req.GetUnixNanos() < 0 {
		return fieldErr("unix_nanos", "negative (%d)", req.GetUnixNanos())
	}
	if t := req.GetJob().GetSubmitUnixNanos(); t < 0 {
		return fieldErr("job.submit_unix_nanos", "negative (%d)", t)
	}

	j := req.GetJob()
	if j == nil {
		return fieldErr("job", "missing")
	}
	if err := checkID("job.id", j.GetId(), l, true); err != nil {
		return err
	}
	if err := checkID("job.model", j.GetModel(), l, false); err != nil {
		return err
	}
	switch w := j.GetWorkers(); {
	case w <= 0:
		return fieldErr("job.workers", "want > 0 (got %d)", w)
	case int(w) > l.MaxWorkers:
		return fieldErr("job.workers", "too many (%d > %d)", w, l.MaxWorkers)
	}
	maxWork := cmp.Or(l.MaxWork, DefaultMaxWork)
	if n, w := len(c.GetNodes()), int(j.GetWorkers()); work(n, w) > maxWork {
		return fieldErr("cluster.nodes x job.workers", "too much work (%d nodes x %d workers = %d > %d): ask about fewer nodes, or raise the server's -max-work",
			n, w, work(n, w), maxWork)
	}
	if _, ok := pb.Arch_name[int32(j.GetArch())]; !ok {
		return fieldErr("job.arch", "unknown (%d)", j.GetArch())
	}
	switch ps := j.GetPsShards(); {
	case ps < 0:
		return fieldErr("job.ps_shards", "negative (%d)", ps)
	case int(ps) > l.MaxPSShards:
		return fieldErr("job.ps_shards", "too many (%d > %d)", ps, l.MaxPSShards)
	case ps > 0 && j.GetArch() == pb.Arch_ARCH_RING:
		return fieldErr("job.ps_shards", "%d for a ring job, want 0", ps)
	}
	if j.GetBatchSize() < 0 {
		return fieldErr("job.batch_size", "negative (%d)", j.GetBatchSize())
	}
	if err := checkFloat("job.expected_duration_s", j.GetExpectedDurationS()); err != nil {
		return err
	}
	if n := len(j.GetExcludeNodes()); n > len(c.GetNodes()) {
		return fieldErr("job.exclude_nodes", "too many (%d > %d nodes)", n, len(c.GetNodes()))
	}
	if len(j.GetExcludeNodes()) == 0 {
		return nil
	}
	seen := make(map[string]int, len(j.GetExcludeNodes()))
	for i, id := range j.GetExcludeNodes() {
		f := func() string { return fmt.Sprintf("job.exclude_nodes[%d]", i) }
		if _, ok := ids[id]; !ok {
			if len(id) > l.MaxIDLen {
				return fieldErr(f(), "unknown node id (%d bytes)", len(id))
			}
			return fieldErr(f(), "unknown node id %q", id)
		}
		if k, ok := seen[id]; ok {
			return fieldErr(f(), "duplicate of job.exclude_nodes[%d] (%q)", k, id)
		}
		seen[id] = i
	}
	return nil
}

// ValidateReport checks every field of a Report request against l and
// returns a *FieldError naming the first invalid one, or nil.
func ValidateReport(req *pb.ReportRequest, l Limits) error {
	if req == nil {
		return fieldErr("request", "missing")
	}
	switch n := len(req.GetOutcomes()); {
	case n == 0:
		return fieldErr("outcomes", "empty")
	case n > l.MaxOutcomes:
		return fieldErr("outcomes", "too many (%d > %d)", n, l.MaxOutcomes)
	}
	for i, o := range req.GetOutcomes() {
		f := fmt.Sprintf("outcomes[%d]", i)
		if o == nil {
			return fieldErr(f, "missing")
		}
		if err := checkID(f+".job_id", o.GetJobId(), l, true); err != nil {
			return err
		}
		if err := checkID(f+".decision_id", o.GetDecisionId(), l, false); err != nil {
			return err
		}
		if o.GetUnixNanos() < 0 {
			return fieldErr(f+".unix_nanos", "negative (%d)", o.GetUnixNanos())
		}
		switch e := o.GetEvent().(type) {
		case *pb.Outcome_Started:
			ns := e.Started.GetNodeIds()
			if len(ns) == 0 {
				return fieldErr(f+".started.node_ids", "empty")
			}
			if len(ns) > l.MaxWorkers {
				return fieldErr(f+".started.node_ids", "too many (%d > %d)", len(ns), l.MaxWorkers)
			}
			for k, id := range ns {
				if err := checkID(fmt.Sprintf("%s.started.node_ids[%d]", f, k), id, l, true); err != nil {
					return err
				}
			}
		case *pb.Outcome_Iterations:
			s := e.Iterations.GetSeconds()
			if len(s) == 0 {
				return fieldErr(f+".iterations.seconds", "empty")
			}
			if len(s) > l.MaxSamples {
				return fieldErr(f+".iterations.seconds", "too many (%d > %d)", len(s), l.MaxSamples)
			}
			for k, v := range s {
				if err := checkFloat(fmt.Sprintf("%s.iterations.seconds[%d]", f, k), v); err != nil {
					return err
				}
			}
			if w := e.Iterations.GetWorker(); w < -1 || int(w) >= l.MaxWorkers {
				return fieldErr(f+".iterations.worker", "out of range (%d)", w)
			}
		case *pb.Outcome_Finished:
			if err := checkFloat(f+".finished.jct_s", e.Finished.GetJctS()); err != nil {
				return err
			}
		default:
			return fieldErr(f+".event", "missing (want started, iterations or finished)")
		}
	}
	return nil
}

// validateNode checks cluster.nodes[i] and, when index, adds its id to
// ids after checking it is not there yet (else validatePlace found the
// same ids as the last request's, whose index ids holds). Field
// names are built only for an error: this runs for every node of every
// request.
func validateNode(i int, nd *pb.Node, ids map[string]int, index bool, l Limits) error {
	f := func(name string) string { return fmt.Sprintf("cluster.nodes[%d]%s", i, name) }
	if nd == nil {
		return fieldErr(f(""), "missing")
	}
	switch id := nd.GetId(); {
	case id == "":
		return fieldErr(f(".id"), "empty")
	case len(id) > l.MaxIDLen:
		return fieldErr(f(".id"), "too long (%d > %d bytes)", len(id), l.MaxIDLen)
	}
	if index {
		if j, ok := ids[nd.GetId()]; ok {
			return fieldErr(f(".id"), "duplicate of cluster.nodes[%d] (%q)", j, nd.GetId())
		}
		ids[nd.GetId()] = i
	}
	if len(nd.GetGpuType()) > l.MaxIDLen {
		return fieldErr(f(".gpu_type"), "too long (%d > %d bytes)", len(nd.GetGpuType()), l.MaxIDLen)
	}
	switch g := nd.GetGpus(); {
	case g <= 0:
		return fieldErr(f(".gpus"), "want > 0 (got %d)", g)
	case int(g) > l.MaxGPUsPerNode:
		return fieldErr(f(".gpus"), "too many (%d > %d)", g, l.MaxGPUsPerNode)
	}
	switch fr := nd.GetFreeGpus(); {
	case fr < 0:
		return fieldErr(f(".free_gpus"), "negative (%d)", fr)
	case fr > nd.GetGpus():
		return fieldErr(f(".free_gpus"), "more than the node's gpus (%d > %d)", fr, nd.GetGpus())
	}
	if nd.GetCpus() < 0 {
		return fieldErr(f(".cpus"), "negative (%d)", nd.GetCpus())
	}
	if nd.GetRack() < 0 {
		return fieldErr(f(".rack"), "negative (%d)", nd.GetRack())
	}
	for k, v := range [...]float64{nd.GetSpeed(), nd.GetMemoryGib(), nd.GetNicGbps(), nd.GetCpuUtil(), nd.GetMemBwUtil(), nd.GetNetUtil()} {
		name := [...]string{".speed", ".memory_gib", ".nic_gbps", ".cpu_util", ".mem_bw_util", ".net_util"}[k]
		if !(v >= 0) || math.IsInf(v, 0) {
			return checkFloat(f(name), v)
		}
		if k >= 3 && v > l.MaxUtil {
			return fieldErr(f(name), "too high (%v > %v)", v, l.MaxUtil)
		}
	}
	return nil
}
