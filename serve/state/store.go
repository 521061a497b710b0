package state

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/drover-sched/drover/env"
	pb "github.com/drover-sched/drover/serve/proto"
)

// Config configures a Store. The zero value takes every default.
type Config struct {
	// StaleAfter is how long a node may go without a message from its
	// agent before it is stale (default 15 s: three samples at the
	// agent's default 5 s interval).
	StaleAfter time.Duration
	// History is the number of samples kept per node (default 720: an
	// hour at 5 s).
	History int
	// MaxNodes and MaxJobs bound the nodes and jobs tracked (defaults
	// 10,000 and 20,000). A hello for a new node beyond MaxNodes takes the
	// place of the node whose agent has been silent the longest if that
	// node is stale, and is refused otherwise: a live node is never
	// pushed out, and nodes gone for good do not fill the store. Each
	// node keeps up to History samples (48 bytes each: 34 KB at the
	// default), so MaxNodes bounds the telemetry's memory (345 MB at the
	// defaults). The least recently touched finished job (else the least
	// recently touched job) makes room for a new one.
	MaxNodes, MaxJobs int
	// MaxJobsPerNode bounds the jobs that iteration reports through one
	// node's agent may create (default 256): an agent takes reports from
	// anything on its node, unauthenticated, so a node at its quota
	// forgets its own least recently touched job for a new one instead
	// of pushing other nodes' jobs out. A job the cluster reports on
	// (JobStarted, JobModel, JobIterations) is no longer charged to the
	// node.
	MaxJobsPerNode int
	// AgentJobTTL is how long a job that only agents' iteration reports
	// know of (one still charged to a node, see MaxJobsPerNode) is kept
	// without a report touching it (default 2 minutes): ExpireJobs
	// forgets it after that. Without it, the jobs of agents that report
	// and leave stayed until MaxJobs or a quota pushed them out: in the
	// 10-minute drover bench soak, 16,371 such jobs (64 nodes x 256) held
	// the server 26% over its resident size an idle 3 minutes after
	// every client had left. A job the cluster reports on never expires.
	AgentJobTTL time.Duration
	// FinishedJobTTL is how long a finished job is kept after its end
	// (default one minute): its measured profile has become its model's at
	// JobFinished, and the record stays only for late reports about it.
	// Kept until MaxJobs pushed them out, the soak's 15,000 finished jobs
	// held the server 17% over its resident size three idle minutes after
	// its clients had left.
	FinishedJobTTL time.Duration
	// ProfileIterations is the number of iteration times kept per worker
	// of a job, its first ones (default 256): STRN profiles a job from its
	// first iterations.
	ProfileIterations int
	// MaxJobWorkers is the most workers of one job whose iteration times
	// are kept (default 1,024); reports for more workers are dropped and
	// counted (Evictions.Workers).
	MaxJobWorkers int
	// MaxIterationTimes bounds the iteration times kept over all jobs
	// (default 1,048,576: 8 MiB of times, about 16 MB of snapshot). A
	// report beyond it makes room by forgetting jobs in MaxJobs' order
	// (never the report's own job). With MaxJobs and MaxNodes it bounds
	// the store's memory and its snapshot, whatever clients send: the
	// per-worker limits alone, times an unbounded number of workers and
	// jobs, were no limit (issue 32: 81 reports of 1,500 workers took the
	// server from 50 to 816 MiB).
	MaxIterationTimes int
	// Recorder, when set, receives every sample applied (the telemetry
	// log); its errors are counted, not returned to the agent.
	Recorder Recorder
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.StaleAfter == 0 {
		c.StaleAfter = 15 * time.Second
	}
	if c.History == 0 {
		c.History = 720
	}
	if c.AgentJobTTL == 0 {
		c.AgentJobTTL = 2 * time.Minute
	}
	if c.FinishedJobTTL == 0 {
		c.FinishedJobTTL = time.Minute
	}
	if c.MaxNodes == 0 {
		c.MaxNodes = 10_000
	}
	if c.MaxJobs == 0 {
		c.MaxJobs = 20_000
	}
	if c.ProfileIterations == 0 {
		c.ProfileIterations = 256
	}
	if c.MaxJobsPerNode == 0 {
		c.MaxJobsPerNode = 256
	}
	if c.MaxJobWorkers == 0 {
		c.MaxJobWorkers = 1024
	}
	if c.MaxIterationTimes == 0 {
		c.MaxIterationTimes = 1 << 20
	}
	return c
}

