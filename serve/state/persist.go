package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/internal/inputfile"
)

// snapshotVersion is the snapshot format's version.
const snapshotVersion = 1

// The snapshot's JSON form. Times are Unix nanoseconds (0: none).
type snapJSON struct {
	Version  int                 `json:"version"`
	SavedAt  int64               `json:"saved_unix_nanos"`
	Nodes    []snapNode          `json:"nodes"`
	Jobs     []snapJob           `json:"jobs"`
	Profiles map[string]*Profile `json:"profiles"`
}

type snapNode struct {
	Info    NodeInfo     `json:"info"`
	Seen    int64        `json:"seen"`
	LastSeq uint64       `json:"last_seq"`
	Samples int64        `json:"samples"`
	Lost    int64        `json:"lost"`
	SeqGaps int64        `json:"seq_gaps,omitempty"`
	Missing int64        `json:"missing,omitempty"`
	History []snapSample `json:"history"`
}

type snapSample struct {
	T     int64   `json:"t"`
	CPU   float64 `json:"cpu"`
	MemBW float64 `json:"membw"`
	Net   float64 `json:"net"`
}

type snapJob struct {
	ID       string       `json:"id"`
	Source   string       `json:"source,omitempty"` // the node whose agent created it
	Model    string       `json:"model"`
	Nodes    []string     `json:"nodes"`
	Started  int64        `json:"started"`
	Finished bool         `json:"finished"`
	Touched  int64        `json:"touched"`
	Workers  []snapWorker `json:"workers"`
}

