package env

import "errors"

// Errors returned by the simulator.
var (
	// ErrBadCluster reports an unusable cluster description.
	ErrBadCluster = errors.New("env: bad cluster")
	// ErrBadJob reports an unusable job in the workload.
	ErrBadJob = errors.New("env: bad job")
	// ErrBadDecision reports a scheduling decision the cluster cannot carry out.
	ErrBadDecision = errors.New("env: bad decision")
	// ErrStalled reports that jobs are waiting, nothing runs, nothing more
	// arrives and the policy placed nothing: the run cannot finish.
	ErrStalled = errors.New("env: stalled")
	// ErrDone is returned by Sim.Next when every job has finished.
	ErrDone = errors.New("env: done")
	// ErrCancelled is returned by a Scheduler that stopped early because
	// its View's Done channel was closed: it made no decisions.
	ErrCancelled = errors.New("env: decision cancelled")
)
