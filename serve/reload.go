package serve

import (
	"context"
	"errors"
	"fmt"
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
type Watcher struct {
	dir      string
	core     *Core
	clock    Clock
	interval time.Duration
	load     func(dir string, seq int) (*Version, error)
	mu       sync.Mutex
	judged   map[int]bool
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
	if a := w.core.Active(); a != nil {
		floor = a.Seq
	}
	if c := w.core.Candidate(); c != nil {
		floor = max(floor, c.Seq)
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

// consider loads and judges one version; it reports whether it was taken.
func (w *Watcher) consider(seq int, dir string) bool {
	v, err := w.load(dir, seq)
	k := w.core
	result := "refused"
	defer func() {
		if k.metrics != nil {
			k.metrics.reloads.WithLabelValues(result).Inc()
		}
	}()
	if err != nil {
		k.refuse(fmt.Sprintf("%s: %v", VersionName(seq), err))
		return false
	}
	active := k.Active()
	switch {
	case v.ViewLevel():
		k.Swap(v)
		result = "active"
	case !v.Meta.Converged && active != nil && active.Meta.Converged:
		k.refuse(fmt.Sprintf("%s: not converged (the gate's verdict in %s)", v.Name, checkpoints.MetaFile))
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
		}
		select {
		case <-ctx.Done():
			return
		case <-w.clock.After(w.interval):
		}
	}
}
