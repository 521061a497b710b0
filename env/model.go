package env

// Model computes how fast a job progresses on its allocation. One Model value
// serves one Sim (it may keep per-run caches); the Sim calls it from one
// goroutine.
type Model interface {
	// Name returns the model's name as the command line spells it.
	Name() string
	// Admit checks a job when the simulator is built and sets up the
	// model's state for it. An error rejects the workload.
	Admit(j *Job, m *Meta) error
	// Place tells the model that j has a new, non-empty allocation.
	Place(j *Job, c *Cluster)
	// Advance runs j for up to dt seconds on its allocation. It returns the
	// seconds used, which are less than dt only when the job finished.
	Advance(j *Job, dt float64) (used float64, done bool)
	// Remaining returns the seconds j needs to finish if nothing changes.
	Remaining(j *Job) float64
}

// Meta is what a Model may learn about the run when it admits a job.
type Meta struct {
	// RestartDelay is the seconds a job pays on every (re)start.
	RestartDelay float64
}

// Oracle is implemented by models that can answer what-if questions about a
// job's future, as Optimus+Oracle assumes a scheduler can.
type Oracle interface {
	// RemainingIterations returns the iterations j still needs at its
	// requested batch size.
	RemainingIterations(j *Job) float64
	// StepTime predicts j's seconds per iteration on r GPUs packed onto as
	// few nodes of gpusPerNode GPUs as possible.
	StepTime(j *Job, r, gpusPerNode int) float64
	// MaxReplicas returns the most GPUs j can use.
	MaxReplicas(j *Job) int
}

// Dynamic is implemented by models whose job speeds change by themselves
// over time (background load, jitter) or with the jobs around them. The
// simulator refreshes every running job at each multiple of Period, and
// right after placing it.
type Dynamic interface {
	// Period returns the seconds between refreshes (0: never).
	Period() float64
	// Refresh recomputes j's speed for the period starting at now.
	Refresh(j *Job, c *Cluster, now float64)
	// Release tells the model that j has lost its allocation.
	Release(j *Job)
}

// Telemetry is implemented by models that know each node's resource
// utilisation, as a node's monitoring agent would report it: background
// load plus the load of the jobs placed there.
type Telemetry interface {
	// NodeLoad returns node's utilisation of each resource at now.
	NodeLoad(node int, now float64) Usage
}

// Prober is implemented by models that can run a short, side-effect-free
// probe of a job, as a profiler would: the job's mean seconds per
// iteration on a placement (GPUs per node) of otherwise idle nodes whose
// background utilisation is load, with or without per-worker jitter.
type Prober interface {
	// Probe returns j's mean iteration seconds in the probe setting.
	Probe(j *Job, placement []int, load Usage, jitter bool) float64
}

// retirer is implemented by models that can free a job's per-run state
// once it has finished (the simulator calls retire after the job's
// release, and asks the model nothing about it but Advance's and
// Remaining's answers, FinalMetric and the Oracle's afterwards).
type retirer interface {
	retire(j *Job)
}

// prefetcher is implemented by Dynamic models whose refreshes read
// per-job state scattered in memory: before refreshing a batch of at most
// prefetchJobs running jobs at now (in order, one by one), the simulator
// lets the model read what the batch's refreshes will, all jobs at once,
// so that the memory loads overlap instead of stalling one refresh after
// another. prefetchAdvance does the same for advancing a batch of running
// jobs, whether or not the model is Dynamic. Neither may change anything
// that the refreshes, the advances or anything else could tell.
type prefetcher interface {
	prefetch(jobs []*Job, now float64)
	prefetchAdvance(jobs []*Job)
}

// prefetchJobs is the most jobs one prefetch reads ahead for.
const prefetchJobs = 32

// syncChecker is a model that knows which synchronization strategies it
// can run (Drover.CheckSync): Apply refuses the others.
type syncChecker interface {
	CheckSync(j *Job, s Sync, w int) error
}