type snapWorker struct {
	Index   int       `json:"index"`
	Node    string    `json:"node"`
	Seconds []float64 `json:"seconds"`
	Dropped int64     `json:"dropped"`
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// MarshalJSON returns the store's state as JSON, nodes and jobs sorted by
// id, so that the same state gives the same bytes.
func (st *Store) MarshalJSON() ([]byte, error) { return st.marshal(time.Time{}) }

// marshal is MarshalJSON with the save time.
func (st *Store) marshal(saved time.Time) ([]byte, error) {
	st.mu.RLock()
	s := snapJSON{Version: snapshotVersion, SavedAt: nanos(saved), Profiles: map[string]*Profile{}}
	for id, n := range st.nodes {
		sn := snapNode{Info: n.info, Seen: nanos(n.seen), LastSeq: n.lastSeq, Samples: n.samples, Lost: n.lostMsgs,
			SeqGaps: n.seqGaps, Missing: n.missing}
		sn.Info.ID = id
		for _, x := range n.history(nil) {
			sn.History = append(sn.History, snapSample{T: nanos(x.Time), CPU: x.Usage.CPU, MemBW: x.Usage.MemBW, Net: x.Usage.Net})
		}
		s.Nodes = append(s.Nodes, sn)
	}
	for id, j := range st.jobs {
		sj := snapJob{ID: id, Source: j.src, Model: j.model, Nodes: slices.Clone(j.nodes), Started: nanos(j.started), Finished: j.finished, Touched: nanos(j.touched)}
		for w, wk := range j.workers {
			sj.Workers = append(sj.Workers, snapWorker{Index: w, Node: wk.Node, Seconds: slices.Clone(wk.Seconds), Dropped: wk.Dropped})
		}
		slices.SortFunc(sj.Workers, func(a, b snapWorker) int { return a.Index - b.Index })
		s.Jobs = append(s.Jobs, sj)
	}
	for m, p := range st.byMod {
		c := *p
		s.Profiles[m] = &c
	}
	st.mu.RUnlock()
	slices.SortFunc(s.Nodes, func(a, b snapNode) int { return cmpString(a.Info.ID, b.Info.ID) })
	slices.SortFunc(s.Jobs, func(a, b snapJob) int { return cmpString(a.ID, b.ID) })
	return json.Marshal(s)
}

// Save writes the store's state to path atomically: to a temporary file
// in the same directory, synced, then renamed over path (and the
// directory synced), so a crash leaves the old snapshot or the new one,
// never a torn one.
func (st *Store) Save(path string, now time.Time) error {
	b, err := st.marshal(now)
	if err != nil {
		return fmt.Errorf("state: snapshot: %w", err)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("state: snapshot: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("state: snapshot %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Load reads a snapshot written by Save into a new store with cfg. A
// missing file is an error (LoadOrEmpty starts empty instead); a corrupt
// one is an error naming the file and the field.
func Load(path string, cfg Config) (*Store, error) {
	b, err := inputfile.ReadFile(path, inputfile.Log) // bounded like a log segment
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	st, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if err := st.restore(b); err != nil {
		return nil, fmt.Errorf("state: %s: %w", path, err)
	}
	return st, nil
}

// LoadOrEmpty is Load, except that a missing file gives an empty store
// (a first start).
func LoadOrEmpty(path string, cfg Config) (*Store, error) {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return New(cfg)
	}
	return Load(path, cfg)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// restore fills an empty store from a snapshot's bytes.
func (st *Store) restore(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var s snapJSON
	if err := d.Decode(&s); err != nil {
		return err
	}
	if s.Version != snapshotVersion {
		return fieldErr("version", "%d, want %d", s.Version, snapshotVersion)
	}
	if len(s.Nodes) > st.cfg.MaxNodes {
		return fieldErr("nodes", "%d, more than the %d allowed", len(s.Nodes), st.cfg.MaxNodes)
	}
	for i, sn := range s.Nodes {
		f := fmt.Sprintf("nodes[%d]", i)
		if err := checkID(f+".info.ID", sn.Info.ID); err != nil {
			return err
		}
		if _, dup := st.nodes[sn.Info.ID]; dup {
			return fieldErr(f+".info.ID", "%q twice", sn.Info.ID)
		}
		if err := validateInfo(f+".info", sn.Info); err != nil {
			return err
		}
		if sn.LastSeq > MaxSeq {
			return fieldErr(f+".last_seq", "%d, want at most %d (2^63-1)", sn.LastSeq, uint64(MaxSeq))
		}
		n := &node{info: sn.Info, seen: fromNanos(sn.Seen), lastSeq: sn.LastSeq, samples: sn.Samples, lostMsgs: sn.Lost,
			seqGaps: sn.SeqGaps, missing: sn.Missing}
		h := sn.History
		if len(h) > st.cfg.History {
			h = h[len(h)-st.cfg.History:]
		}
		for k, x := range h {
			u := env.Usage{CPU: x.CPU, MemBW: x.MemBW, Net: x.Net}
			if !(u.CPU >= 0 && u.CPU <= 1 && u.MemBW >= 0 && u.MemBW <= 1 && u.Net >= 0 && u.Net <= 1) {
				return fieldErr(fmt.Sprintf("%s.history[%d]", f, k), "load %+v, want shares in [0, 1]", u)
			}
			n.hist = append(n.hist, Sample{Time: fromNanos(x.T), Usage: u})
		}
		if len(n.hist) > 0 {
			n.last = n.hist[len(n.hist)-1]
		}
		st.nodes[sn.Info.ID] = n
	}
	// The jobs go in as the store takes new ones: within MaxJobs and each
	// node's MaxJobsPerNode as they come, forgetting in the store's order
	// (so the jobs kept do not depend on the snapshot's order), then
	// within MaxIterationTimes; a snapshot of a store with larger limits
	// loads into smaller ones. Nothing restored is counted as evicted.
	for i, sj := range s.Jobs {
		f := fmt.Sprintf("jobs[%d]", i)
		if err := checkID(f+".id", sj.ID); err != nil {
			return err
		}
		if sj.Source != "" {
			if err := checkID(f+".source", sj.Source); err != nil {
				return err
			}
		}
		j := &job{id: sj.ID, model: sj.Model, nodes: sj.Nodes, started: fromNanos(sj.Started), finished: sj.Finished, touched: fromNanos(sj.Touched), workers: map[int]*worker{}}
		for k, w := range sj.Workers {
			if w.Index < -1 || w.Index > MaxWorker {
				return fieldErr(fmt.Sprintf("%s.workers[%d].index", f, k), "%d, want -1..%d", w.Index, MaxWorker)
			}
			for q, x := range w.Seconds {
				if !usableSeconds(x) {
					return fieldErr(fmt.Sprintf("%s.workers[%d].seconds[%d]", f, k, q), "%v, want a time in (0, %v] seconds", x, MaxIterationSeconds)
				}
			}
			if len(w.Seconds) > st.cfg.ProfileIterations {
				w.Seconds = w.Seconds[:st.cfg.ProfileIterations]
			}
			if old := j.workers[w.Index]; old != nil {
				j.times -= len(old.Seconds)
			} else if len(j.workers) >= st.cfg.MaxJobWorkers {
				continue
			}
			j.workers[w.Index] = &worker{Node: w.Node, Seconds: w.Seconds, Dropped: w.Dropped}
			j.times += len(w.Seconds)
		}
		if old := st.jobs[sj.ID]; old != nil {
			st.forget(old, nil)
		}
		if sj.Source != "" {
			if q := st.bySrc[sj.Source]; q != nil && q.Len() >= st.cfg.MaxJobsPerNode {
				if forgetFirst(j, q.top()) {
					continue
				}
				st.forget(q.top(), nil)
			}
		}
		if len(st.jobs) >= st.cfg.MaxJobs {
			if forgetFirst(j, st.lru.top()) {
				continue
			}
			st.forget(st.lru.top(), nil)
		}
		st.add(j, sj.Source)
	}
	for st.times > st.cfg.MaxIterationTimes {
		st.forget(st.lru.top(), nil)
	}
	for m, p := range s.Profiles {
		if p == nil || !p.finite() {
			return fieldErr("profiles["+m+"]", "missing or not finite")
		}
		for _, row := range p.Rel {
			if len(row) != p.Workers {
				return fieldErr("profiles["+m+"].Rel", "a row of %d values for %d workers", len(row), p.Workers)
			}
		}
		st.byMod[m] = p
	}
	return nil
}

// Resume starts every node's stale timeout afresh at now. A server that
// restored a snapshot calls it at start: its own downtime is not the
// agents' silence, and without it every node would be stale (and avoided)
// until its agent reconnected, which the agents' backoff can take tens of
// seconds to do.
func (st *Store) Resume(now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, n := range st.nodes {
		n.seen = now
	}
}
