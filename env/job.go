package env

import (
	"fmt"
	"slices"
)

// JobSpec is what a workload says about one job before it runs.
type JobSpec struct {
	// Name identifies the job; unique within a workload.
	Name string
	// Submit is the arrival time in seconds since the start of the run.
	Submit float64
	// GPUs is the number of GPUs (workers) the job asks for.
	GPUs int
	// Duration is the job's measured run time in seconds on its requested
	// GPUs, or 0 when the workload gives none (the model then derives the
	// amount of work from the job's model profile).
	Duration float64
	// Model names the job's model profile (for example "cifar10").
	Model string
	// BatchSize is the job's global batch size; 0 picks the model's default.
	BatchSize int
	// Arch is the job's communication architecture (ring all-reduce by
	// default).
	Arch Arch
	// PSShards is the number of parameter servers of a PS job (default 1).
	PSShards int
}

func (s *JobSpec) validate() error {
	switch {
	case s.Name == "":
		return fmt.Errorf("%w: empty name", ErrBadJob)
	case s.GPUs <= 0:
		return fmt.Errorf("%w: job %s: GPUs = %d, want > 0", ErrBadJob, s.Name, s.GPUs)
	case !(s.Submit >= 0 && s.Submit <= MaxTime):
		return fmt.Errorf("%w: job %s: submit = %v s, want a time in [0, %g] s", ErrBadJob, s.Name, s.Submit, float64(MaxTime))
	case !(s.Duration >= 0 && s.Duration <= MaxTime):
		return fmt.Errorf("%w: job %s: duration = %v s, want a time in [0, %g] s", ErrBadJob, s.Name, s.Duration, float64(MaxTime))
	case s.PSShards < 0:
		return fmt.Errorf("%w: job %s: PS shards = %d, want >= 0", ErrBadJob, s.Name, s.PSShards)
	case s.BatchSize < 0:
		return fmt.Errorf("%w: job %s: batch size = %d, want >= 0", ErrBadJob, s.Name, s.BatchSize)
	}
	return nil
}

// JobState is where a job is in its life cycle.
type JobState uint8

// The job states.
const (
	// Waiting: not yet submitted.
	Waiting JobState = iota
	// Pending: submitted, holds no GPUs.
	Pending
	// Running: holds GPUs (possibly still paying its restart delay).
	Running
	// Done: reached its target and left the cluster.
	Done
)

var stateNames = [...]string{"waiting", "pending", "running", "done"}

// String returns the JobState's name as the command line and logs spell it.
func (s JobState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("JobState(%d)", s)
}

// Job is the simulator's record of one job. Policies read it through a
// View; only the simulator writes it.
type Job struct {
	// ID is the job's index in the workload (arrival order).
	ID int
	// Spec is the job as submitted.
	Spec JobSpec
	// State is the job's current state.
	State JobState
	// Alloc lists the node of each worker; nil unless Running. Runs of
	// equal entries are one node's share (see Placement).
	Alloc []int
	// FirstStart is when the job first got GPUs (NaN if never).
	FirstStart float64
	// Finish is when the job reached its target (NaN if not yet).
	Finish float64
	// Starts counts placements; Restarts (re-placements) is Starts-1.
	Starts int
	// Preemptions counts the times the job lost all its GPUs before finishing.
	Preemptions int
	// Attained is the GPU-seconds the job has held so far (restart delays
	// included, as in the Pollux simulator's attained service).
	Attained float64
	// Progress is the fraction of the job's work done, in [0, 1].
	Progress float64
	// Held is the seconds the job has held GPUs (its run time, restart
	// delays included).
	Held float64
	// Sync is the job's synchronization strategy (BSP unless a policy
	// chose otherwise).
	Sync Sync
	// PSRebalance says the job's parameter-server load follows its
	// servers' speeds (Decision.PSRebalance).
	PSRebalance bool
	// Iterations counts the training iterations run (per-worker model).
	Iterations float64
	// StragglerIterations counts the iterations in which at least one
	// worker was a straggler (per-worker model; expected value).
	StragglerIterations float64
	// Stragglers counts straggling worker-iterations (per-worker model).
	Stragglers float64
	// StragglerFree is the seconds the job's training would have taken had
	// every worker, in every iteration, run at the pace of the job's
	// median worker (per-worker model): the time without its stragglers.
	// The training time over it is the job's straggler inflation.
	StragglerFree float64
	// CommDelay and ComputeDelay split the straggler-induced delay (the
	// training time beyond StragglerFree) by cause: the slowest worker's
	// excess over the median worker in its gradient exchange, and in its
	// computation (per-worker model).
	CommDelay, ComputeDelay float64
	// MaxNodes is the most distinct nodes any of the job's allocations
	// spanned (0 before its first start).
	MaxNodes int
	// Relayed counts the worker-iterations in which a worker relayed its
	// gradient through a peer instead of the ring (STRET's stage a), and
	// RelayChanges the refreshes at which the job's relays changed (each
	// paid the restart delay).
	Relayed      float64
	RelayChanges int
	// Withheld counts the worker-iterations whose gradient STRET withheld
	// (stage b).
	Withheld float64
	// Tunings counts STRET's one-time batch-size tunings (stage c): at most
	// one per placement.
	Tunings int
	// Replacements counts the workers the replace-straggler baseline
	// replaced (each replacement paid the restart delay).
	Replacements int

	last    float64 // sim time up to which the model has advanced the job
	placed  float64 // sim time of the current placement
	slot    int     // index in Sim.running while Running
	heapIdx int     // index in Sim.finishes, -1 when not there
	applied int     // the last Sim.Apply call that saw a decision for the job
	m       any     // the throughput model's per-job state
}

// Restarts returns the number of times the job was placed after its first start.
func (j *Job) Restarts() int {
	if j.Starts == 0 {
		return 0
	}
	return j.Starts - 1
}

// JCT returns the job completion time (finish - submit), or NaN.
func (j *Job) JCT() float64 { return j.Finish - j.Spec.Submit }

// Placement returns the job's allocation as GPUs per node, one entry per
// run of equal node ids in Alloc, in allocation order: the form in which
// the Pollux simulator looks up measured throughput ("4 4 2").
func (j *Job) Placement() []int { return Placement(j.Alloc) }

// distinctCount returns the number of distinct entries of alloc.
func distinctCount(alloc []int) int {
	n := 0
	for i, x := range alloc {
		if !slices.Contains(alloc[:i], x) {
			n++
		}
	}
	return n
}

// Placement turns an allocation (a node id per worker) into GPUs per node,
// one entry per run of equal ids.
func Placement(alloc []int) []int { return appendPlacement(nil, alloc) }

// appendPlacement appends Placement(alloc) to dst.
func appendPlacement(dst []int, alloc []int) []int {
	for i, n := range alloc {
		if i == 0 || n != alloc[i-1] {
			dst = append(dst, 1)
		} else {
			dst[len(dst)-1]++
		}
	}
	return dst
}
