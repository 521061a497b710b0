package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drover-sched/drover/policies/compare"
	"github.com/drover-sched/drover/serve/logreplay"
)

// logReplayFlags are drover eval's flags that --log --policies uses,
// checked and parsed.
type logReplayFlags struct {
	out            string
	parallel, bins int
	quiet          bool
	args           []string
	// replay is the replay the flags describe: --log, --policies
	// (evalContenders), --seeds (nil when not given: the recorded run's
	// seed), --stateless, and for a log without a manifest (a live
	// cluster's) eval's cluster and model flags.
	replay logreplay.Config
}

// evalLogReplay re-scores a recorded run (logreplay.Prepare): it replays
// the served workload under each policy and under the served policy as
// the server answers it, and prints the comparison table with the logged
// figures as logreplay.ServedLogName and the served policy's match.
func evalLogReplay(f logReplayFlags, stdout, stderr io.Writer) error {
	r, err := logreplay.Prepare(f.replay)
	if err != nil {
		return err
	}
	printReplay(stdout, r, f.replay)
	dir, err := evalOutDir(f.out, "eval-log-"+filepath.Base(filepath.Clean(f.replay.Dir)))
	if err != nil {
		return err
	}
	results, _, err := compareWithProgress(compare.Config{Policies: r.Policies, Seeds: r.Seeds, Options: r.Options, Parallel: f.parallel}, []compare.Band{{Name: "fit"}}, f.quiet, stderr)
	if err != nil {
		return err
	}
	res := results[0]
	logged := r.AddLogged(res)
	fmt.Fprintln(stdout)
	if err := compare.WriteTable(stdout, res); err != nil {
		return err
	}
	replay := res.Policies[1].AvgJCT.Mean
	diff := replay/logged.Summary.AvgJCT - 1
	fmt.Fprintf(stdout, "\n%s: the one logged run (repeated for each seed so that it pairs with the replays; no TTA or stragglers in a log)\n", logreplay.ServedLogName)
	fmt.Fprintf(stdout, "match      served %s: avg JCT %.2f s logged, %.2f s replayed (%+.3f%%)\n", r.Log.Served, logged.Summary.AvgJCT, replay, 100*diff)

	meta := compare.Meta{Workload: "served log " + f.replay.Dir, Model: r.ModelDesc, Cluster: r.ClusterDesc, Profiles: r.ProfilesSrc, Command: "drover eval " + strings.Join(f.args, " ")}
	title := fmt.Sprintf("%s, %d seeds", filepath.Base(filepath.Clean(f.replay.Dir)), len(r.Seeds))
	return writeEvalFiles(stdout, dir, res, meta, title, f.bins)
}

// printReplay prints what the replay read and will run.
func printReplay(stdout io.Writer, r *logreplay.Replay, c logreplay.Config) {
	sl := r.Log
	fmt.Fprintf(stdout, "log        %s (%d decision-log files, %d telemetry files, %d samples", c.Dir, sl.Files, sl.TelemetryFiles, sl.Samples)
	if r.UnknownSamples > 0 {
		fmt.Fprintf(stdout, ", %d of nodes the cluster lacks", r.UnknownSamples)
	}
	fmt.Fprintln(stdout, ")")
	if len(sl.Partial) > 0 {
		fmt.Fprintf(stdout, "unsealed   %s: %d records read from the write-ahead log (a live server's current file, sealed every -log-seal and on shutdown)\n", strings.Join(sl.Partial, ", "), sl.Tail)
	}
	fmt.Fprintf(stdout, "workload   %d of %d logged jobs replayed", len(r.Workload.Jobs), sl.Jobs())
	if sl.FromOutcomes > 0 {
		fmt.Fprintf(stdout, ", %d with run times from their outcomes (no expected run time logged)", sl.FromOutcomes)
	}
	if len(sl.Dropped) > 0 {
		var parts []string
		for k, v := range sl.Dropped {
			parts = append(parts, fmt.Sprintf("%d %s", v, k))
		}
		slices.Sort(parts)
		fmt.Fprintf(stdout, "; left out: %s", strings.Join(parts, ", "))
	}
	fmt.Fprintf(stdout, "\ncluster    %s\nmodel      %s (profiles: %s)\n", r.ClusterDesc, r.ModelDesc, r.ProfilesSrc)
	printServed(stdout, r, c.Stateless)
	fmt.Fprintf(stdout, "policies   %s\nseeds      %v\n", strings.Join(contenderNames(r.Policies), ", "), r.Seeds)
}

// printServed prints who served the log: the one policy, or each segment
// of decisions with one policy in charge (a run whose gate switched) and
// the checkpoints of the learned versions the replay asks.
func printServed(stdout io.Writer, r *logreplay.Replay, stateless bool) {
	sl := r.Log
	if len(sl.Segments) == 1 {
		p := sl.Segments[0].Policy
		fmt.Fprintf(stdout, "served     %s (%d jobs placed; %s)\n", p, sl.Sources[p], servedMode(stateless))
	} else {
		fmt.Fprintf(stdout, "served     %s (%s; each request asked of the policy that answered it in the log)\n", sl.Served, servedMode(stateless))
	}
	const most = 20
	for i, s := range sl.Segments {
		if len(sl.Segments) == 1 && s.Decisions() == s.Answered {
			break
		}
		if i == most {
			fmt.Fprintf(stdout, "           ... %d more segments\n", len(sl.Segments)-most)
			break
		}
		fmt.Fprintf(stdout, "segment    decisions %d-%d (%s to %s): %s answered %d, placed %d jobs", s.First, s.Last,
			s.From.UTC().Format(time.RFC3339), s.To.UTC().Format(time.RFC3339), s.Policy, s.Answered, s.Placed)
		if len(s.Fallbacks) > 0 {
			var parts []string
			for k, n := range s.Fallbacks {
				parts = append(parts, fmt.Sprintf("%s %d", k, n))
			}
			slices.Sort(parts)
			fmt.Fprintf(stdout, "; on fallback %s", strings.Join(parts, ", "))
		}
		if s.NoRoom > 0 {
			fmt.Fprintf(stdout, "; %d not placed for want of room", s.NoRoom)
		}
		fmt.Fprintln(stdout)
	}
	for _, v := range r.Versions {
		fmt.Fprintf(stdout, "checkpoint %s: %s (%s)\n", v.Source, v.Dir, v.Env)
	}
}

func servedMode(stateless bool) string {
	if stateless {
		return "replayed as a stateless server answers"
	}
	return "replayed as a stateful server answers, drover serve's default"
}

func contenderNames(cs []compare.Policy) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}
