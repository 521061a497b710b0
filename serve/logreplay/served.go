package logreplay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/compare"
	"github.com/drover-sched/drover/policies/direct"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/remote"
	"github.com/drover-sched/drover/serve/state"
)

// Prefixes of a decision's source: a heuristic ("heuristic:sas") or a
// version of a learned policy ("learned@v3").
const (
	heuristicPrefix = "heuristic:"
	learnedPrefix   = "learned@"
)

// failureFallbacks are the fallback reasons of a heuristic answer that
// stood in for the learned policy in charge (it missed its deadline,
// failed, gave an infeasible answer, or the server was overloaded), as
// opposed to one the heuristic gave in charge (no model, a model not
// converged or in shadow).
var failureFallbacks = []string{serve.FallbackDeadline, serve.FallbackError, serve.FallbackInfeasible, serve.FallbackOverload, serve.FallbackMismatch}

// loggedDecision is one decision of the log, for the replay's routing.
type loggedDecision struct {
	job      string
	at       time.Time
	source   string // who answered it
	fallback string
	charge   string // who was in charge (Segment.Policy)
}

// Segment is a run of consecutive decisions of a served log with one
// policy in charge: the one that answered them, or that a fallback stood
// in for (the heuristic's answer when the learned policy in charge missed
// its deadline, failed, or gave an infeasible answer, or when the server
// was overloaded). A log of a run whose gate switched to a learned policy
// has a segment of the heuristic, then one of the learned policy.
type Segment struct {
	// Policy is the policy in charge ("heuristic:sas", "learned@v1").
	Policy string
	// First and Last are the 1-based indices of its first and last
	// decisions among the log's decisions in time order; From and To are
	// their times.
	First, Last int
	From, To    time.Time
	// Answered counts the decisions Policy answered itself, and Placed the
	// jobs it placed. Fallbacks counts the others by their source and
	// fallback reason ("heuristic:sas (deadline)"), NoRoom those no policy
	// was asked about (the job did not fit in the free GPUs).
	Answered, Placed int
	Fallbacks        map[string]int
	NoRoom           int
}

// Decisions is the count of decisions in s.
func (s *Segment) Decisions() int { return s.Last - s.First + 1 }

// inCharge is the policy in charge of decision d, the one before's prev.
func inCharge(source, fallback, shadow, prev string) string {
	switch {
	case strings.HasPrefix(source, learnedPrefix):
		return source
	case fallback == serve.FallbackNoRoom:
	case slices.Contains(failureFallbacks, fallback):
		if strings.HasPrefix(shadow, learnedPrefix) {
			return shadow // a view-level learned policy answering failed
		}
	default:
		return source
	}
	if prev != "" {
		return prev
	}
	return source
}

// segment groups the log's decisions (in time order, charge set) into
// segments.
func segment(ds []loggedDecision, placed map[int]bool) []Segment {
	var out []Segment
	for i, d := range ds {
		if len(out) == 0 || out[len(out)-1].Policy != d.charge {
			out = append(out, Segment{Policy: d.charge, First: i + 1, From: d.at, Fallbacks: map[string]int{}})
		}
		s := &out[len(out)-1]
		s.Last, s.To = i+1, d.at
		switch {
		case d.fallback == serve.FallbackNoRoom:
			s.NoRoom++
		case d.source == d.charge:
			s.Answered++
			if placed[i] {
				s.Placed++
			}
		default:
			s.Fallbacks[d.source+" ("+d.fallback+")"]++
		}
	}
	return out
}

// describeServed says who served a log of segments: the one policy, the
// policies in turn, or, for many segments, the policies and the count.
func describeServed(segs []Segment) string {
	var names []string
	for _, s := range segs {
		names = append(names, s.Policy)
	}
	if len(segs) <= 4 {
		return strings.Join(names, ", then ")
	}
	slices.Sort(names)
	return fmt.Sprintf("%s in turn (%d segments)", strings.Join(slices.Compact(names), " and "), len(segs))
}

