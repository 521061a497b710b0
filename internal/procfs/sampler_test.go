package procfs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/drover-sched/drover/internal/procfs"
)

// t0 is the fixtures' first sample time; their second is ten seconds later.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// useSnapshot makes root hold a copy of testdata/<node>/<snap>, replacing
// what it held: the way a node's /proc changes under a running agent.
func useSnapshot(t *testing.T, root, node, snap string) {
	t.Helper()
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", node, snap))); err != nil {
		t.Fatal(err)
	}
}

// sampleFixtures samples testdata/<node>/t0 at t0 and t1 at t0+10s.
func sampleFixtures(t *testing.T, node string) (first, second procfs.Reading) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	useSnapshot(t, root, node, "t0")
	s := procfs.New(root)
	first, err := s.Sample(t0)
	if err != nil {
		t.Fatal(err)
	}
	useSnapshot(t, root, node, "t1")
	second, err = s.Sample(t0.Add(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return first, second
}

func TestSamplerNodeA(t *testing.T) {
	first, second := sampleFixtures(t, "node-a")

	memT0 := procfs.PSI{
		Some:    procfs.PSILine{Avg10: 1.5, Avg60: 0.8, Avg300: 0.2, Total: 1000000},
		Full:    procfs.PSILine{Avg10: 0.5, Avg60: 0.3, Avg300: 0.1, Total: 400000},
		HasFull: true,
	}
	cpuT0 := procfs.PSI{
		Some:    procfs.PSILine{Avg10: 10, Avg60: 8, Avg300: 5, Total: 50000000},
		HasFull: true,
	}
	wantFirst := procfs.Reading{
		Time:   t0,
		NumCPU: 4,
		// 12 GiB of 16 GiB available.
		Mem:         procfs.Meminfo{TotalBytes: 16 << 30, AvailableBytes: 12 << 30},
		MemUsed:     0.25,
		MemPressure: procfs.Pressure{Available: true, PSI: memT0},
		CPUPressure: procfs.Pressure{Available: true, PSI: cpuT0},
	}
	wantSecond := procfs.Reading{
		Time:    t0.Add(10 * time.Second),
		Elapsed: 10 * time.Second,
		NumCPU:  4,
		// cpu line: total 95500 -> 96500 jiffies (+1000); idle 80000 ->
		// 80200 and iowait 1500 -> 1550 (+250): 1 - 250/1000.
		CPUUtil:      0.75,
		CPUUtilKnown: true,
		// 4 GiB of 16 GiB available.
		Mem:     procfs.Meminfo{TotalBytes: 16 << 30, AvailableBytes: 4 << 30},
		MemUsed: 0.75,
		MemPressure: procfs.Pressure{
			Available: true,
			PSI: procfs.PSI{
				Some:    procfs.PSILine{Avg10: 20, Avg60: 4.1, Avg300: 1, Total: 3000000},
				Full:    procfs.PSILine{Avg10: 5, Avg60: 1.1, Avg300: 0.3, Total: 900000},
				HasFull: true,
			},
			// some total +2,000,000 us and full +500,000 us in 10 s.
			SomeStalled:  0.2,
			FullStalled:  0.05,
			StalledKnown: true,
		},
		CPUPressure: procfs.Pressure{
			Available: true,
			PSI: procfs.PSI{
				Some:    procfs.PSILine{Avg10: 40, Avg60: 14, Avg300: 6.5, Total: 54000000},
				HasFull: true,
			},
			// some total +4,000,000 us in 10 s; full stays 0.
			SomeStalled:  0.4,
			StalledKnown: true,
		},
		// rx: eth0 +25,000,000 and ib0 +1,250,000,000 bytes in 10 s; tx:
		// eth0 +5,000,000 and ib0 +1,250,000,000. lo is left out and veth1
		// is new in t1, so neither adds anything.
		NetRxBytesPerSec: 127.5e6,
		NetTxBytesPerSec: 125.5e6,
		NetKnown:         true,
	}
	approx := cmpopts.EquateApprox(0, 1e-12)
	if d := cmp.Diff(wantFirst, first, approx); d != "" {
		t.Errorf("first sample (-want,+got):\n%s", d)
	}
	if d := cmp.Diff(wantSecond, second, approx); d != "" {
		t.Errorf("second sample (-want,+got):\n%s", d)
	}
}

func TestSamplerNodeB(t *testing.T) {
	// node-b: an older kernel without PSI, and eth0's counters reset (a
	// driver reload) between the snapshots.
	first, second := sampleFixtures(t, "node-b")
	if first.MemPressure.Available || first.CPUPressure.Available {
		t.Errorf("pressure available on a root without proc/pressure: %+v, %+v", first.MemPressure, first.CPUPressure)
	}
	if len(first.Notes) != 2 ||
		!strings.HasPrefix(first.Notes[0], "proc/pressure/memory: not provided by this kernel") ||
		!strings.HasPrefix(first.Notes[1], "proc/pressure/cpu: not provided by this kernel") {
		t.Errorf("first sample's notes = %q, want one per missing PSI file", first.Notes)
	}
	if len(second.Notes) != 0 {
		t.Errorf("second sample's notes = %q, want none: a missing file is reported once", second.Notes)
	}
	if second.MemPressure.Available || second.CPUPressure.Available {
		t.Errorf("pressure available in the second sample")
	}
	// cpu line: total 26000 -> 27000 (+1000), idle +500: 1 - 500/1000.
	if !second.CPUUtilKnown || second.CPUUtil != 0.5 {
		t.Errorf("CPUUtil = %v (known %v), want 0.5", second.CPUUtil, second.CPUUtilKnown)
	}
	if second.NumCPU != 2 {
		t.Errorf("NumCPU = %d, want 2", second.NumCPU)
	}
	// 2 GiB of 8 GiB available.
	if second.MemUsed != 0.75 {
		t.Errorf("MemUsed = %v, want 0.75", second.MemUsed)
	}
	if second.NetKnown || second.NetRxBytesPerSec != 0 || second.NetTxBytesPerSec != 0 {
		t.Errorf("net rates across a counter reset = %v, %v (known %v), want none",
			second.NetRxBytesPerSec, second.NetTxBytesPerSec, second.NetKnown)
	}
}

func TestSamplerErrors(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	useSnapshot(t, root, "node-a", "t0")
	s := procfs.New(root)
	if _, err := s.Sample(t0); err != nil {
		t.Fatal(err)
	}

	// A malformed file is an error naming file and line; the sampler keeps
	// its previous sample.
	stat := filepath.Join(root, "proc", "stat")
	if err := os.WriteFile(stat, []byte("intr 1\ncpu 1 2 3 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Sample(t0.Add(5 * time.Second))
	if want := "procfs: root " + root + ": proc/stat:2: cpu line has 4 fields, want at least 8"; errString(err) != want {
		t.Errorf("malformed stat: error %q, want %q", errString(err), want)
	}

	// A missing required file is an error too.
	if err := os.Remove(stat); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sample(t0.Add(6 * time.Second)); err == nil || !strings.Contains(err.Error(), "proc/stat") {
		t.Errorf("missing stat: error %v, want one naming proc/stat", err)
	}

	// The next good sample measures from the last good one, 10 s before.
	useSnapshot(t, root, "node-a", "t1")
	r, err := s.Sample(t0.Add(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if r.Elapsed != 10*time.Second || r.CPUUtil != 0.75 || r.NetRxBytesPerSec != 127.5e6 {
		t.Errorf("after errors: Elapsed %v, CPUUtil %v, rx %v; want 10s, 0.75, 1.275e8", r.Elapsed, r.CPUUtil, r.NetRxBytesPerSec)
	}
}

func TestSamplerClockStandsStill(t *testing.T) {
	// Two samples at one instant: jiffies still give a utilisation, but
	// there is no rate per second.
	root := filepath.Join(t.TempDir(), "root")
	useSnapshot(t, root, "node-a", "t0")
	s := procfs.New(root)
	if _, err := s.Sample(t0); err != nil {
		t.Fatal(err)
	}
	useSnapshot(t, root, "node-a", "t1")
	r, err := s.Sample(t0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.CPUUtilKnown || r.NetKnown || r.MemPressure.StalledKnown || r.CPUPressure.StalledKnown {
		t.Errorf("known: cpu %v net %v mem stall %v cpu stall %v; want true false false false",
			r.CPUUtilKnown, r.NetKnown, r.MemPressure.StalledKnown, r.CPUPressure.StalledKnown)
	}
}

// TestSamplerRealProc checks readings from this machine's /proc for sanity
// only: the values are whatever the machine is doing.
func TestSamplerRealProc(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	s := procfs.New("/")
	start := time.Now()
	if _, err := s.Sample(start); err != nil {
		t.Fatal(err)
	}
	// Wait for the jiffies to move (USER_HZ is 100, so 50 ms is 5 ticks on
	// each CPU).
	time.Sleep(50 * time.Millisecond)
	r, err := s.Sample(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if r.NumCPU <= 0 {
		t.Errorf("NumCPU = %d, want > 0", r.NumCPU)
	}
	if r.CPUUtilKnown && (r.CPUUtil < 0 || r.CPUUtil > 1) {
		t.Errorf("CPUUtil = %v, want in [0, 1]", r.CPUUtil)
	}
	if r.MemUsed < 0 || r.MemUsed > 1 || r.Mem.TotalBytes == 0 {
		t.Errorf("memory: %+v, used %v", r.Mem, r.MemUsed)
	}
	if r.NetKnown && (r.NetRxBytesPerSec < 0 || r.NetTxBytesPerSec < 0) {
		t.Errorf("net rates %v, %v, want >= 0", r.NetRxBytesPerSec, r.NetTxBytesPerSec)
	}
	for _, p := range []procfs.Pressure{r.MemPressure, r.CPUPressure} {
		if p.StalledKnown && (p.SomeStalled < 0 || p.SomeStalled > 1 || p.FullStalled < 0 || p.FullStalled > 1) {
			t.Errorf("pressure %+v: stall shares outside [0, 1]", p)
		}
	}
	t.Logf("this machine: %d CPUs, util %.3f (known %v), mem used %.3f, mem PSI %v, net rx %.0f B/s tx %.0f B/s, notes %q",
		r.NumCPU, r.CPUUtil, r.CPUUtilKnown, r.MemUsed, r.MemPressure.Available, r.NetRxBytesPerSec, r.NetTxBytesPerSec, r.Notes)
}