func (c Config) check() error {
	if c.StaleAfter <= 0 || c.History <= 0 || c.MaxNodes <= 0 || c.MaxJobs <= 0 || c.ProfileIterations <= 0 ||
		c.MaxJobsPerNode <= 0 || c.MaxJobWorkers <= 0 || c.MaxIterationTimes <= 0 || c.AgentJobTTL <= 0 || c.FinishedJobTTL <= 0 {
		return fmt.Errorf("state: config %+v: every limit must be positive", c)
	}
	return nil
}

// Recorder receives the samples a Store applies.
type Recorder interface {
	Record(node string, s Sample, raw *pb.NodeSample) error
}

// Sample is one node's load at one time, in the simulator's terms.
type Sample struct {
	// Time is the sample's time on the agent's clock.
	Time time.Time
	// Usage is the load derived from the agent's reading (see Usage).
	Usage env.Usage
}

// NodeInfo is what a node's agent said about it in its hello.
type NodeInfo struct {
	ID, AgentID  string
	GPUs         int
	GPUType      string
	CPUs         int
	MemoryGiB    float64
	NICGbps      float64
	Rack         int
	GPUTelemetry bool
	GPUNote      string
	Interval     time.Duration
	Version      string
}

// node is a node's state.
type node struct {
	info     NodeInfo
	seen     time.Time // the server's clock at the last message
	lastSeq  uint64    // highest sequence number applied for info.AgentID
	hist     []Sample  // ring of the last History samples
	head     int       // index of the oldest sample when the ring is full
	last     Sample    // the latest sample (valid when samples > 0)
	samples  int64     // samples applied
	lostMsgs int64     // messages the agent reported dropped (Gap)
	seqGaps  int64     // jumps in sequence numbers no Gap accounted for
	missing  int64     // the messages those jumps skipped
}

// worker is one worker's measured iterations.
type worker struct {
	Node    string
	Seconds []float64
	Dropped int64
}

// job is what the store knows of a job from reports and agents.
type job struct {
	id       string
	src      string // the node whose agent's report created it ("": none)
	pos      [2]int // its index in the store's heap and in its node's
	times    int    // iteration times kept, of all its workers
	model    string
	nodes    []string // per worker, from Started
	workers  map[int]*worker
	started  time.Time
	finished bool
	touched  time.Time // the server's clock at the last report
}

// Errors of the store.
var (
	// ErrTooManyNodes is returned for a hello beyond Config.MaxNodes.
	ErrTooManyNodes = errors.New("state: too many nodes")
	// ErrNoHello is returned for a message on a stream before its hello.
	ErrNoHello = errors.New("state: message before hello")
	// ErrSuperseded is returned for a message of an agent whose node has
	// since said hello through another agent (a restarted agent): its
	// stream ends, so the old agent's sequence numbers cannot be mistaken
	// for the new one's.
	ErrSuperseded = errors.New("state: agent superseded by a newer agent of the node")
)

// Store is the server's live state: per-node telemetry history, which
// nodes are stale, and per-job measured iteration times. It is safe for
// concurrent use.
type Store struct {
	cfg Config

	mu     sync.RWMutex
	nodes  map[string]*node
	jobs   map[string]*job
	byMod  map[string]*Profile // the latest measured profile per model
	recErr int64

	lru   jobHeap             // every job, in the order they are forgotten
	bySrc map[string]*jobHeap // the jobs each node's agent created
	times int                 // iteration times kept, of all jobs
	ev    Evictions
	// runVer counts the changes to the running jobs (RunningVersion);
	// runLog holds the latest of them (RunningSince).
	runVer        uint64
	runLog        []runChange
	runLogWorkers int // the workers of runLog's changes
}

