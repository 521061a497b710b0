package profile

import (
	"errors"

	"github.com/drover-sched/drover/env"
)

// Profile is a model's measured (or fitted) performance and convergence
// behaviour: what the simulator needs to advance a job. It is env.Profile,
// where the simulator defines it; Measured and Fitted implement it.
type Profile = env.Profile

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
