package state

import (
	"maps"
	"math"
	"slices"
	"time"
)

// JobStarted records that a job started with its workers on nodes (one id
// per worker, in worker order), of the given model ("" if unknown).
func (st *Store) JobStarted(id, model string, nodes []string, at, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	j := st.job(id, "", now)
	if model != "" {
		j.model = model
	}
	if j.running() {
		st.runChange(j.nodes, -1)
	}
	j.nodes = append(j.nodes[:0], nodes...)
	j.started = at
	j.finished = false
	if j.running() {
		st.runChange(j.nodes, 1)
	}
	for w, nd := range nodes {
		if wk := j.workers[w]; wk != nil && wk.Node == "" {
			wk.Node = nd
		}
	}
	st.fix(j)
}

// JobModel records a job's model (from its Place request).
func (st *Store) JobModel(id, model string, now time.Time) {
	if model == "" {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	j := st.job(id, "", now)
	j.model = model
	st.fix(j)
}

// JobFinished records that a job ended: its measured profile, if it has
// one, becomes its model's (for later jobs of the model), and the job
// becomes the first to be forgotten when the store is full.
func (st *Store) JobFinished(id string, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	j := st.jobs[id]
	if j == nil {
		return
	}
	if j.running() {
		st.runChange(j.nodes, -1)
	}
	j.finished, j.touched = true, now
	st.fix(j)
	if p, ok := st.profile(j); ok && j.model != "" && p.finite() {
		st.byMod[j.model] = &p
	}
}

// JobIterations records iteration times of a job's worker (-1: the whole
// job) on node ("" if unknown), reported at now; only the first
// ProfileIterations per worker are kept, and times outside (0,
// MaxIterationSeconds] are dropped (counted in the worker's Dropped).
// A job keeps the times of MaxJobWorkers workers at most, and the store
// MaxIterationTimes times in all (see Config).
func (st *Store) JobIterations(id string, worker int, node string, secs []float64, dropped int64, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.iterations(id, worker, node, "", secs, dropped, now)
}

// iterations records a report; src is the node whose agent it came
// through ("": the cluster's own report), charged with the job if it
// creates it.
func (st *Store) iterations(id string, wi int, node, src string, secs []float64, dropped int64, now time.Time) {
	j := st.job(id, src, now)
	st.fix(j)
	w := j.workers[wi]
	if w == nil {
		if len(j.workers) >= st.cfg.MaxJobWorkers {
			st.ev.Workers++
			return
		}
		w = &worker{}
		j.workers[wi] = w
	}
	if node != "" {
		w.Node = node
	} else if w.Node == "" && wi >= 0 && wi < len(j.nodes) {
		w.Node = j.nodes[wi]
	}
	w.Dropped = addSat(w.Dropped, dropped)
	// Make room for the times this report adds (the usable ones, up to
	// the worker's ProfileIterations) by forgetting other jobs, never
	// this one.
	need := 0
	for _, x := range secs {
		if len(w.Seconds)+need >= st.cfg.ProfileIterations {
			break
		}
		if usableSeconds(x) {
			need++
		}
	}
	for st.times+need > st.cfg.MaxIterationTimes {
		v := st.lru.top()
		if v == nil || v == j {
			break
		}
		st.forget(v, &st.ev.IterationTimes)
	}
	for _, x := range secs {
		if len(w.Seconds) >= st.cfg.ProfileIterations {
			break
		}
		// Reports through Place's Report carry times serve validated as
		// finite and >= 0 only; a time a profile cannot use is dropped
		// and counted, as is one beyond MaxIterationTimes when this job
		// alone fills it.
		if !usableSeconds(x) || st.times >= st.cfg.MaxIterationTimes {
			w.Dropped = addSat(w.Dropped, 1)
			continue
		}
		w.Seconds = append(w.Seconds, x)
		j.times++
		st.times++
	}
}

// addSat returns a+b for b >= 0, saturating at the largest int64.
func addSat(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// job returns job id touched at now, creating it (and making room) when
// new. A new job from src (a node's agent; "" for the cluster's reports)
// is charged to src's MaxJobsPerNode; a job the cluster reports on is no
// longer charged to the node whose agent created it. The caller calls fix
// once it has changed what the eviction order reads.
func (st *Store) job(id, src string, now time.Time) *job {
	j := st.jobs[id]
	if j == nil {
		if src != "" {
			if q := st.bySrc[src]; q != nil && q.Len() >= st.cfg.MaxJobsPerNode {
				st.forget(q.top(), &st.ev.NodeQuota)
			}
		}
		if len(st.jobs) >= st.cfg.MaxJobs {
			st.forget(st.lru.top(), &st.ev.MaxJobs)
		}
		j = &job{id: id, workers: map[int]*worker{}, touched: now}
		st.add(j, src)
		return j
	}
	j.touched = now
	if src == "" && j.src != "" {
		st.unquota(j)
	}
	return j
}

// add inserts a new job charged to src.
func (st *Store) add(j *job, src string) {
	st.jobs[j.id] = j
	st.lru.add(j)
	if j.running() {
		st.runChange(j.nodes, 1)
	}
	if src != "" {
		q := st.bySrc[src]
		if q == nil {
			q = &jobHeap{slot: 1}
			st.bySrc[src] = q
		}
		j.src = src
		q.add(j)
	}
	st.times += j.times
}

// unquota stops charging j to the node whose agent created it.
func (st *Store) unquota(j *job) {
	q := st.bySrc[j.src]
	q.remove(j)
	if q.Len() == 0 {
		delete(st.bySrc, j.src)
	}
	j.src = ""
}

// fix puts j back in its place in the eviction order after a change.
func (st *Store) fix(j *job) {
	st.lru.fix(j)
	if j.src != "" {
		st.bySrc[j.src].fix(j)
	}
}

// ExpireJobs forgets, at now, the finished jobs that ended longer than
// Config.FinishedJobTTL ago (they come first in the store's forgetting
// order), and the jobs only agents' iteration reports know of (still
// charged to a node) that no report has touched for longer than
// Config.AgentJobTTL; it returns how many it forgot. Each node's jobs are
// taken in their forgetting order (finished first, then least recently
// touched) until one is too recent. The server calls it every few
// seconds.
func (st *Store) ExpireJobs(now time.Time) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := 0
	for st.lru.Len() > 0 {
		j := st.lru.top()
		if !j.finished || now.Sub(j.touched) <= st.cfg.FinishedJobTTL {
			break
		}
		st.forget(j, &st.ev.FinishedExpired)
		n++
	}
	for _, src := range slices.Sorted(maps.Keys(st.bySrc)) {
		q := st.bySrc[src]
		for q != nil && q.Len() > 0 && now.Sub(q.top().touched) > st.cfg.AgentJobTTL {
			st.forget(q.top(), &st.ev.Expired)
			n++
			q = st.bySrc[src] // forget deletes an emptied heap
		}
	}
	return n
}

// forget drops job j, counting it in *count (nil: not counted).
func (st *Store) forget(j *job, count *int64) {
	delete(st.jobs, j.id)
	st.lru.remove(j)
	if j.running() {
		st.runChange(j.nodes, -1)
	}
	if j.src != "" {
		st.unquota(j)
	}
	st.times -= j.times
	if count != nil {
		*count++
	}
}

// Jobs returns the number of jobs tracked.
func (st *Store) Jobs() int {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return len(st.jobs)
}

// Running returns, per node id, the workers of the jobs that started and
// have not finished.
func (st *Store) Running() map[string]int {
	st.mu.RLock()
	defer st.mu.RUnlock()
	out := map[string]int{}
	for _, j := range st.jobs {
		if !j.running() {
			continue
		}
		for _, n := range j.nodes {
			out[n]++
		}
	}
	return out
}

// running reports whether j started and has not finished.
func (j *job) running() bool { return !j.finished && !j.started.IsZero() }

// RunningVersion returns a number that changes whenever what Running and
// RunningJobs return may have changed (a job started, finished, or was
// forgotten or restored while running), and only then: iteration reports
// and new jobs that have not started leave it as it was, so a reader can
// keep what it derived from the running jobs until it changes.
func (st *Store) RunningVersion() uint64 {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.runVer
}

// maxRunLog and maxRunLogWorkers bound the latest changes to the running
// jobs a Store keeps for RunningSince: once the changes or their workers
// reach twice the bound, the oldest are dropped down to it (the log's
// memory stays under 2 MiB, however many workers the jobs have).
const (
	maxRunLog        = 1024
	maxRunLogWorkers = 1 << 16
)

// runChange is one change to the running jobs: a job on nodes started
// (d = 1) or stopped running (d = -1).
type runChange struct {
	nodes []string
	d     int
}

// runChange records that a job on nodes started (d = 1) or stopped
// running (d = -1): a new RunningVersion.
func (st *Store) runChange(nodes []string, d int) {
	st.runVer++
	st.runLog = append(st.runLog, runChange{nodes: slices.Clone(nodes), d: d})
	st.runLogWorkers += len(nodes)
	if len(st.runLog) < 2*maxRunLog && st.runLogWorkers < 2*maxRunLogWorkers {
		return
	}
	k := 0
	for ; k < len(st.runLog) && (len(st.runLog)-k > maxRunLog || st.runLogWorkers > maxRunLogWorkers); k++ {
		st.runLogWorkers -= len(st.runLog[k].nodes)
	}
	st.runLog = append([]runChange(nil), st.runLog[k:]...)
}

// RunningSince calls f with each change to the running jobs after
// RunningVersion ver, oldest first: the node of each worker of a job that
// started (d = 1) or stopped running (d = -1: it finished, restarted
// elsewhere or was forgotten), and returns the version they bring it to.
// It returns false, calling f for none, when the store no longer keeps
// every change since ver (about a thousand are kept, fewer of large
// jobs): the caller starts
// again from RangeRunning. f runs under the store's read lock: it must
// not keep nodes or call the store.
func (st *Store) RunningSince(ver uint64, f func(nodes []string, d int)) (uint64, bool) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	first := st.runVer - uint64(len(st.runLog))
	if ver < first || ver > st.runVer {
		return st.runVer, false
	}
	for _, c := range st.runLog[ver-first:] {
		f(c.nodes, c.d)
	}
	return st.runVer, true
}

