package state

import (
	"fmt"
	"math"

	pb "github.com/drover-sched/drover/serve/proto"
)

// Limits on what an agent may send.
const (
	// MaxIDLen is the longest node, agent or job id, in bytes.
	MaxIDLen = 256
	// MaxGPUs is the most GPUs a node (and a sample) may have.
	MaxGPUs = 1024
	// MaxIterations is the most iteration times in one report.
	MaxIterations = 4096
	// MaxWorker is the largest worker index.
	MaxWorker = 1 << 20
	// MaxSeq is the largest sequence number accepted, 2^63-1. An agent's
	// numbers start at 1 and grow by one per message, so no agent comes
	// near it; a larger one is refused (InvalidArgument on the stream), so
	// that one stray number near 2^64 cannot leave an agent with no number
	// above its last, every later message acknowledged as a resend and
	// dropped. Numbers never wrap: they belong to one agent id, and an
	// agent that restarts has a new id, whose hello starts them afresh.
	MaxSeq = 1<<63 - 1
	// MaxIterationSeconds is the longest iteration time accepted: a day.
	// Longer ones are reporting errors, and values near the largest float
	// would overflow a profile's sums.
	MaxIterationSeconds = 86400.0
)

// usableSeconds reports whether x is an iteration time a profile can use:
// in (0, MaxIterationSeconds].
func usableSeconds(x float64) bool { return x > 0 && x <= MaxIterationSeconds }

// FieldError is a message the store refused, naming the field.
type FieldError struct {
	Field, Msg string
}

func (e *FieldError) Error() string { return "state: " + e.Field + ": " + e.Msg }

