package profile

import "errors"

// Profile is a model's measured (or fitted) performance and convergence
// behaviour: what the simulator needs to advance a job.
type Profile interface {
	// Name is the model name, e.g. "imagenet".
	Name() string
	// InitBatchSize is the batch size a job starts with: the smallest
	// validated batch size unless overridden.
	InitBatchSize() int
	// MaxBatchSize is the largest validated (global) batch size.
	MaxBatchSize() int
	// MinLocalBsz is the smallest measured per-GPU batch size.
	MinLocalBsz() int
	// MaxLocalBsz is the largest usable per-GPU batch size (the largest
	// measured one unless overridden; yolov3: 8).
	MaxLocalBsz() int
	// MaxEpochs is the number of epochs a job trains for.
	MaxEpochs() int
	// Throughput returns the per-iteration step time and its sync
	// (all-reduce) share, in seconds, for a placement (GPUs on each node;
	// zeros are ignored and the order does not matter up to rotation) at a
	// per-GPU batch size.
	Throughput(placement []int, localBsz int) (step, sync float64)
	// GradStats returns the gradient squared norm and variance estimates
	// during an epoch at a global batch size.
	GradStats(batchSize int, epoch int) (sqr, variance float64)
	// Progress returns the (statistical-efficiency-adjusted) progress needed
	// to finish the given number of epochs; Progress(0) is 0.
	Progress(epoch int) float64
	// CompletionEpoch returns the epoch whose end completes training at a
	// global batch size.
	CompletionEpoch(batchSize int) int
	// Iteration returns the number of iterations after completing an epoch
	// at a global batch size.
	Iteration(batchSize int, epoch int) float64
}

// ErrUnknownModel is returned by Builtin for a name without embedded
// parameters.
var ErrUnknownModel = errors.New("profile: unknown model")

// overrides are the per-application arguments of Pollux's APPLICATIONS table
// (simulator/applications.py); zero means "derive from the data".
type overrides struct {
	maxEpochs   int
	maxLocalBsz int
}

var polluxOverrides = map[string]overrides{
	"bert":        {maxEpochs: 2},
	"cifar10":     {maxEpochs: 100},
	"ncf":         {maxEpochs: 10},
	"imagenet":    {maxEpochs: 90},
	"deepspeech2": {maxEpochs: 80},
	"yolov3":      {maxEpochs: 50, maxLocalBsz: 8},
}