// heuristicOf is the heuristic of the log's server ("sas"): the most
// frequent heuristic among the sources and the learned answers' shadows,
// overload answers (the cheap heuristic) left out.
func heuristicOf(ds []loggedDecision, shadows map[string]int) string {
	count := map[string]int{}
	for k, v := range shadows {
		count[k] += v
	}
	for _, d := range ds {
		if strings.HasPrefix(d.source, heuristicPrefix) && d.fallback != serve.FallbackOverload {
			count[d.source]++
		}
	}
	best := ""
	for k, n := range count {
		if n > count[best] || n == count[best] && k < best {
			best = k
		}
	}
	return strings.TrimPrefix(best, heuristicPrefix)
}

// learnedSources are the learned versions that answered some decision.
func (s *ServedLog) learnedSources() []string {
	var out []string
	for _, d := range s.decisions {
		if strings.HasPrefix(d.source, learnedPrefix) && !slices.Contains(out, d.source) {
			out = append(out, d.source)
		}
	}
	return out
}

// route returns the source the replay asks for a request about job at
// time t: the logged decision's of that job at t, when the log has one
// (the replay is where the served run was), else the policy in charge at
// t (the last decision's at or before t; the first's before it).
func (s *ServedLog) route(job string, t time.Time) string {
	for _, i := range s.byJob[job] {
		if s.decisions[i].at.Equal(t) {
			return s.decisions[i].source
		}
	}
	i := sort.Search(len(s.decisions), func(i int) bool { return s.decisions[i].at.After(t) }) - 1
	return s.decisions[max(i, 0)].charge
}

// ServedVersion is a learned policy's version that answered decisions of
// a served log, as the replay loads it.
type ServedVersion struct {
	// Source is the log's name of it ("learned@v3"), Seq its number.
	Source string
	Seq    int
	// Dir is its checkpoint directory, Env the checkpoint's environment.
	Dir, Env string
}

// versionDir finds version seq in the server's checkpoint directory dir,
// as drover serve reads it: one checkpoint (version 1), or numbered
// versions (any all-digit name; the number is the version).
func versionDir(dir string, seq int) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, checkpoints.MetaFile)); err == nil {
		if seq != 1 {
			return "", fmt.Errorf("%s is one checkpoint, which drover serve serves as v1, not v%d", dir, seq)
		}
		return dir, nil
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range es {
		n, err := strconv.Atoi(e.Name())
		if e.IsDir() && err == nil && n == seq && strings.Trim(e.Name(), "0123456789") == "" {
			return filepath.Join(dir, e.Name()), nil
		}
	}
	return "", fmt.Errorf("%s has no version %d (a directory such as %04d)", dir, seq, seq)
}

// servedVersions finds and loads, to check them, the learned versions
// that answered decisions of the log. It is an error when some did and
// c.Checkpoints is not set: the error names the flag and the versions.
func (r *Replay) servedVersions(c Config, heuristic string) error {
	learned := r.Log.learnedSources()
	if len(learned) == 0 {
		return nil
	}
	if c.Checkpoints == "" {
		var parts []string
		for _, src := range learned {
			n, first := 0, time.Time{}
			for _, d := range r.Log.decisions {
				if d.source == src {
					if n == 0 {
						first = d.at
					}
					n++
				}
			}
			parts = append(parts, fmt.Sprintf("%s answered %d of the %d decisions (the first at %s)", src, n, len(r.Log.decisions), first.UTC().Format(time.RFC3339)))
		}
		return fmt.Errorf("--log %s: %s; replaying them as served needs the checkpoints: give --served-checkpoints, the directory drover serve -checkpoints read (one checkpoint, served as v1, or its numbered versions)",
			c.Dir, strings.Join(parts, "; "))
	}
	k, err := serve.NewCore(serve.WithHeuristic(heuristic), serve.WithPolicyLoader(c.loader()))
	if err != nil {
		return err
	}
	defer k.Close()
	for _, src := range learned {
		seq, err := strconv.Atoi(strings.TrimPrefix(src, learnedPrefix+"v"))
		if err != nil || !strings.HasPrefix(src, learnedPrefix+"v") {
			return fmt.Errorf("--log %s: decision source %q: want learned@vN", c.Dir, src)
		}
		dir, err := versionDir(c.Checkpoints, seq)
		if err != nil {
			return fmt.Errorf("--served-checkpoints: %s answered decisions of the log: %w", src, err)
		}
		v, err := k.LoadVersion(dir, seq)
		if err != nil {
			return fmt.Errorf("--served-checkpoints: %s: %w", src, err)
		}
		if !v.ViewLevel() && !v.Meta.Converged {
			return fmt.Errorf("--served-checkpoints: %s is %s, an unconverged %s checkpoint, which drover serve never lets answer, yet the log says it answered: is %s the directory the server read?",
				src, dir, v.Meta.Env, c.Checkpoints)
		}
		r.Versions = append(r.Versions, ServedVersion{Source: src, Seq: seq, Dir: dir, Env: v.Meta.Env})
	}
	return nil
}

