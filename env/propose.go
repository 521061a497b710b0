package env

// The candidate protocol: how a heuristic's per-job choice is handed to
// someone else. It lives here, below the policies, because the placement
// environments (env/placement, env/sched) drive it: an agent picks among
// a heuristic's candidates at each step, and the deployed learned policy
// (placement.Learned) does the same. Package policies' heuristics (strn,
// sas) implement Proposer.

// Candidate is one option a heuristic weighs for a job: the decision it
// would make and the numbers it ranks that decision by.
type Candidate struct {
	// Decision places the job (and sets its sync strategy).
	Decision Decision
	// Features describe the option in the heuristic's own terms; every
	// candidate of one Proposer has the same number of them
	// (Proposer.CandidateFeatures).
	Features []float64
}

// Proposer is a Scheduler (a heuristic) whose per-job choice can be
// handed to someone else (a learned policy choosing among the same
// candidates, the way strn-rl and sas-rl do). At each decision point Begin
// is called once; then, for each pending job that fits in the free GPUs,
// in arrival order, Propose lists its candidates, the heuristic's own
// choice first, and Commit books the one taken. Delegate runs that loop; a
// Proposer's Schedule is Delegate with FirstCandidate.
type Proposer interface {
	Scheduler
	// Begin readies the heuristic for a decision point.
	Begin(v *View)
	// Propose returns j's candidates, best first by the heuristic's own
	// ranking; none when the heuristic would not start j now.
	Propose(v *View, j *Job) []Candidate
	// Commit books c, one of the candidates Propose just returned for j.
	Commit(v *View, j *Job, c Candidate)
	// CandidateFeatures returns the length of every Candidate.Features.
	CandidateFeatures() int
}

// Chooser picks one of a job's candidates (non-empty) by index.
type Chooser func(v *View, j *Job, cands []Candidate) int

// FirstCandidate is the Chooser of the heuristic's own choice: the first
// candidate.
func FirstCandidate(*View, *Job, []Candidate) int { return 0 }

// Delegate runs one decision point of p with choose picking each job's
// candidate: pending jobs are taken in arrival order with backfilling,
// and each that fits in the GPUs left and gets candidates starts on the
// chosen one. It panics when choose returns an index out of range. When
// v.Done is closed it stops and returns ErrCancelled.
func Delegate(p Proposer, v *View, choose Chooser) ([]Decision, error) {
	p.Begin(v)
	left := 0
	for _, f := range v.Free {
		left += f
	}
	ds := DelegateJobs(p, v, v.Active, left, choose)
	if v.Cancelled() {
		return nil, ErrCancelled
	}
	return ds, nil
}

// DelegateJobs is Delegate after p.Begin(v), over jobs (in order; those
// not pending are skipped) with free GPUs free in all: for a Proposer
// whose Begin must run once per decision point, or that keeps its own
// list of the pending jobs and their free GPUs. When v.Done is closed it
// stops before the next job: the caller checks v.Cancelled and discards
// what it returns.
func DelegateJobs(p Proposer, v *View, jobs []*Job, free int, choose Chooser) []Decision {
	left := free
	var ds []Decision
	for _, j := range jobs {
		if left == 0 || v.Cancelled() {
			break
		}
		if j.State != Pending || j.Spec.GPUs > left {
			continue
		}
		cands := p.Propose(v, j)
		if len(cands) == 0 {
			continue
		}
		k := choose(v, j, cands)
		if k < 0 || k >= len(cands) {
			panic("env: chooser picked a candidate out of range")
		}
		p.Commit(v, j, cands[k])
		ds = append(ds, cands[k].Decision)
		left -= j.Spec.GPUs
	}
	return ds
}
