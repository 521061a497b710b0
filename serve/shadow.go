package serve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drover-sched/drover/env"
	pb "github.com/drover-sched/drover/serve/proto"
)

// viewResult is what a view-level learned policy decided.
type viewResult struct {
	alloc []int
	sync  env.Sync
	err   error
}

// decideView decides with a view-level learned version v active: the
// heuristic and v both decide (v on a goroutine of its own, within the
// deadline budget); the one that answers (Core.answering) gives the
// answer and the other is the shadow decision. v's failures fall back to
// the heuristic when v answers, and are only counted when it is the
// shadow. Overload and no room answer as decide does, without v.
func (k *Core) decideView(ctx context.Context, s *snapshot, v *Version, d *decision, overloaded bool) (decision, error) {
	k.sw.observe(s, k.clock.Now())
	if free := s.freeGPUs(); s.job.GPUs > free {
		d.fallback = FallbackNoRoom
		d.note = fmt.Sprintf("no room: %d free GPUs for %d workers", free, s.job.GPUs)
		return *d, nil
	}
	if overloaded {
		d.fallback, d.policy = FallbackOverload, cheapPolicy
		alloc, sy, err := k.runCheap(s)
		if err != nil {
			return *d, fmt.Errorf("serve: heuristic: %w", err)
		}
		d.alloc, d.sync = alloc, sy
		return *d, nil
	}
	answer := k.answering(v)
	budget := k.viewBudget(ctx)
	mctx, cancel := context.WithTimeout(ctx, max(budget, 0))
	defer cancel()
	ch, failure := k.startView(s, v, budget, mctx.Done())

	heurPolicy := k.heurPolicy
	alloc, sy, herr := k.runHeuristic(s)
	if errors.Is(herr, env.ErrCancelled) {
		s.stopped = true // Place answers the context's error
		return *d, nil
	}
	if herr != nil {
		d.note = fmt.Sprintf("%s failed: %v", k.heurName, herr)
		heurPolicy = cheapPolicy
		alloc, sy, herr = k.runCheap(s)
	}

	var r viewResult
	if ch != nil {
		select {
		case r = <-ch:
		case <-mctx.Done():
			failure, d.abandoned = FallbackDeadline, true
		}
		if failure == "" {
			switch {
			case errors.Is(r.err, context.DeadlineExceeded), errors.Is(r.err, env.ErrCancelled):
				failure = FallbackDeadline
			case r.err != nil:
				failure = FallbackError
			case r.alloc != nil && s.checkAlloc(r.alloc) != nil:
				failure = FallbackInfeasible
			}
		}
	}
	result := failure
	if result == "" {
		result = shadowHeld
		if r.alloc != nil {
			result = shadowDecided
		}
	}
	if answer && failure == "" {
		// The learned policy answers; the heuristic is the shadow.
		d.source, d.policy, d.alloc, d.sync = pb.Source_SOURCE_LEARNED, "learned@"+v.Name, r.alloc, r.sync
		d.reason = k.sw.on.Load().reason
		if k.sw.cfg.Mode == SwitchConverged {
			d.reason = "converged checkpoint"
		}
		if r.alloc == nil {
			d.reason = "held by learned@" + v.Name + " this round"
		}
		d.shadow = heurPolicy
		if herr != nil {
			d.shadowFailure = FallbackError
		} else {
			d.shadowAlloc, d.shadowSync = alloc, sy
		}
		v.decided.Add(1)
		return *d, nil
	}
	// The heuristic answers; the learned policy is the shadow.
	k.sw.shadow[result].Add(1)
	if k.metrics != nil {
		k.metrics.shadow.WithLabelValues(result).Inc()
	}
	d.shadow, d.shadowFailure = "learned@"+v.Name, failure
	if failure == "" {
		d.shadowAlloc, d.shadowSync = r.alloc, r.sync
	}
	switch {
	case answer:
		d.fallback = failure
	case k.sw.cfg.Mode == SwitchConverged:
		d.fallback = FallbackNotConverged
	default:
		d.fallback = FallbackShadow
	}
	if herr != nil {
		return *d, fmt.Errorf("serve: heuristic: %w", herr)
	}
	d.policy, d.alloc, d.sync = heurPolicy, alloc, sy
	return *d, nil
}

// viewBudget is the learned policy's time: the model timeout, or less
// before the request's deadline minus the margin.
func (k *Core) viewBudget(ctx context.Context) (budget time.Duration) {
	budget = k.modelTimeout
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, dl.Sub(k.clock.Now())-k.margin)
	}
	return budget
}

// startView starts v on the snapshot in a goroutine of its own and
// returns the channel its result arrives on, given budget, or nil and why it was not
// started (no time left, every model slot taken). The goroutine reads the
// snapshot and writes nothing in it; the policy's view has done as its
// Done, so that it stops computing once nobody waits for it.
func (k *Core) startView(s *snapshot, v *Version, budget time.Duration, done <-chan struct{}) (<-chan viewResult, string) {
	if budget <= 0 {
		return nil, FallbackDeadline
	}
	select {
	case k.modelSem <- struct{}{}:
	default:
		return nil, FallbackOverload
	}
	ch := make(chan viewResult, 1)
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		defer func() { <-k.modelSem }()
		defer func() {
			if r := recover(); r != nil {
				ch <- viewResult{err: fmt.Errorf("serve: learned policy panicked: %v", r)}
			}
		}()
		p := v.NewPolicy()
		alloc, sy, err := schedule(p, s, done)
		ch <- viewResult{alloc: alloc, sync: sy, err: err}
	}()
	return ch, ""
}
