package routelog

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/drover-sched/drover/env/infer"
)

// ErrDeployment is returned (wrapped) by Replay.Check when a deployment
// is not the one the log's requests listed.
var ErrDeployment = errors.New("routelog: the deployment differs from the logged one")

// Replay is a route log's request stream, ready to be simulated under
// the logged answers (Logged) or under any router.
type Replay struct {
	// Records are the log's records in arrival order (stable: records of
	// one arrival time keep the log's order).
	Records []Record
	// Requests are the records' requests: request i is record i, arriving
	// (UnixNanos - Origin) / 1e9 seconds into the replay.
	Requests []infer.Request
	// Origin is the unix time in nanoseconds of the replay's time 0.
	Origin int64
}

// NewReplay orders recs by arrival and turns them into requests arriving
// relative to origin (unix nanoseconds; 0: the first arrival). recs must
// be valid (Read returns only valid records).
func NewReplay(recs []Record, origin int64) (*Replay, error) {
	if len(recs) == 0 {
		return nil, errors.New("routelog: no route records")
	}
	rs := slices.Clone(recs)
	slices.SortStableFunc(rs, func(a, b Record) int { return cmp.Compare(a.UnixNanos, b.UnixNanos) })
	if origin == 0 {
		origin = rs[0].UnixNanos
	}
	if rs[0].UnixNanos < origin {
		return nil, fmt.Errorf("routelog: the first arrival (%d ns) is before the origin (%d ns)", rs[0].UnixNanos, origin)
	}
	r := &Replay{Records: rs, Origin: origin, Requests: make([]infer.Request, len(rs))}
	for i := range rs {
		r.Requests[i] = rs[i].InferRequest(i, float64(rs[i].UnixNanos-origin)/1e9)
		if err := r.Requests[i].Validate(); err != nil {
			return nil, fmt.Errorf("routelog: record %s: %w", rs[i].ID, err)
		}
	}
	return r, nil
}

// Span returns the replay's last arrival in seconds.
func (r *Replay) Span() float64 { return r.Requests[len(r.Requests)-1].Arrival }

// Check reports whether cfg is the deployment the log's requests listed:
// as many instances, each with the logged role, GPU type and tensor
// parallelism (the first record's; later records listing other instances
// are errors too, since one replay has one deployment).
func (r *Replay) Check(cfg infer.Config) error {
	for k := range r.Records {
		in := r.Records[k].Instances
		if k > 0 && len(in) == len(r.Records[k-1].Instances) && sameConfig(in, r.Records[k-1].Instances) {
			continue
		}
		if len(in) != len(cfg.Instances) {
			return fmt.Errorf("%w: record %s lists %d instances, the deployment has %d", ErrDeployment, r.Records[k].ID, len(in), len(cfg.Instances))
		}
		for i, ic := range cfg.Instances {
			if in[i].Role != ic.Role.String() || in[i].GPU != ic.GPU || in[i].TP != ic.TP {
				return fmt.Errorf("%w: record %s's instance %d is %s %s x %d, the deployment's %s %s x %d", ErrDeployment,
					r.Records[k].ID, i, in[i].Role, in[i].GPU, in[i].TP, ic.Role, ic.GPU, ic.TP)
			}
		}
	}
	return nil
}

func sameConfig(a, b []Instance) bool {
	for i := range a {
		if a[i].Role != b[i].Role || a[i].GPU != b[i].GPU || a[i].TP != b[i].TP {
			return false
		}
	}
	return true
}

// Window returns the requests arriving in [start, start+d) seconds,
// arriving from 0 at start (their ids stay the records' indices); d <= 0
// is the whole replay.
func (r *Replay) Window(start, d float64) []infer.Request {
	if d <= 0 {
		return slices.Clone(r.Requests)
	}
	var out []infer.Request
	for _, q := range r.Requests {
		if q.Arrival >= start && q.Arrival < start+d {
			q.Arrival -= start
			out = append(out, q)
		}
	}
	return out
}

// SeedWindow returns seed's window of d seconds: its start drawn
// uniformly from [0, Span - d] (PCG seeded with seed), as drover infer
// eval draws a trace's windows; d <= 0 or d >= Span is the whole replay.
func (r *Replay) SeedWindow(seed uint64, d float64) (start float64, reqs []infer.Request) {
	if d <= 0 || d >= r.Span() {
		return 0, r.Window(0, 0)
	}
	rng := rand.New(rand.NewPCG(seed, 0x726f757465)) // "route"
	start = rng.Float64() * (r.Span() - d)
	return start, r.Window(start, d)
}

// LoggedRouter answers each request with its record's logged decision,
// and compares the simulator's instance states at each arrival with the
// logged ones.
type LoggedRouter struct {
	r *Replay
	// Compared counts the decisions whose states were compared, Matched
	// those whose every instance's pending tokens, reserved and used bytes,
	// queued and running tasks equal the logged ones, FirstMismatch the
	// first record that differed ("" when none did).
	Compared, Matched int
	FirstMismatch     string
}

// Logged returns a router answering with the logged decisions.
func (r *Replay) Logged() *LoggedRouter { return &LoggedRouter{r: r} }

// Route implements infer.Router.
func (l *LoggedRouter) Route(v *infer.View, q infer.Request) (infer.Decision, error) {
	if q.ID < 0 || q.ID >= len(l.r.Records) {
		return infer.Decision{}, fmt.Errorf("routelog: request %d is not in the log", q.ID)
	}
	rec := &l.r.Records[q.ID]
	if v.NumInstances() != len(rec.Instances) {
		return infer.Decision{}, fmt.Errorf("%w: record %s lists %d instances, the simulation has %d", ErrDeployment, rec.ID, len(rec.Instances), v.NumInstances())
	}
	l.Compared++
	same := true
	for i, st := range rec.State() {
		if v.Instance(i) != st {
			same = false
			break
		}
	}
	if same {
		l.Matched++
	} else if l.FirstMismatch == "" {
		l.FirstMismatch = rec.ID
	}
	return rec.Decision(), nil
}
