package agent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/serve/agent"
)

// The build's own GPU source on a machine without GPUs (the default
// build's stub, or NVML without a driver under -tags nvml): the hello
// says GPU telemetry is off and why, the log says it once, and samples
// carry no GPU readings.
func TestDefaultGPUSourceWithoutGPUs(t *testing.T) {
	if agent.NewGPUSource().(agent.GPUDescriber).DescribeGPUs().Available {
		t.Skip("this machine has GPUs")
	}
	h := newHarness(t)
	h.start()
	cfg := h.config(fixtureRoot(t, "node-a", "t0"))
	cfg.GPU = nil // the default
	h.run(t, cfg)
	hello := h.next(t).GetHello()
	if hello.GetGpuTelemetry() || hello.GetGpuNote() == "" {
		t.Fatalf("hello %v: want gpu_telemetry false with a note", hello)
	}
	for i := range 3 {
		if i > 0 {
			h.clock.tick(t, t0.Add(time.Duration(i)*time.Second))
		}
		if s := h.next(t).GetSample(); s == nil || len(s.Gpus) != 0 {
			t.Fatalf("sample %v, want one without GPU readings", s)
		}
	}
	if n := strings.Count(h.log.String(), hello.GetGpuNote()); n != 1 {
		t.Errorf("said %d times, want once:\n%s", n, h.log)
	}
	t.Logf("gpu_note: %s", hello.GetGpuNote())
}