// RunningJob is a job that started and has not finished.
type RunningJob struct {
	// Model is the job's model ("" if unknown).
	Model string
	// Nodes is the node of each worker.
	Nodes []string
	// Started is when it started.
	Started time.Time
}

// RunningJobs returns the jobs that started and have not finished, by job
// id.
func (st *Store) RunningJobs() map[string]RunningJob {
	st.mu.RLock()
	defer st.mu.RUnlock()
	out := map[string]RunningJob{}
	for id, j := range st.jobs {
		if !j.finished && !j.started.IsZero() && len(j.nodes) > 0 {
			out[id] = RunningJob{Model: j.model, Nodes: append([]string(nil), j.nodes...), Started: j.started}
		}
	}
	return out
}

// RangeRunning calls f with the node of each worker (as JobStarted gave
// them) of every job that started and has not finished, in no particular
// order, and returns the RunningVersion they are of. f runs under the
// store's read lock: it must not keep nodes or call the store.
func (st *Store) RangeRunning(f func(nodes []string)) uint64 {
	st.mu.RLock()
	defer st.mu.RUnlock()
	for _, j := range st.jobs {
		if j.running() {
			f(j.nodes)
		}
	}
	return st.runVer
}

// Summary is a count of what a Store holds, for status and metrics.
type Summary struct {
	// Nodes, Stale and Lost count the nodes, the stale ones and the
	// messages agents reported dropped.
	Nodes, Stale, Lost int64
	// Jobs, ProfiledJobs and ProfiledModels count the jobs tracked, those
	// with MinIterations iteration times or more from some worker (enough
	// for a profile) and the models with a profile.
	Jobs, ProfiledJobs, ProfiledModels int64
	// IterationTimes counts the iteration times kept, of all jobs.
	IterationTimes int64
	// SeqGaps counts the jumps in agents' sequence numbers that no Gap
	// message accounted for, and Missing the messages they skipped (see
	// NodeView).
	SeqGaps, Missing int64
	// Evicted counts what the store forgot or refused to stay within its
	// limits.
	Evicted Evictions
}