func fieldErr(field, format string, a ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

func checkID(field, id string) error {
	switch {
	case id == "":
		return fieldErr(field, "empty")
	case len(id) > MaxIDLen:
		return fieldErr(field, "%d bytes, want at most %d", len(id), MaxIDLen)
	}
	return nil
}

// nonneg checks a finite value >= 0.
func nonneg(field string, x float64) error {
	if !(x >= 0) || math.IsInf(x, 0) {
		return fieldErr(field, "%v, want a finite value >= 0", x)
	}
	return nil
}

// share checks a share in [0, 1], or NaN (not measured).
func share(field string, x float64) error {
	if !math.IsNaN(x) && !(x >= 0 && x <= 1) {
		return fieldErr(field, "%v, want a share in [0, 1] (NaN: not measured)", x)
	}
	return nil
}

// rate checks a rate >= 0, or NaN (not measured).
func rate(field string, x float64) error {
	if !math.IsNaN(x) && (!(x >= 0) || math.IsInf(x, 0)) {
		return fieldErr(field, "%v, want a finite rate >= 0 (NaN: not measured)", x)
	}
	return nil
}

// validateInfo checks a restored node's hello fields as ValidateHello
// checks a hello's; field names the node in the snapshot.
func validateInfo(field string, in NodeInfo) error {
	switch {
	case in.GPUs < 0 || in.GPUs > MaxGPUs:
		return fieldErr(field+".GPUs", "%d, want 0..%d", in.GPUs, MaxGPUs)
	case in.CPUs < 0:
		return fieldErr(field+".CPUs", "%d, want >= 0", in.CPUs)
	case !(in.MemoryGiB >= 0) || math.IsInf(in.MemoryGiB, 0):
		return fieldErr(field+".MemoryGiB", "%v, want a finite value >= 0", in.MemoryGiB)
	case !(in.NICGbps >= 0) || math.IsInf(in.NICGbps, 0):
		return fieldErr(field+".NICGbps", "%v, want a finite value >= 0", in.NICGbps)
	case in.Rack < -1:
		return fieldErr(field+".Rack", "%d, want >= -1", in.Rack)
	case in.Interval < 0:
		return fieldErr(field+".Interval", "%v, want >= 0", in.Interval)
	case len(in.AgentID) > MaxIDLen || len(in.GPUType) > MaxIDLen || len(in.GPUNote) > 4*MaxIDLen || len(in.Version) > MaxIDLen:
		return fieldErr(field, "AgentID, GPUType, GPUNote or Version too long")
	}
	return nil
}

// ValidateHello checks an agent's hello.
func ValidateHello(h *pb.AgentHello) error {
	if h == nil {
		return fieldErr("hello", "missing")
	}
	if err := checkID("hello.node_id", h.GetNodeId()); err != nil {
		return err
	}
	if err := checkID("hello.agent_id", h.GetAgentId()); err != nil {
		return err
	}
	if g := h.GetGpus(); g < 0 || g > MaxGPUs {
		return fieldErr("hello.gpus", "%d, want 0..%d", g, MaxGPUs)
	}
	if c := h.GetCpus(); c < 0 {
		return fieldErr("hello.cpus", "%d, want >= 0", c)
	}
	if err := nonneg("hello.memory_gib", h.GetMemoryGib()); err != nil {
		return err
	}
	if err := nonneg("hello.nic_gbps", h.GetNicGbps()); err != nil {
		return err
	}
	if err := nonneg("hello.interval_s", h.GetIntervalS()); err != nil {
		return err
	}
	if r := h.GetRack(); r < -1 {
		return fieldErr("hello.rack", "%d, want >= -1", r)
	}
	if len(h.GetGpuType()) > MaxIDLen || len(h.GetGpuNote()) > 4*MaxIDLen || len(h.GetVersion()) > MaxIDLen {
		return fieldErr("hello", "gpu_type, gpu_note or version too long")
	}
	return nil
}

// ValidateMessage checks one message of a telemetry stream after the
// hello.
func ValidateMessage(m *pb.AgentMessage) error {
	if m == nil {
		return fieldErr("message", "missing")
	}
	if m.GetSeq() == 0 {
		return fieldErr("seq", "0 after the hello, want >= 1")
	}
	if m.GetSeq() > MaxSeq {
		return fieldErr("seq", "%d, want at most %d (2^63-1)", m.GetSeq(), uint64(MaxSeq))
	}
	switch b := m.GetBody().(type) {
	case *pb.AgentMessage_Sample:
		s := b.Sample
		if s.GetUnixNanos() <= 0 {
			return fieldErr("sample.unix_nanos", "%d, want > 0", s.GetUnixNanos())
		}
		for _, c := range []struct {
			f string
			x float64
		}{{"sample.cpu_util", s.GetCpuUtil()}, {"sample.mem_used", s.GetMemUsed()}, {"sample.cpu_pressure", s.GetCpuPressure()}, {"sample.mem_pressure", s.GetMemPressure()}} {
			if err := share(c.f, c.x); err != nil {
				return err
			}
		}
		if err := rate("sample.net_rx_bps", s.GetNetRxBps()); err != nil {
			return err
		}
		if err := rate("sample.net_tx_bps", s.GetNetTxBps()); err != nil {
			return err
		}
		if len(s.GetGpus()) > MaxGPUs {
			return fieldErr("sample.gpus", "%d readings, want at most %d", len(s.GetGpus()), MaxGPUs)
		}
		for i, g := range s.GetGpus() {
			f := fmt.Sprintf("sample.gpus[%d]", i)
			if err := share(f+".util", g.GetUtil()); err != nil {
				return err
			}
			if err := share(f+".mem_used", g.GetMemUsed()); err != nil {
				return err
			}
			for _, r := range []float64{g.GetPcieRxBps(), g.GetPcieTxBps(), g.GetNvlinkBps()} {
				if err := rate(f+" throughput", r); err != nil {
					return err
				}
			}
		}
	case *pb.AgentMessage_Iterations:
		it := b.Iterations
		if err := checkID("iterations.job_id", it.GetJobId()); err != nil {
			return err
		}
		if w := it.GetWorker(); w < -1 || w > MaxWorker {
			return fieldErr("iterations.worker", "%d, want -1..%d", w, MaxWorker)
		}
		if n := len(it.GetSeconds()); n > MaxIterations {
			return fieldErr("iterations.seconds", "%d samples, want at most %d", n, MaxIterations)
		}
		for i, x := range it.GetSeconds() {
			if !usableSeconds(x) {
				return fieldErr(fmt.Sprintf("iterations.seconds[%d]", i), "%v, want a time in (0, %v] seconds", x, MaxIterationSeconds)
			}
		}
		if it.GetDropped() < 0 {
			return fieldErr("iterations.dropped", "%d, want >= 0", it.GetDropped())
		}
	case *pb.AgentMessage_Gap:
		g := b.Gap
		if g.GetSamples() < 0 || g.GetIterationReports() < 0 {
			return fieldErr("gap", "negative counts (%d samples, %d iteration reports)", g.GetSamples(), g.GetIterationReports())
		}
	case *pb.AgentMessage_Hello:
		return fieldErr("hello", "a second hello on one stream")
	default:
		return fieldErr("body", "missing")
	}
	return nil
}
