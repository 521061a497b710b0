package placement

import (
	"math"
	"slices"

	"github.com/drover-sched/drover/env"
)

// JobFeatures is the length of CandidateObs's job part, the values that
// describe the job and the queue rather than a candidate.
const JobFeatures = 2 + 6 + 3 + 2

// CandidateObsDim returns the length of CandidateObs for k candidate slots
// of f features each.
func CandidateObsDim(k, f int) int { return JobFeatures + k*f }

// featureClip bounds every candidate feature, so that one extreme cost
// (a slowdown of thousands on a saturated node) cannot swamp the rest.
const featureClip = 10

// CandidateObs appends to dst the observation of job j with candidates
// cands (the first k of them; slots without a candidate are zero) of f
// features each. It depends on the cluster only through the candidates,
// so a policy trained on one cluster runs on another:
//
//	log2(1 + GPUs) / 6, log(1 + duration in hours) / 5,
//	one-hot model (bert, cifar10, deepspeech2, imagenet, ncf, yolov3),
//	the model's assumed CPU, memory-bandwidth and NIC sensitivities,
//	pending and running jobs per node,
//	then each candidate's features, clipped to [-10, 10].
func CandidateObs(dst []float64, v *env.View, j *env.Job, cands []env.Candidate, k, f int) []float64 {
	base := len(dst)
	dst = append(dst, make([]float64, CandidateObsDim(k, f))...)
	obs := dst[base:]
	FillJob(obs, v, j)
	for c := range min(k, len(cands)) {
		if len(cands[c].Features) != f {
			panic("placement: candidate feature count mismatch")
		}
		for i, x := range cands[c].Features {
			if math.IsNaN(x) {
				x = 0
			}
			obs[JobFeatures+c*f+i] = min(max(x, -featureClip), featureClip)
		}
	}
	return dst
}

// FillJob writes into obs[:JobFeatures] (zeroed) the features of job j
// at decision point v that CandidateObs and env/sched's observation
// share:
//
//	log2(1 + GPUs) / 6, log(1 + duration in hours) / 5,
//	one-hot model (bert, cifar10, deepspeech2, imagenet, ncf, yolov3),
//	the model's assumed CPU, memory-bandwidth and NIC sensitivities,
//	pending and running jobs per node.
func FillJob(obs []float64, v *env.View, j *env.Job) {
	obs[0] = math.Log2(1+float64(j.Spec.GPUs)) / 6
	obs[1] = math.Log1p(j.Spec.Duration/3600) / 5
	if m := slices.Index(models, j.Spec.Model); m >= 0 {
		obs[2+m] = 1
	}
	sens := env.Sensitivities[j.Spec.Model]
	obs[8], obs[9], obs[10] = sens.CPU, sens.MemBW, sens.Net
	pending, running := 0, 0
	for _, a := range v.Active {
		if a.State == env.Pending {
			pending++
		} else if a.State == env.Running {
			running++
		}
	}
	nodes := float64(max(len(v.Cluster.Nodes), 1))
	obs[11], obs[12] = float64(pending)/nodes, float64(running)/nodes
}

// Learned is the policy that lets act choose among the candidates of the
// heuristic newProposer returns (one per run), with k candidate slots:
// the deployed form of a policy trained with Config.NewProposer. act gets
// CandidateObs and the mask of the slots holding a candidate; a choice
// outside the mask falls back to the heuristic's own. The policy (an
// env.Scheduler, which is policies.Policy) is a policies.Deviator.
func Learned(newProposer func() env.Proposer, k int, act func(obs []float64, mask []bool) int) env.Scheduler {
	return &learned{prop: newProposer(), k: k, act: act}
}

type learned struct {
	prop              env.Proposer
	k                 int
	act               func(obs []float64, mask []bool) int
	obs               []float64
	mask              []bool
	deviated, choices int
}

// Deviations implements policies.Deviator.
func (l *learned) Deviations() (deviated, choices int) { return l.deviated, l.choices }

// Schedule implements env.Scheduler (policies.Policy).
func (l *learned) Schedule(v *env.View) ([]env.Decision, error) {
	return env.Delegate(l.prop, v, func(v *env.View, j *env.Job, cands []env.Candidate) int {
		l.obs = CandidateObs(l.obs[:0], v, j, cands, l.k, l.prop.CandidateFeatures())
		l.mask = l.mask[:0]
		for i := range l.k {
			l.mask = append(l.mask, i < len(cands))
		}
		a := l.act(l.obs, l.mask)
		if a < 0 || a >= min(l.k, len(cands)) {
			a = 0
		}
		if len(cands) > 1 {
			l.choices++
			if a != 0 {
				l.deviated++
			}
		}
		return a
	})
}