// Evictions counts what a Store forgot or refused to stay within its
// Config's limits, since it started.
type Evictions struct {
	// MaxJobs, NodeQuota and IterationTimes count the jobs forgotten to
	// make room for another within Config.MaxJobs, a node's
	// MaxJobsPerNode and MaxIterationTimes.
	MaxJobs, NodeQuota, IterationTimes int64
	// Workers counts the iteration reports dropped because their job
	// already kept MaxJobWorkers other workers' times.
	Workers int64
	// StaleNodes counts the stale nodes forgotten to make room for a new
	// node within Config.MaxNodes, and Nodes the new nodes' hellos
	// refused because the store was full of nodes none of them stale.
	StaleNodes, Nodes int64
	// Expired counts the jobs only agents knew of that ExpireJobs
	// forgot after Config.AgentJobTTL without a report.
	Expired int64
	// FinishedExpired counts the finished jobs ExpireJobs forgot
	// after Config.FinishedJobTTL.
	FinishedExpired int64
}

// Summarize counts what the store holds at now.
func (st *Store) Summarize(now time.Time) Summary {
	st.mu.RLock()
	defer st.mu.RUnlock()
	s := Summary{Nodes: int64(len(st.nodes)), Jobs: int64(len(st.jobs)), ProfiledModels: int64(len(st.byMod)),
		IterationTimes: int64(st.times), Evicted: st.ev}
	for _, n := range st.nodes {
		if now.Sub(n.seen) > st.cfg.StaleAfter {
			s.Stale++
		}
		s.Lost = addSat(s.Lost, n.lostMsgs)
		s.SeqGaps = addSat(s.SeqGaps, n.seqGaps)
		s.Missing = addSat(s.Missing, n.missing)
	}
	for _, j := range st.jobs {
		if profiled(j) {
			s.ProfiledJobs++
		}
	}
	return s
}

// profiled reports whether some worker of j has MinIterations samples.
func profiled(j *job) bool {
	for _, w := range j.workers {
		if len(w.Seconds) >= MinIterations {
			return true
		}
	}
	return false
}
