package state

import (
	"time"
)

// JobStarted records that a job started with its workers on nodes (one id
// per worker, in worker order), of the given model ("" if unknown).
func (st *Store) JobStarted(id, model string, nodes []string, at, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	j := st.job(id, now)
	if model != "" {
		j.model = model
	}
	j.nodes = append(j.nodes[:0], nodes...)
	j.started = at
	j.finished = false
	for w, nd := range nodes {
		if wk := j.workers[w]; wk != nil && wk.Node == "" {
			wk.Node = nd
		}
	}
}

// JobModel records a job's model (from its Place request).
func (st *Store) JobModel(id, model string, now time.Time) {
	if model == "" {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.job(id, now).model = model
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
	j.finished, j.touched = true, now
	if p, ok := st.profile(j); ok && j.model != "" && p.finite() {
		st.byMod[j.model] = &p
	}
}

// JobIterations records iteration times of a job's worker (-1: the whole
// job) on node ("" if unknown), reported at now; only the first
// ProfileIterations per worker are kept, and times outside (0,
// MaxIterationSeconds] are dropped (counted in the worker's Dropped).
func (st *Store) JobIterations(id string, worker int, node string, secs []float64, dropped int64, now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.iterations(id, worker, node, secs, dropped, now)
}

func (st *Store) iterations(id string, wi int, node string, secs []float64, dropped int64, now time.Time) {
	j := st.job(id, now)
	w := j.workers[wi]
	if w == nil {
		w = &worker{}
		j.workers[wi] = w
	}
	if node != "" {
		w.Node = node
	} else if w.Node == "" && wi >= 0 && wi < len(j.nodes) {
		w.Node = j.nodes[wi]
	}
	w.Dropped += dropped
	for _, x := range secs {
		if len(w.Seconds) >= st.cfg.ProfileIterations {
			break
		}
		// Reports through Place's Report carry times serve validated as
		// finite and >= 0 only; a time a profile cannot use is dropped
		// and counted.
		if !usableSeconds(x) {
			w.Dropped++
			continue
		}
		w.Seconds = append(w.Seconds, x)
	}
}

// job returns job id, creating it (and making room) when new.
func (st *Store) job(id string, now time.Time) *job {
	j := st.jobs[id]
	if j == nil {
		if len(st.jobs) >= st.cfg.MaxJobs {
			st.evict()
		}
		j = &job{workers: map[int]*worker{}}
		st.jobs[id] = j
	}
	j.touched = now
	return j
}

// evict forgets the least recently touched finished job, else the least
// recently touched job.
func (st *Store) evict() {
	var victim string
	var vj *job
	for id, j := range st.jobs {
		if vj == nil || (j.finished && !vj.finished) || (j.finished == vj.finished && (j.touched.Before(vj.touched) || j.touched.Equal(vj.touched) && id < victim)) {
			victim, vj = id, j
		}
	}
	delete(st.jobs, victim)
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
		if j.finished || j.started.IsZero() {
			continue
		}
		for _, n := range j.nodes {
			out[n]++
		}
	}
	return out
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

// Summary is a count of what a Store holds, for status and metrics.
type Summary struct {
	// Nodes, Stale and Lost count the nodes, the stale ones and the
	// messages agents reported dropped.
	Nodes, Stale, Lost int64
	// Jobs, ProfiledJobs and ProfiledModels count the jobs tracked, those
	// with MinIterations iteration times or more from some worker (enough
	// for a profile) and the models with a profile.
	Jobs, ProfiledJobs, ProfiledModels int64
}

// Summarize counts what the store holds at now.
func (st *Store) Summarize(now time.Time) Summary {
	st.mu.RLock()
	defer st.mu.RUnlock()
	s := Summary{Nodes: int64(len(st.nodes)), Jobs: int64(len(st.jobs)), ProfiledModels: int64(len(st.byMod))}
	for _, n := range st.nodes {
		if now.Sub(n.seen) > st.cfg.StaleAfter {
			s.Stale++
		}
		s.Lost += n.lostMsgs
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
