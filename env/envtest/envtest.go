package envtest

import "github.com/drover-sched/drover/env"

// FlatName is the model name of a Flat profile.
const FlatName = "flat"

// Flat is a profile whose numbers can be worked by hand: a step takes Step
// seconds plus Sync for each node beyond the first (the all-reduce), the
// efficiency gain is exactly 1, and every epoch is PerEpoch units of
// progress (so Pollux goodput is 1/step units per second).
type Flat struct {
	Step, Sync, PerEpoch float64
	Epochs               int
}

var _ env.Profile = Flat{}

// Name implements env.Profile.
func (Flat) Name() string { return FlatName }

// InitBatchSize implements env.Profile.
func (Flat) InitBatchSize() int { return 32 }

// MaxBatchSize implements env.Profile.
func (Flat) MaxBatchSize() int { return 1024 }

// MinLocalBsz implements env.Profile.
func (Flat) MinLocalBsz() int { return 32 }

// MaxLocalBsz implements env.Profile.
func (Flat) MaxLocalBsz() int { return 1024 }

// MaxEpochs implements env.Profile.
func (p Flat) MaxEpochs() int { return p.Epochs }

// Progress implements env.Profile.
func (p Flat) Progress(e int) float64 { return float64(e) * p.PerEpoch }

// CompletionEpoch implements env.Profile.
func (p Flat) CompletionEpoch(int) int { return p.Epochs - 1 }

// Iteration implements env.Profile: PerEpoch iterations per epoch.
func (p Flat) Iteration(_, e int) float64 { return float64(e+1) * p.PerEpoch }

// GradStats implements env.Profile: no gradient noise, so the gain is 1.
func (Flat) GradStats(int, int) (float64, float64) { return 1, 0 }

// Throughput implements env.Profile.
func (p Flat) Throughput(placement []int, _ int) (float64, float64) {
	extra := float64(len(placement) - 1)
	return p.Step + p.Sync*extra, p.Sync * extra
}

// Profiles maps each profile's name to it.
func Profiles(ps ...env.Profile) map[string]env.Profile {
	m := make(map[string]env.Profile, len(ps))
	for _, p := range ps {
		m[p.Name()] = p
	}
	return m
}

// JobWrapper builds a JobSpec fluently.
type JobWrapper struct{ s env.JobSpec }

// MakeJob starts a 1-GPU job of the Flat model submitted at 0.
func MakeJob(name string) *JobWrapper {
	return &JobWrapper{env.JobSpec{Name: name, GPUs: 1, Model: FlatName}}
}

// GPUs sets the GPU count.
func (w *JobWrapper) GPUs(n int) *JobWrapper { w.s.GPUs = n; return w }

// Submit sets the arrival time.
func (w *JobWrapper) Submit(t float64) *JobWrapper { w.s.Submit = t; return w }

// Duration sets the measured run time.
func (w *JobWrapper) Duration(d float64) *JobWrapper { w.s.Duration = d; return w }

// Batch sets the global batch size.
func (w *JobWrapper) Batch(b int) *JobWrapper { w.s.BatchSize = b; return w }

// Model sets the model name.
func (w *JobWrapper) Model(m string) *JobWrapper { w.s.Model = m; return w }

// Obj returns the built JobSpec.
func (w *JobWrapper) Obj() env.JobSpec { return w.s }

// Background is a constant background load: Loads[node] on the listed
// nodes, none elsewhere, changing never (Step is only the refresh period).
type Background struct {
	// Loads maps node indices to their load.
	Loads map[int]env.Usage
	// Period is what Step returns (300 if zero).
	Period float64
}

// Load implements env.Background.
func (b Background) Load(node int, _ float64) env.Usage { return b.Loads[node] }

// Step implements env.Background.
func (b Background) Step() float64 {
	if b.Period == 0 {
		return 300
	}
	return b.Period
}
