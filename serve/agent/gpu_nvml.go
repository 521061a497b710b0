//go:build nvml

package agent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	pb "github.com/drover-sched/drover/serve/proto"
)

// NewGPUSource returns the build's GPU source: NVML, loaded from the
// driver's libnvidia-ml.so.1 on the first use. Without a driver it
// reports no GPU readings, says why once, and never calls NVML again.
func NewGPUSource() GPUSource { return newNVMLSource(nvml.New()) }

// nvmlSource reads GPUs through NVML. It is used by one goroutine at a
// time (the agent's sampler), apart from init, which a sync.Once guards.
type nvmlSource struct {
	lib  nvml.Interface
	once sync.Once
	info GPUInfo
	devs []nvml.Device
	// prev holds each device's NVLink byte counters at the previous read,
	// for the throughput between reads.
	prev   []nvlinkCounters
	prevAt time.Time
}

// nvlinkCounters are a device's NVLink data counters summed over links,
// in KiB; ok is false when NVML does not provide them.
type nvlinkCounters struct {
	tx, rx uint64
	ok     bool
}

func newNVMLSource(lib nvml.Interface) *nvmlSource { return &nvmlSource{lib: lib} }

// init loads NVML and finds the devices, once.
func (s *nvmlSource) init() {
	s.once.Do(func() {
		if ret := s.lib.Init(); ret != nvml.SUCCESS {
			s.info = GPUInfo{Note: fmt.Sprintf("NVML unavailable (%v: no NVIDIA driver?)", ret)}
			return
		}
		n, ret := s.lib.DeviceGetCount()
		if ret != nvml.SUCCESS {
			s.info = GPUInfo{Note: fmt.Sprintf("NVML device count: %v", ret)}
			s.lib.Shutdown()
			return
		}
		s.info = GPUInfo{Available: true, Count: n}
		var notes []error
		for i := range n {
			d, ret := s.lib.DeviceGetHandleByIndex(i)
			if ret != nvml.SUCCESS {
				notes = append(notes, fmt.Errorf("GPU %d: handle: %v; its readings are NaN", i, ret))
				d = nil
			} else if s.info.Type == "" {
				if name, ret := d.GetName(); ret == nvml.SUCCESS {
					s.info.Type = name
				}
			}
			s.devs = append(s.devs, d)
		}
		s.prev = make([]nvlinkCounters, n)
		if err := errors.Join(notes...); err != nil {
			s.info.Note = err.Error()
		}
	})
}

// DescribeGPUs implements GPUDescriber; it initialises NVML.
func (s *nvmlSource) DescribeGPUs() GPUInfo {
	s.init()
	return s.info
}

// Read implements GPUSource: per device, utilisation, memory in use, PCIe
// throughput (NVML's KB/s taken as KiB/s, turned into bytes per second)
// and NVLink data throughput from the cumulative counters NVML keeps
// (summed over links and directions; 0 on the first read and where NVML
// has no NVLink counters).
func (s *nvmlSource) Read(now time.Time) ([]*pb.GPUReading, error) {
	s.init()
	if !s.info.Available {
		return nil, nil
	}
	elapsed := now.Sub(s.prevAt).Seconds()
	first := s.prevAt.IsZero()
	s.prevAt = now
	var errs []error
	fail := func(i int, what string, ret nvml.Return) {
		errs = append(errs, fmt.Errorf("GPU %d: %s: %v", i, what, ret))
	}
	out := make([]*pb.GPUReading, len(s.devs))
	for i, d := range s.devs {
		nan := math.NaN()
		r := &pb.GPUReading{Index: int32(i), Util: nan, MemUsed: nan, PcieRxBps: nan, PcieTxBps: nan}
		out[i] = r
		if d == nil {
			continue
		}
		if u, ret := d.GetUtilizationRates(); ret == nvml.SUCCESS {
			r.Util = float64(min(u.Gpu, 100)) / 100
		} else {
			fail(i, "utilisation", ret)
		}
		if m, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS && m.Total > 0 {
			r.MemUsed = min(float64(m.Used)/float64(m.Total), 1)
		} else if ret != nvml.SUCCESS {
			fail(i, "memory", ret)
		}
		if v, ret := d.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES); ret == nvml.SUCCESS {
			r.PcieRxBps = float64(v) * 1024
		} else {
			fail(i, "PCIe rx", ret)
		}
		if v, ret := d.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES); ret == nvml.SUCCESS {
			r.PcieTxBps = float64(v) * 1024
		} else {
			fail(i, "PCIe tx", ret)
		}
		cur := readNVLink(d)
		if prev := s.prev[i]; cur.ok && prev.ok && !first && elapsed > 0 && cur.tx >= prev.tx && cur.rx >= prev.rx {
			r.NvlinkBps = float64((cur.tx-prev.tx)+(cur.rx-prev.rx)) * 1024 / elapsed
		}
		s.prev[i] = cur
	}
	return out, errors.Join(errs...)
}

// readNVLink reads d's NVLink data counters summed over links (scope
// UINT_MAX), in one NVML call.
func readNVLink(d nvml.Device) nvlinkCounters {
	fv := []nvml.FieldValue{
		{FieldId: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, ScopeId: math.MaxUint32},
		{FieldId: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX, ScopeId: math.MaxUint32},
	}
	if d.GetFieldValues(fv) != nvml.SUCCESS {
		return nvlinkCounters{}
	}
	var v [2]uint64
	for i, f := range fv {
		if nvml.Return(f.NvmlReturn) != nvml.SUCCESS {
			return nvlinkCounters{}
		}
		switch nvml.ValueType(f.ValueType) {
		case nvml.VALUE_TYPE_UNSIGNED_LONG_LONG, nvml.VALUE_TYPE_UNSIGNED_LONG, nvml.VALUE_TYPE_SIGNED_LONG_LONG:
			v[i] = binary.NativeEndian.Uint64(f.Value[:])
		case nvml.VALUE_TYPE_UNSIGNED_INT:
			v[i] = uint64(binary.NativeEndian.Uint32(f.Value[:4]))
		default:
			return nvlinkCounters{}
		}
	}
	return nvlinkCounters{tx: v[0], rx: v[1], ok: true}
}

// Close shuts NVML down when it was initialised.
func (s *nvmlSource) Close() error {
	if s.info.Available {
		if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
			return fmt.Errorf("NVML shutdown: %v", ret)
		}
	}
	return nil
}
