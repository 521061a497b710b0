package agent

import (
	"math"

	pb "github.com/drover-sched/drover/serve/proto"
)

// NodeSample turns a Sampler's Reading and the GPUs' readings into the
// stream's sample. A value the Reading does not know (a first sample's
// rates, pressure on a kernel without PSI) is NaN, as the proto asks.
// Pressure is PSI's "some" share of the interval.
func NodeSample(r Reading, gpus []*pb.GPUReading) *pb.NodeSample {
	nan := math.NaN()
	s := &pb.NodeSample{
		UnixNanos:   r.Time.UnixNano(),
		CpuUtil:     nan,
		MemUsed:     r.MemUsed,
		CpuPressure: stalled(r.CPUPressure),
		MemPressure: stalled(r.MemPressure),
		NetRxBps:    nan,
		NetTxBps:    nan,
		Gpus:        gpus,
	}
	if r.CPUUtilKnown {
		s.CpuUtil = r.CPUUtil
	}
	if r.NetKnown {
		s.NetRxBps, s.NetTxBps = r.NetRxBytesPerSec, r.NetTxBytesPerSec
	}
	return s
}

// stalled returns p's "some" stall share, or NaN when PSI is unavailable
// or the share unknown.
func stalled(p Pressure) float64 {
	if !p.Available || !p.StalledKnown {
		return math.NaN()
	}
	return p.SomeStalled
}