// New returns an empty store.
func New(cfg Config) (*Store, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	return &Store{cfg: cfg, nodes: map[string]*node{}, jobs: map[string]*job{}, byMod: map[string]*Profile{},
		bySrc: map[string]*jobHeap{}}, nil
}

// Config returns the store's configuration, defaults applied.
func (st *Store) Config() Config { return st.cfg }

// Hello registers a node's agent (a new agent on a known node starts its
// sequence numbers afresh) and returns the highest sequence number
// already applied for that agent.
func (st *Store) Hello(h *pb.AgentHello, now time.Time) (uint64, error) {
	if err := ValidateHello(h); err != nil {
		return 0, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	n := st.nodes[h.GetNodeId()]
	if n == nil {
		if len(st.nodes) >= st.cfg.MaxNodes && !st.evictStaleNode(now) {
			st.ev.Nodes++
			return 0, fmt.Errorf("%w (%d, none stale): node %q refused", ErrTooManyNodes, st.cfg.MaxNodes, h.GetNodeId())
		}
		n = &node{}
		st.nodes[h.GetNodeId()] = n
	}
	if n.info.AgentID != h.GetAgentId() {
		n.lastSeq = 0
	}
	n.info = NodeInfo{ID: h.GetNodeId(), AgentID: h.GetAgentId(), GPUs: int(h.GetGpus()), GPUType: h.GetGpuType(), CPUs: int(h.GetCpus()),
		MemoryGiB: h.GetMemoryGib(), NICGbps: h.GetNicGbps(), Rack: int(h.GetRack()), GPUTelemetry: h.GetGpuTelemetry(), GPUNote: h.GetGpuNote(),
		Interval: time.Duration(h.GetIntervalS() * float64(time.Second)), Version: h.GetVersion()}
	n.seen = now
	return n.lastSeq, nil
}

// evictStaleNode forgets the node whose agent has been silent the
// longest, if it is stale at now, and reports whether it did. A scan of
// every node: it runs only for a new node's hello when the store is full.
func (st *Store) evictStaleNode(now time.Time) bool {
	var oldest *node
	for _, n := range st.nodes {
		if oldest == nil || n.seen.Before(oldest.seen) || (n.seen.Equal(oldest.seen) && n.info.ID < oldest.info.ID) {
			oldest = n
		}
	}
	if oldest == nil || now.Sub(oldest.seen) <= st.cfg.StaleAfter {
		return false
	}
	delete(st.nodes, oldest.info.ID)
	st.ev.StaleNodes++
	return true
}

// Apply applies one message of node's stream, received at now, and
// returns the highest sequence number applied for the node's agent. A
// message at or below it is a resend and is skipped.
func (st *Store) Apply(nodeID string, m *pb.AgentMessage, now time.Time) (uint64, error) {
	return st.ApplyFrom(nodeID, "", m, now)
}

// ApplyFrom is Apply for a message of agent agentID (empty: the node's
// current agent); a message of another agent than the node's current one
// is refused with ErrSuperseded.
func (st *Store) ApplyFrom(nodeID, agentID string, m *pb.AgentMessage, now time.Time) (uint64, error) {
	if err := ValidateMessage(m); err != nil {
		return 0, err
	}
	st.mu.Lock()
	n := st.nodes[nodeID]
	if n == nil {
		st.mu.Unlock()
		return 0, ErrNoHello
	}
	if agentID != "" && agentID != n.info.AgentID {
		st.mu.Unlock()
		return 0, fmt.Errorf("%w: node %s, agent %s (now %s)", ErrSuperseded, nodeID, agentID, n.info.AgentID)
	}
	n.seen = now
	if m.GetSeq() <= n.lastSeq {
		seq := n.lastSeq
		st.mu.Unlock()
		return seq, nil
	}
	n.checkGap(m)
	n.lastSeq = m.GetSeq()
	var rec *pb.NodeSample
	var s Sample
	switch b := m.GetBody().(type) {
	case *pb.AgentMessage_Sample:
		s = Sample{Time: time.Unix(0, b.Sample.GetUnixNanos()), Usage: Usage(b.Sample, n.info.NICGbps, n.last.Usage)}
		n.push(s, st.cfg.History)
		rec = b.Sample
	case *pb.AgentMessage_Iterations:
		st.iterations(b.Iterations.GetJobId(), int(b.Iterations.GetWorker()), nodeID, nodeID, b.Iterations.GetSeconds(), b.Iterations.GetDropped(), now)
	case *pb.AgentMessage_Gap:
		n.lostMsgs = addSat(n.lostMsgs, addSat(b.Gap.GetSamples(), b.Gap.GetIterationReports()))
	}
	seq := n.lastSeq
	r := st.cfg.Recorder
	st.mu.Unlock()
	if rec != nil && r != nil {
		if err := r.Record(nodeID, s, rec); err != nil {
			st.mu.Lock()
			st.recErr++
			st.mu.Unlock()
		}
	}
	return seq, nil
}

// checkGap counts a jump in the agent's sequence numbers before m (seq
// above lastSeq) that no Gap accounts for. Numbers grow by one per
// message, and an agent's Gap message carries the number of the last
// message it stands for, so m accounts for the numbers (seq-k, seq], k
// being 1, or a Gap's count of dropped messages. The first message of an
// agent the server has applied nothing of sets the baseline: a server
// started without its snapshot meets agents in the middle of their
// numbers, which is not loss.
func (n *node) checkGap(m *pb.AgentMessage) {
	if n.lastSeq == 0 {
		return
	}
	k := uint64(1)
	if g := m.GetGap(); g != nil {
		k = uint64(max(1, addSat(g.GetSamples(), g.GetIterationReports())))
	}
	if jump := m.GetSeq() - n.lastSeq; jump > k {
		n.seqGaps = addSat(n.seqGaps, 1)
		n.missing = addSat(n.missing, int64(min(jump-k, math.MaxInt64)))
	}
}

// push appends s to the node's ring of capacity c.
func (n *node) push(s Sample, c int) {
	n.last = s
	n.samples++
	if len(n.hist) < c {
		n.hist = append(n.hist, s)
		return
	}
	n.hist[n.head] = s
	n.head = (n.head + 1) % len(n.hist)
}

// history returns the node's samples, oldest first, appended to dst.
func (n *node) history(dst []Sample) []Sample {
	dst = append(dst, n.hist[n.head:]...)
	return append(dst, n.hist[:n.head]...)
}

// Usage turns an agent's reading into the simulator's load shares, which
// is what the policies read (env.Telemetry):
//
//   - CPU is cpu_util.
//   - MemBW is mem_pressure, the share of time some task stalled on
//     memory (PSI). Linux exposes no memory-bandwidth counter in /proc;
//     stalls are the contention the simulator's MemBW overload stands for.
//   - Net is the busier direction's bit rate over the NIC's bandwidth,
//     max(rx, tx) x 8 / (nicGbps x 1e9); without a NIC bandwidth it is 0.
//
// Each share is clamped to [0, 1]. A field the agent could not measure
// (NaN) keeps its value in prev, the node's previous load.
func Usage(s *pb.NodeSample, nicGbps float64, prev env.Usage) env.Usage {
	u := prev
	if x := s.GetCpuUtil(); !math.IsNaN(x) {
		u.CPU = clamp01(x)
	}
	if x := s.GetMemPressure(); !math.IsNaN(x) {
		u.MemBW = clamp01(x)
	}
	rx, tx := s.GetNetRxBps(), s.GetNetTxBps()
	if nicGbps > 0 && !math.IsNaN(rx) && !math.IsNaN(tx) {
		u.Net = clamp01(max(rx, tx) * 8 / (nicGbps * 1e9))
	}
	return u
}

func clamp01(x float64) float64 { return min(max(x, 0), 1) }

// NodeView is a node's state as Node reports it.
type NodeView struct {
	Info NodeInfo
	// Seen is the server's clock at the node's last message.
	Seen time.Time
	// Stale is true when Seen is more than StaleAfter ago.
	Stale bool
	// Last is the latest sample; Samples counts the samples applied and
	// Lost the messages its agent reported dropped.
	Last          Sample
	Samples, Lost int64
	// LastSeq is the highest sequence number applied for the agent.
	LastSeq uint64
	// SeqGaps counts the jumps in the agent's sequence numbers that no
	// Gap message accounted for (a message lost without the agent
	// knowing, or the server's own state lost since it acknowledged
	// them), and Missing the messages they skipped.
	SeqGaps, Missing int64
}

// Node returns node id's state at now.
func (st *Store) Node(id string, now time.Time) (NodeView, bool) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	n := st.nodes[id]
	if n == nil {
		return NodeView{}, false
	}
	return st.view(n, now), true
}

