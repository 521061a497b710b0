package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
)

// traceTraining is a trace file as sas-rl's and strn-rl's training
// workload (train.workload: a path).
type traceTraining struct {
	newJobs  func(seed uint64) []env.JobSpec
	newModel func(seed uint64) env.Model
	late     evalWorkload // the jobs after the split
	desc     string
}

// traceWorkload splits the trace at path after the first split of its
// jobs (in submit order). Each training episode is a window of
// datasets.DefaultJobs consecutive jobs of the first part, starting at an
// offset drawn from the episode's seed, its submit times rebased to 0;
// the rest of the trace is the held-out evaluation workload "late" on the
// same cluster, cut to its first lateJobs jobs (LateWorkload). With rho > 0 each window,
// and the late part, is rescaled to offered load rho on the cluster
// (datasets.Workload.ScaleLoad), so that a trace from a larger cluster
// (Philly's) loads the training cluster as the held-out ones are loaded.
// The model uses the profiles in dir (train.profiles) or, with dir empty,
// those drover sim finds for the trace (the measured ones near it, if any),
// as the evaluation does.
func traceWorkload(path string, split, rho float64, cluster env.Cluster, dir string) (traceTraining, error) {
	if !(split > 0 && split < 1) {
		return traceTraining{}, fmt.Errorf("train.split %v: want a share in (0, 1)", split)
	}
	w, err := datasets.Load(path, datasets.FormatAuto, datasets.Options{})
	if err != nil {
		return traceTraining{}, fmt.Errorf("train.workload: %w", err)
	}
	nodes, gpus := len(cluster.Nodes), cluster.TotalGPUs()
	cut, rest, err := LateWorkload(w, split, rho, gpus)
	if err != nil {
		return traceTraining{}, fmt.Errorf("train.workload %s: %w", path, err)
	}
	profiles, pdesc, err := trace.Profiles(dir, path)
	if err != nil {
		return traceTraining{}, fmt.Errorf("train.profiles: %w", err)
	}
	// Jobs larger than the cluster could never start.
	var first []datasets.Job
	for _, j := range w.Jobs[:cut] {
		if j.GPUs <= gpus {
			first = append(first, j)
		}
	}
	if len(first) == 0 {
		return traceTraining{}, fmt.Errorf("train.workload %s: none of the first %d jobs fits the %d-GPU training cluster", path, cut, gpus)
	}
	win := min(datasets.DefaultJobs, len(first))
	// The episodes share one reference, as builtinEnvConfig's do.
	ref, err := trace.Stragglers{}.NewReference(nodes)
	if err != nil {
		return traceTraining{}, err
	}
	t := traceTraining{
		newJobs: func(seed uint64) []env.JobSpec {
			off := rand.New(rand.NewPCG(seed, 0x77696e)).IntN(len(first) - win + 1)
			jobs := &datasets.Workload{Jobs: slices.Clone(first[off : off+win])}
			rebase(jobs.Jobs)
			if rho > 0 {
				jobs.ScaleLoad(gpus, rho)
			}
			return trace.Specs(jobs)
		},
		newModel: func(s uint64) env.Model {
			st, err := trace.Stragglers{Seed: s, Reference: ref}.Workers(nodes)
			if err != nil {
				panic(err) // the embedded background parameters are valid
			}
			return &env.Drover{Profiles: profiles, GPUsPerNode: cluster.MaxNodeGPUs(), Workers: st}
		},
		late: evalWorkload{name: "late", workload: path, jobs: rest, fixed: &cluster},
		desc: fmt.Sprintf("windows of %d consecutive jobs from the first %d of %s's %d jobs (%d of them fit the cluster; profiles: %s); the %d jobs after them are held out as \"late\"",
			win, cut, path, len(w.Jobs), len(first), pdesc, len(rest.Jobs)),
	}
	if rho > 0 {
		t.desc += fmt.Sprintf("; each window and the late part at offered load %g", rho)
	}
	return t, nil
}

// LateWorkload splits w after the first share split of its jobs (in
// submit order, rounded) and returns the cut and the held-out "late" part
// that a run with a trace workload (Config.Workload, Config.Split) judges: the jobs after the cut, at most lateJobs of them, their
// submit times rebased to 0 and, with rho > 0, rescaled to offered load rho
// on gpus GPUs. drover trace convert -late writes the same part. w is not
// changed.
func LateWorkload(w *datasets.Workload, split, rho float64, gpus int) (int, *datasets.Workload, error) {
	if !(split > 0 && split < 1) {
		return 0, nil, fmt.Errorf("split %v: want a share in (0, 1)", split)
	}
	cut := int(math.Round(split * float64(len(w.Jobs))))
	if cut < 1 || cut >= len(w.Jobs) {
		return 0, nil, fmt.Errorf("%d jobs cannot be split at %v", len(w.Jobs), split)
	}
	rest := w.Clone()
	rest.Jobs = rest.Jobs[cut:]
	if len(rest.Jobs) > lateJobs {
		rest.Jobs = rest.Jobs[:lateJobs]
	}
	rebase(rest.Jobs)
	if rho > 0 {
		rest.ScaleLoad(gpus, rho)
	}
	return cut, rest, nil
}

// lateJobs caps a trace workload's held-out "late" part, so that a long
// trace (Philly's 82k jobs) is judged on a window as long as the other
// held-out workloads rather than on months of jobs.
const lateJobs = 2000

// rebase shifts the jobs' submit times so that the first is 0.
func rebase(jobs []datasets.Job) {
	if len(jobs) == 0 {
		return
	}
	t0 := jobs[0].Submit
	for i := range jobs {
		jobs[i].Submit -= t0
	}
}