// loader is c's PolicyLoader, policies/direct's by default (drover
// serve's).
func (c Config) loader() serve.PolicyLoader {
	if c.Loader != nil {
		return c.Loader
	}
	return direct.Load
}

// servedContender replays the served policy as the server answers it: a
// fresh in-process serve.Core with the log's heuristic per run, stateful
// like drover serve unless stateless, asked through serve/remote with the
// recorded run's epoch. With learned versions (r.Versions), the core
// holds them and each request is answered by the policy that answered it
// in the log (ServedLog.route): a view-level version is made active and
// set answering (serve.Core.SetAnswering), an observation-level one made
// active; the heuristic answers the others.
func (r *Replay) servedContender(c Config, heuristic string, epoch time.Time, profiles map[string]env.Profile) compare.Policy {
	label := "served " + heuristic + " (replay)"
	if len(r.Versions) > 0 {
		names := []string{}
		for _, s := range r.Log.Segments {
			n := strings.TrimPrefix(s.Policy, heuristicPrefix)
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		label = "served " + strings.Join(names, "+") + " (replay)"
	}
	versions, loader, sl := r.Versions, c.loader(), r.Log
	return compare.Policy{Name: label, New: func(uint64) (policies.Policy, error) {
		// The learned policy gets all the time it needs: a decision that
		// missed its deadline when served is routed to the heuristic.
		opts := []serve.Option{serve.WithHeuristic(heuristic), serve.WithPolicyLoader(loader), serve.WithModelTimeout(time.Hour)}
		if !c.Stateless {
			st, err := state.New(state.Config{})
			if err != nil {
				return nil, err
			}
			opts = append(opts, serve.WithState(st, profiles))
		}
		k, err := serve.NewCore(opts...)
		if err != nil {
			return nil, err
		}
		var client pb.SchedulerClient = coreClient{k}
		if len(versions) > 0 {
			rc := &routedClient{coreClient: coreClient{k}, log: sl, versions: map[string]*serve.Version{}}
			for _, v := range versions {
				if rc.versions[v.Source], err = k.LoadVersion(v.Dir, v.Seq); err != nil {
					return nil, err
				}
			}
			client = rc
		}
		return remote.New(remote.Config{Client: client, Epoch: epoch, Timeout: time.Hour})
	}}
}

// routedClient is a coreClient whose core answers each Place request with
// the policy the served log says answered it.
type routedClient struct {
	coreClient
	log      *ServedLog
	versions map[string]*serve.Version // by source
}

// Place implements pb.SchedulerClient.
func (c *routedClient) Place(ctx context.Context, req *pb.PlaceRequest, opts ...grpc.CallOption) (*pb.PlaceResponse, error) {
	src := c.log.route(req.GetJob().GetId(), time.Unix(0, req.GetUnixNanos()))
	k := c.k
	if v := c.versions[src]; v != nil {
		if k.Active() != v {
			k.Swap(v)
		}
		if v.ViewLevel() {
			if err := k.SetAnswering(true, "answered it in the served log"); err != nil {
				return nil, err
			}
		}
	} else if a := k.Active(); a != nil {
		if a.ViewLevel() {
			if err := k.SetAnswering(false, "answered it in the served log"); err != nil {
				return nil, err
			}
		} else {
			k.Swap(nil)
		}
	}
	return c.coreClient.Place(ctx, req, opts...)
}
