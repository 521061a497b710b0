package env

import (
	"fmt"
	"math"
)

// Profile is a model's measured performance and convergence behaviour, in
// the terms of the Pollux simulator's applications (env/profile implements
// it from measurements or from fitted parameters).
type Profile interface {
	// Name returns the model's name.
	Name() string
	// InitBatchSize returns the batch size that progress is measured against.
	InitBatchSize() int
	// MaxBatchSize returns the largest global batch size measured.
	MaxBatchSize() int
	// MinLocalBsz returns the smallest per-GPU batch size measured.
	MinLocalBsz() int
	// MaxLocalBsz returns the largest per-GPU batch size that fits a GPU.
	MaxLocalBsz() int
	// MaxEpochs returns the number of epochs in a full training run.
	MaxEpochs() int
	// Throughput returns seconds per step and the all-reduce share of it
	// for a placement (GPUs per node) at a per-GPU batch size.
	Throughput(placement []int, localBsz int) (step, sync float64)
	// GradStats returns the gradient's squared norm and variance during an
	// epoch at a global batch size.
	GradStats(batchSize, epoch int) (sqr, variance float64)
	// Progress returns the statistical progress at the end of an epoch.
	Progress(epoch int) float64
	// CompletionEpoch returns the epoch after which a job at this batch
	// size has reached its target.
	CompletionEpoch(batchSize int) int
	// Iteration returns the iterations done after an epoch at this batch size.
	Iteration(batchSize, epoch int) float64
}

// Accuracy is implemented by profiles that carry validation curves: it
// gives the validation metric a job ends its training with. The metric is
// the model's own (accuracy, F1, hit rate, word error rate or loss, as the
// profile's source recorded it); compare it only within a model.
type Accuracy interface {
	// FinalMetric returns the validation metric at the completion epoch
	// for a global batch size, interpolated between the measured batch
	// sizes and clamped to their range.
	FinalMetric(batchSize int) float64
}

// Pollux is the throughput model of the Pollux simulator (OSDI'21,
// petuum/adaptdl branch osdi21-artifact, simulator/simulator.py) for jobs
// with a fixed batch size: a job advances its statistical progress by its
// goodput (efficiency gain / step time, from the measured profiles) and
// finishes when it passes the end of its model's validation curve. Epoch
// boundaries land on whole seconds (the reference rounds half to even), and
// every placement first pays the restart delay. Jobs' Duration is ignored:
// the amount of work is the model's.
type Pollux struct {
	// Profiles maps model names to profiles.
	Profiles map[string]Profile
	// GPUsPerNode is the node size Oracle assumes when it packs r GPUs
	// (4 in the Pollux simulator's cluster); 0 means 4.
	GPUsPerNode int
}

var _ Model = (*Pollux)(nil)
var _ Oracle = (*Pollux)(nil)

type polluxJob struct {
	prof      Profile
	placement []int
	replicas  int
	atomicBsz int
	accum     int
	epoch     int
	progress  float64
	delay     float64 // restart delay still to pay
	restart   float64
	// Memo of the current placement's rate (recomputed on epoch change).
	rateEpoch int
	goodput   float64
	// Memo of the current placement's step time (seconds per iteration,
	// accumulation included), which the epoch does not change; stepOK is
	// false until it is computed for the placement.
	stepOK bool
	step   float64
}

// Name implements Model.
func (*Pollux) Name() string { return "pollux" }

// Admit implements Model: the job's model must have a profile, and its
// batch size must lie in the profile's measured range.
func (m *Pollux) Admit(j *Job, meta *Meta) error {
	p, ok := m.Profiles[j.Spec.Model]
	if !ok {
		return fmt.Errorf("no profile for model %q", j.Spec.Model)
	}
	if b := j.Spec.BatchSize; b != 0 && (b < p.MinLocalBsz() || b > p.MaxBatchSize()) {
		return fmt.Errorf("batch size %d outside model %s's range [%d, %d]", b, p.Name(), p.MinLocalBsz(), p.MaxBatchSize())
	}
	j.m = &polluxJob{prof: p, restart: meta.RestartDelay, rateEpoch: -1}
	return nil
}

func (m *Pollux) state(j *Job) *polluxJob { return j.m.(*polluxJob) }

// Place implements Model: it sets the per-GPU batch size and gradient
// accumulation for the new placement and starts the restart delay.
func (m *Pollux) Place(j *Job, _ *Cluster) {
	s := m.state(j)
	s.placement = j.Placement()
	s.replicas = len(j.Alloc)
	s.atomicBsz, s.accum = localBatch(s.prof, j.Spec.BatchSize, s.replicas)
	s.delay = s.restart
	s.rateEpoch = -1
	s.stepOK = false
}

// localBatch returns the per-GPU batch size and gradient-accumulation steps
// of a job with global batch size batch on r GPUs (Job.update_local_bsz).
func localBatch(p Profile, batch, r int) (atomic, accum int) {
	if batch == 0 {
		batch = max(p.InitBatchSize(), p.MinLocalBsz()*r)
	}
	local := int(math.Ceil(float64(batch)/float64(r) - 1e-8))
	accum = int(math.Ceil(float64(local)/float64(p.MaxLocalBsz())-1e-8)) - 1
	if r == 1 && batch > p.InitBatchSize() {
		accum = max(1, accum)
	}
	atomic = int(math.Ceil(float64(local)/float64(accum+1) - 1e-8))
	count := r * (accum + 1)
	atomic = min(atomic, int(float64(p.MaxBatchSize())/float64(count)))
	return atomic, accum
}

