//go:build !nvml

package agent

import (
	"time"

	pb "github.com/drover-sched/drover/serve/proto"
)

// NewGPUSource returns the build's GPU source. This build has no NVML
// (it is cgo-free): the source reports no GPU readings and says so.
func NewGPUSource() GPUSource { return noNVML{} }

// noNVML is the GPU source of a build without NVML.
type noNVML struct{}

func (noNVML) Read(time.Time) ([]*pb.GPUReading, error) { return nil, nil }

func (noNVML) DescribeGPUs() GPUInfo { return GPUInfo{Note: NoNVMLNote} }