func (st *Store) view(n *node, now time.Time) NodeView {
	return NodeView{Info: n.info, Seen: n.seen, Stale: now.Sub(n.seen) > st.cfg.StaleAfter, Last: n.last,
		Samples: n.samples, Lost: n.lostMsgs, LastSeq: n.lastSeq, SeqGaps: n.seqGaps, Missing: n.missing}
}

// Nodes returns every node's state at now, by id.
func (st *Store) Nodes(now time.Time) []NodeView {
	st.mu.RLock()
	defer st.mu.RUnlock()
	out := make([]NodeView, 0, len(st.nodes))
	for _, n := range st.nodes {
		out = append(out, st.view(n, now))
	}
	slices.SortFunc(out, func(a, b NodeView) int { return cmpString(a.Info.ID, b.Info.ID) })
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// History returns node id's samples, oldest first.
func (st *Store) History(id string) []Sample {
	st.mu.RLock()
	defer st.mu.RUnlock()
	n := st.nodes[id]
	if n == nil {
		return nil
	}
	return n.history(nil)
}

// Overlay puts the live state on a request's view of the cluster: for
// each node ids[i] the store knows, a stale node gets no free GPUs (it is
// avoided) and a fresh one with samples the latest sampled load in
// load[i]. Nodes without an agent keep the request's values. It returns
// the number of stale nodes and of nodes whose load it set.
func (st *Store) Overlay(ids []string, load []env.Usage, free []int, now time.Time) (stale, live int) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	if len(st.nodes) == 0 {
		return 0, 0
	}
	for i, id := range ids {
		n := st.nodes[id]
		if n == nil {
			continue
		}
		if now.Sub(n.seen) > st.cfg.StaleAfter {
			free[i] = 0
			stale++
			continue
		}
		if n.samples > 0 {
			load[i] = n.last.Usage
			live++
		}
	}
	return stale, live
}

// Mean returns node id's mean load over the samples in (from, to], and
// their number.
func (st *Store) Mean(id string, from, to time.Time) (env.Usage, int) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	n := st.nodes[id]
	if n == nil {
		return env.Usage{}, 0
	}
	return n.mean(func(t time.Time) bool { return t.After(from) && !t.After(to) })
}

// mean returns the mean load of n's samples whose time keep accepts, and
// their number.
func (n *node) mean(keep func(time.Time) bool) (env.Usage, int) {
	var u env.Usage
	k := 0
	for _, s := range n.hist {
		if keep(s.Time) {
			u.CPU += s.Usage.CPU
			u.MemBW += s.Usage.MemBW
			u.Net += s.Usage.Net
			k++
		}
	}
	if k > 0 {
		u.CPU /= float64(k)
		u.MemBW /= float64(k)
		u.Net /= float64(k)
	}
	return u, k
}

// RecordErrors counts the samples the Recorder failed to record.
func (st *Store) RecordErrors() int64 {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.recErr
}