// rate returns the job's goodput (progress per second) in its current epoch.
func (s *polluxJob) rate() float64 {
	if s.rateEpoch == s.epoch {
		return s.goodput
	}
	batch := s.replicas * s.atomicBsz * (s.accum + 1)
	scale := float64(batch) / float64(s.prof.InitBatchSize())
	if !s.stepOK {
		step, sync := s.prof.Throughput(s.placement, s.atomicBsz)
		s.step, s.stepOK = step+(step-sync)*float64(s.accum), true
	}
	total := s.step
	sqr, v := s.prof.GradStats(batch, s.epoch)
	gain := (v + sqr) / (v/scale + sqr)
	s.goodput = gain / total
	if !(s.goodput > 0) || math.IsInf(s.goodput, 0) {
		step, sync := s.prof.Throughput(s.placement, s.atomicBsz)
		panic(fmt.Sprintf("env: profile %s: goodput %v at batch %d, epoch %d, placement %v (step %v s, sync %v s, grad sqr %v, var %v)",
			s.prof.Name(), s.goodput, batch, s.epoch, s.placement, step, sync, sqr, v))
	}
	s.rateEpoch = s.epoch
	return s.goodput
}

// Advance implements Model (Job.step of the Pollux simulator).
func (m *Pollux) Advance(j *Job, dt float64) (float64, bool) {
	s := m.state(j)
	used := 0.0
	d := min(s.delay, dt)
	s.delay -= d
	used += d
	dt -= d
	batch := s.replicas * s.atomicBsz * (s.accum + 1)
	for dt > 0 {
		g := s.rate()
		next := s.prof.Progress(s.epoch + 1)
		if s.progress+g*dt < next {
			s.progress += g * dt
			used += dt
			dt = 0
			break
		}
		s.epoch++
		delta := min(math.RoundToEven((next-s.progress)/g), dt)
		s.progress = next
		used += delta
		dt -= delta
		if s.epoch > s.prof.CompletionEpoch(batch) {
			j.Progress = 1
			return used, true
		}
	}
	j.Progress = s.progress / s.prof.Progress(s.prof.CompletionEpoch(batch)+1)
	return used, false
}

// Remaining implements Model by replaying Advance's epoch arithmetic.
func (m *Pollux) Remaining(j *Job) float64 {
	s := m.state(j)
	if s.replicas == 0 {
		return math.Inf(1)
	}
	batch := s.replicas * s.atomicBsz * (s.accum + 1)
	t := s.delay
	epoch, progress := s.epoch, s.progress
	save := s.epoch
	for epoch <= s.prof.CompletionEpoch(batch) {
		s.epoch = epoch
		g := s.rate()
		next := s.prof.Progress(epoch + 1)
		t += math.RoundToEven((next - progress) / g)
		progress = next
		epoch++
	}
	s.epoch = save
	return t
}

// RemainingIterations implements Oracle (Optimus+Oracle's job.remaining).
func (m *Pollux) RemainingIterations(j *Job) float64 {
	s := m.state(j)
	b := j.Spec.BatchSize
	if b == 0 {
		b = max(s.prof.InitBatchSize(), s.prof.MinLocalBsz()*j.Spec.GPUs)
	}
	c := s.prof.CompletionEpoch(b)
	if c <= s.epoch {
		return 1
	}
	return s.prof.Iteration(b, c) - s.prof.Iteration(b, s.epoch)
}

// StepTime implements Oracle (OptimusPolicy.predict_step_time).
func (m *Pollux) StepTime(j *Job, r, gpusPerNode int) float64 {
	s := m.state(j)
	if gpusPerNode <= 0 {
		gpusPerNode = 4
	}
	placement := Packed(r, gpusPerNode)
	b := j.Spec.BatchSize
	if b == 0 {
		b = max(s.prof.InitBatchSize(), s.prof.MinLocalBsz()*r)
	}
	local := int(math.Ceil(float64(b)/float64(r) - 1e-8))
	accum := int(math.Ceil(float64(local)/float64(s.prof.MaxLocalBsz())-1e-8)) - 1
	if r == 1 {
		accum = max(1, accum)
	}
	atomic := int(math.Ceil(float64(local)/float64(accum+1) - 1e-8))
	atomic = min(atomic, int(float64(s.prof.MaxBatchSize())/float64(r*(accum+1))))
	step, sync := s.prof.Throughput(placement, atomic)
	return step + (step-sync)*float64(accum)
}

// MaxReplicas implements Oracle: the batch size over the smallest per-GPU
// batch; ncf jobs get one GPU, as in the Pollux simulator's Optimus.
func (m *Pollux) MaxReplicas(j *Job) int {
	s := m.state(j)
	if s.prof.Name() == "ncf" {
		return 1
	}
	b := j.Spec.BatchSize
	if b == 0 {
		b = max(s.prof.InitBatchSize(), s.prof.MinLocalBsz()*j.Spec.GPUs)
	}
	return max(1, b/s.prof.MinLocalBsz())
}
