package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/drover-sched/drover/checkpoints"
)

// Watcher hot-reloads learned policies from a directory of numbered
// checkpoint versions, DIR/0001, DIR/0002, ... (any all-digit name; the
// number is the version). Each poll looks at the versions newer than the
// active one, newest first, that it has not judged yet; a directory whose
// meta.json has not appeared is still being written and is left for a
// later poll. A version is loaded and validated (Core.LoadVersion, by the
// environment its meta.json names: the probe forward pass of an
// observation-level checkpoint, the PolicyLoader of a view-level one)
// before it is used, then:
//
//   - a corrupt checkpoint is refused, and the active version keeps
//     serving;
//   - an unconverged one is refused when a converged version is active
//     (with none, it is loaded: Status shows it, and the heuristic answers
//     with "fallback: not-converged" until a converged one arrives);
//   - a converged one replaces the active version atomically, or, with a
//     canary fraction and a converged version active, becomes the canary
//     candidate;
//   - a view-level one (strn-rl, sas-rl), converged or not, replaces the
//     active version and starts in shadow: the gate of the core's
//     SwitchConfig, on the served arrivals, decides when it answers.
//
// The first poll, with no active version (a server starting, or
// restarting over a directory it served before), serves the newest
// converged version, and only when there is none the newest valid one:
// a newer unconverged version does not displace, across a restart, the
// converged one that was being served; it is refused as it would have
// been then. Each refusal is recorded in the core's status (LastRefused)
// and, with SetLog, written once as a line naming the version and why.
type Watcher struct {
	dir      string
	core     *Core
	clock    Clock
	interval time.Duration
	load     func(dir string, seq int) (*Version, error)
	mu       sync.Mutex
	judged   map[int]bool
	log      io.Writer
	lastErr  string // the last listing error logged
}

// SetLog makes the watcher write a line to out for each refusal (once per
// version) and each new error listing the directory (nil: none).
func (w *Watcher) SetLog(out io.Writer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log = out
}

// refuse records a refusal in the core's status and logs it.
func (w *Watcher) refuse(what string) {
	w.core.refuse(what)
	if w.log != nil {
		fmt.Fprintf(w.log, "drover serve: checkpoint refused: %s\n", what)
	}
}

// NewWatcher returns a watcher of dir feeding core, polling every
// interval (default 2 s) on core's clock.
func NewWatcher(dir string, core *Core, interval time.Duration) (*Watcher, error) {
	if dir == "" || core == nil {
		return nil, errors.New("serve: watcher needs a directory and a core")
	}
	if interval <= 0 {
		interval = 2 * time.Second
	}
	return &Watcher{dir: dir, core: core, clock: core.clock, interval: interval, load: core.LoadVersion, judged: map[int]bool{}}, nil
}

// Poll examines dir once. It returns the error of listing dir; refusals
// are recorded in the core's status and metrics, not returned.
func (w *Watcher) Poll() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := map[int]string{}
	ents, err := os.ReadDir(w.dir)
	if err != nil {
		return fmt.Errorf("serve: watch %s: %w", w.dir, err)
	}
	var vs []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if !e.IsDir() || err != nil || n <= 0 {
			continue
		}
		if _, dup := names[n]; dup {
			continue
		}
		names[n] = e.Name()
		vs = append(vs, n)
	}
	slices.Sort(vs)
	floor := 0
	a := w.core.Active()
	if a != nil {
		floor = a.Seq
	}
	if c := w.core.Candidate(); c != nil {
		floor = max(floor, c.Seq)
	}
	if a == nil {
		w.first(vs, names)
		return nil
	}
	for i := len(vs) - 1; i >= 0 && vs[i] > floor; i-- {
		seq := vs[i]
		if w.judged[seq] {
			continue
		}
		dir := filepath.Join(w.dir, names[seq])
		if _, err := os.Stat(filepath.Join(dir, checkpoints.MetaFile)); err != nil {
			continue // still being written: meta.json appears last
		}
		w.judged[seq] = true
		if w.consider(seq, dir) {
			return nil
		}
	}
	return nil
}

// first chooses the version to serve when none is active: the newest
// converged (or view-level: see Watcher) one, else the newest valid one. The versions newer than the
// one chosen are refused (and judged: later polls skip them).
func (w *Watcher) first(vs []int, names map[int]string) {
	var fallback *Version // the newest valid unconverged version
	var passed []*Version // unconverged versions newer than the converged one found
	for i := len(vs) - 1; i >= 0; i-- {
		seq := vs[i]
		if w.judged[seq] {
			continue
		}
		dir := filepath.Join(w.dir, names[seq])
		if _, err := os.Stat(filepath.Join(dir, checkpoints.MetaFile)); err != nil {
			continue // still being written
		}
		w.judged[seq] = true
		v, err := w.load(dir, seq)
		if err != nil {
			w.reloaded("refused")
			w.refuse(fmt.Sprintf("%s: %v", VersionName(seq), err))
			continue
		}
		if !v.Meta.Converged && !v.ViewLevel() {
			if fallback == nil {
				fallback = v
			}
			passed = append(passed, v)
			continue
		}
		w.take(v)
		for _, p := range passed {
			w.reloaded("refused")
			w.refuse(fmt.Sprintf("%s: not converged (the gate's verdict in %s); serving %s, the newest converged version", p.Name, checkpoints.MetaFile, v.Name))
		}
		return
	}
	if fallback != nil {
		// No converged version: the newest valid one; the older
		// unconverged ones are passed over silently, as they would
		// have been had they arrived in order.
		w.take(fallback)
	}
}

// take makes v active.
func (w *Watcher) take(v *Version) {
	w.core.Swap(v)
	w.reloaded("active")
}

// reloaded counts a reload's result in the core's metrics.
func (w *Watcher) reloaded(result string) {
	if m := w.core.metrics; m != nil {
		m.reloads.WithLabelValues(result).Inc()
	}
}

// consider loads and judges one version; it reports whether it was taken.
func (w *Watcher) consider(seq int, dir string) bool {
	v, err := w.load(dir, seq)
	k := w.core
	result := "refused"
	defer func() { w.reloaded(result) }()
	if err != nil {
		w.refuse(fmt.Sprintf("%s: %v", VersionName(seq), err))
		return false
	}
	active := k.Active()
	switch {
	case v.ViewLevel():
		k.Swap(v)
		result = "active"
	case !v.Meta.Converged && active != nil && active.Meta.Converged:
		w.refuse(fmt.Sprintf("%s: not converged (the gate's verdict in %s)", v.Name, checkpoints.MetaFile))
		return false
	case v.Meta.Converged && active != nil && active.Meta.Converged && k.canary > 0:
		k.SetCandidate(v)
		result = "candidate"
	default:
		k.Swap(v)
		result = "active"
	}
	return true
}

// Run polls at once and then every interval until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	for {
		if err := w.Poll(); err != nil {
			w.core.refuse(err.Error())
			w.mu.Lock()
			if w.log != nil && err.Error() != w.lastErr {
				fmt.Fprintf(w.log, "drover serve: checkpoint directory: %v\n", err)
			}
			w.lastErr = err.Error()
			w.mu.Unlock()
		} else {
			w.mu.Lock()
			w.lastErr = ""
			w.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-w.clock.After(w.interval):
		}
	}
}
