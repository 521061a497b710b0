//go:build nvml

package agent

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"

	pb "github.com/drover-sched/drover/serve/proto"
)

// noDriver is an NVML without a driver: Init fails. Any other call
// panics on the nil embedded Interface, so the test sees it.
type noDriver struct {
	nvml.Interface
	inits int
}

func (n *noDriver) Init() nvml.Return { n.inits++; return nvml.ERROR_LIBRARY_NOT_FOUND }

func TestNVMLNoDriver(t *testing.T) {
	lib := &noDriver{}
	src := newNVMLSource(lib)
	info := src.DescribeGPUs()
	if info.Available || !strings.Contains(info.Note, "ERROR_LIBRARY_NOT_FOUND") {
		t.Errorf("DescribeGPUs: %+v, want unavailable with a note naming the failure", info)
	}
	for i := range 3 {
		if r, err := src.Read(time.Unix(int64(i), 0)); r != nil || err != nil {
			t.Errorf("Read: %v, %v; want nothing", r, err)
		}
	}
	if err := src.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if lib.inits != 1 {
		t.Errorf("Init called %d times, want once", lib.inits)
	}
}

// TestNVMLThisMachine runs the real NVML: without a driver (this
// project's CI machines) Init fails and the source says so; with one it
// finds the GPUs.
func TestNVMLThisMachine(t *testing.T) {
	src := NewGPUSource().(*nvmlSource)
	defer src.Close()
	info := src.DescribeGPUs()
	t.Logf("NVML: %+v", info)
	r, err := src.Read(time.Now())
	if !info.Available {
		if info.Note == "" || r != nil || err != nil {
			t.Errorf("no driver: note %q, Read %v, %v", info.Note, r, err)
		}
		return
	}
	if info.Count == 0 || len(r) != info.Count {
		t.Errorf("%d GPUs, %d readings (%v)", info.Count, len(r), err)
	}
	for _, g := range r {
		if !(g.Util >= 0 && g.Util <= 1 && g.MemUsed >= 0 && g.MemUsed <= 1) {
			t.Errorf("reading %v out of range", g)
		}
	}
}

// fakeNVML has two GPUs with fixed readings; GPU 1 has no NVLink.
type fakeNVML struct {
	nvml.Interface
	devs []*fakeDevice
}

func (f *fakeNVML) Init() nvml.Return                  { return nvml.SUCCESS }
func (f *fakeNVML) Shutdown() nvml.Return              { return nvml.SUCCESS }
func (f *fakeNVML) DeviceGetCount() (int, nvml.Return) { return len(f.devs), nvml.SUCCESS }
func (f *fakeNVML) DeviceGetHandleByIndex(i int) (nvml.Device, nvml.Return) {
	return f.devs[i], nvml.SUCCESS
}

type fakeDevice struct {
	nvml.Device
	util         uint32
	used, total  uint64
	rxKB, txKB   uint32
	nvlink       bool
	nvTx, nvRx   uint64 // KiB counters
	failPCIeRead bool
}

func (d *fakeDevice) GetName() (string, nvml.Return) { return "NVIDIA H200", nvml.SUCCESS }
func (d *fakeDevice) GetUtilizationRates() (nvml.Utilization, nvml.Return) {
	return nvml.Utilization{Gpu: d.util}, nvml.SUCCESS
}
func (d *fakeDevice) GetMemoryInfo() (nvml.Memory, nvml.Return) {
	return nvml.Memory{Total: d.total, Used: d.used, Free: d.total - d.used}, nvml.SUCCESS
}
func (d *fakeDevice) GetPcieThroughput(c nvml.PcieUtilCounter) (uint32, nvml.Return) {
	if d.failPCIeRead {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	if c == nvml.PCIE_UTIL_RX_BYTES {
		return d.rxKB, nvml.SUCCESS
	}
	return d.txKB, nvml.SUCCESS
}
func (d *fakeDevice) GetFieldValues(v []nvml.FieldValue) nvml.Return {
	if !d.nvlink {
		return nvml.ERROR_NOT_SUPPORTED
	}
	for i := range v {
		c := d.nvTx
		if v[i].FieldId == nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX {
			c = d.nvRx
		}
		v[i].ValueType = uint32(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG)
		binary.NativeEndian.PutUint64(v[i].Value[:], c)
	}
	return nvml.SUCCESS
}

func TestNVMLReadings(t *testing.T) {
	d0 := &fakeDevice{util: 85, used: 30 << 30, total: 120 << 30, rxKB: 1000, txKB: 2000, nvlink: true, nvTx: 1000, nvRx: 3000}
	d1 := &fakeDevice{util: 5, used: 0, total: 80 << 30, failPCIeRead: true}
	src := newNVMLSource(&fakeNVML{devs: []*fakeDevice{d0, d1}})
	if info := src.DescribeGPUs(); info != (GPUInfo{Available: true, Count: 2, Type: "NVIDIA H200"}) {
		t.Errorf("DescribeGPUs: %+v", info)
	}
	start := time.Unix(1000, 0)
	if _, err := src.Read(start); err == nil || !strings.Contains(err.Error(), "GPU 1: PCIe rx") {
		t.Errorf("first Read error %v, want GPU 1's PCIe failure", err)
	}
	// 10 s later GPU 0 moved 20,480 KiB more over NVLink (tx 10,240 and
	// rx 10,240): 20,480 * 1024 / 10 bytes per second.
	d0.nvTx += 10240
	d0.nvRx += 10240
	got, _ := src.Read(start.Add(10 * time.Second))
	nan := math.NaN()
	want := []*pb.GPUReading{
		{Index: 0, Util: 0.85, MemUsed: 0.25, PcieRxBps: 1000 * 1024, PcieTxBps: 2000 * 1024, NvlinkBps: 20480 * 1024 / 10},
		{Index: 1, Util: 0.05, MemUsed: 0, PcieRxBps: nan, PcieTxBps: nan},
	}
	if diff := cmp.Diff(want, got, protocmp.Transform(), cmpopts.EquateNaNs(), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
}
