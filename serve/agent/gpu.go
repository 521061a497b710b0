package agent

import (
	"time"

	pb "github.com/drover-sched/drover/serve/proto"
)

// NoNVMLNote is the hello's gpu_note in a build without NVML.
const NoNVMLNote = "built without NVML (build with -tags nvml)"

// GPUSource reads the node's GPUs at each sample. The default,
// NewGPUSource, is NVML in a build with -tags nvml and a stub otherwise.
type GPUSource interface {
	// Read returns one reading per GPU at now. A value it could not
	// measure is NaN; an error describes what failed (the agent logs each
	// distinct message once) and does not stop the other readings.
	Read(now time.Time) ([]*pb.GPUReading, error)
}

// GPUInfo is what a GPU source found on the node, for the hello.
type GPUInfo struct {
	// Available reports whether samples carry GPU readings.
	Available bool
	// Note says why not, or anything else worth logging once.
	Note string
	// Count and Type are the GPU count and model ("" unknown); the
	// agent's Config.GPUs and GPUType win when set.
	Count int
	Type  string
}

// GPUDescriber is a GPUSource that can say what it found. The agent asks
// once, before the first sample; a source that does not implement it is
// taken as available.
type GPUDescriber interface {
	DescribeGPUs() GPUInfo
}

// describeGPUs returns src's GPUInfo.
func describeGPUs(src GPUSource) GPUInfo {
	if d, ok := src.(GPUDescriber); ok {
		return d.DescribeGPUs()
	}
	return GPUInfo{Available: true}
}
