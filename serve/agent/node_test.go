package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/prometheus/procfs"

	"github.com/drover-sched/drover/serve/agent"
)

// newSampler returns a Sampler of root.
func newSampler(t *testing.T, root string) *agent.Sampler {
	t.Helper()
	s, err := agent.NewSampler(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sampleFixtures samples testdata/<node>/t0 at t0 and t1 at t0+10s.
func sampleFixtures(t *testing.T, node string) (first, second agent.Reading) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	useSnapshot(t, root, node, "t0")
	s := newSampler(t, root)
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

	memT0 := agent.Pressure{Available: true, HasFull: true,
		Some: procfs.PSILine{Avg10: 1.5, Avg60: 0.8, Avg300: 0.2, Total: 1000000},
		Full: procfs.PSILine{Avg10: 0.5, Avg60: 0.3, Avg300: 0.1, Total: 400000},
	}
	cpuT0 := agent.Pressure{Available: true, HasFull: true,
		Some: procfs.PSILine{Avg10: 10, Avg60: 8, Avg300: 5, Total: 50000000},
	}
	wantFirst := agent.Reading{
		Time:   t0,
		NumCPU: 4,
		// 12 GiB of 16 GiB available.
		MemTotalBytes:     16 << 30,
		MemAvailableBytes: 12 << 30,
		MemUsed:           0.25,
		MemPressure:       memT0,
		CPUPressure:       cpuT0,
	}
	wantSecond := agent.Reading{
		Time:    t0.Add(10 * time.Second),
		Elapsed: 10 * time.Second,
		NumCPU:  4,
		// cpu line: total 95500 -> 96500 jiffies (+1000); idle 80000 ->
		// 80200 and iowait 1500 -> 1550 (+250): 1 - 250/1000.
		CPUUtil:      0.75,
		CPUUtilKnown: true,
		// 4 GiB of 16 GiB available.
		MemTotalBytes:     16 << 30,
		MemAvailableBytes: 4 << 30,
		MemUsed:           0.75,
		MemPressure: agent.Pressure{
			Available: true,
			HasFull:   true,
			Some:      procfs.PSILine{Avg10: 20, Avg60: 4.1, Avg300: 1, Total: 3000000},
			Full:      procfs.PSILine{Avg10: 5, Avg60: 1.1, Avg300: 0.3, Total: 900000},
			// some total +2,000,000 us and full +500,000 us in 10 s.
			SomeStalled:  0.2,
			FullStalled:  0.05,
			StalledKnown: true,
		},
		CPUPressure: agent.Pressure{
			Available: true,
			HasFull:   true,
			Some:      procfs.PSILine{Avg10: 40, Avg60: 14, Avg300: 6.5, Total: 54000000},
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

// TestSamplerErrors: a malformed or missing file is an error naming the
// root and the file, never a panic (the library panics on some lines cut
// short), and the sampler keeps its previous sample, so the next good one
// measures from the last good one.
func TestSamplerErrors(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	useSnapshot(t, root, "node-a", "t0")
	s := newSampler(t, root)
	if _, err := s.Sample(t0); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, data string
	}{
		{"cpu counter not a number", "stat", "cpu 1 2 x 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n"},
		{"negative cpu counter", "stat", "cpu 1 2 -3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n"},
		{"no cpuN lines", "stat", "cpu 1 2 3 4 5 6 7 8\n"},
		{"meminfo line cut short", "meminfo", "MemTotal: 16 kB\nMemAvailable:\n"},
		{"no MemAvailable", "meminfo", "MemTotal: 16 kB\nMemFree: 8 kB\n"},
		{"MemTotal 0", "meminfo", "MemTotal: 0 kB\nMemAvailable: 0 kB\n"},
		{"more available than total", "meminfo", "MemTotal: 16 kB\nMemAvailable: 17 kB\n"},
		{"net/dev line cut short", "net/dev", "h1\nh2\n  eth0: 1 2 3\n"},
		{"net/dev counter not a number", "net/dev", "h1\nh2\n  eth0: 1 2 3 4 5 6 7 8 x 10 11 12 13 14 15 16\n"},
		{"PSI without some", "pressure/memory", "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"},
		{"PSI not key=value", "pressure/cpu", "some avg10 1 total=2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useSnapshot(t, root, "node-a", "t0")
			if err := os.WriteFile(filepath.Join(root, "proc", tt.file), []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := s.Sample(t0.Add(5 * time.Second))
			if want := "agent: root " + root + ": proc/" + tt.file + ": "; !strings.HasPrefix(errString(err), want) {
				t.Errorf("error %q, want one starting %q", errString(err), want)
			}
		})
	}

	// A missing required file is an error too.
	if err := os.Remove(filepath.Join(root, "proc", "stat")); err != nil {
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

// TestNewSamplerMissingRoot: a root without proc/ is refused at once.
func TestNewSamplerMissingRoot(t *testing.T) {
	if _, err := agent.NewSampler(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no proc directory") {
		t.Errorf("NewSampler of an empty root: %v, want an error saying there is no proc directory", err)
	}
}

func TestSamplerClockStandsStill(t *testing.T) {
	// Two samples at one instant: jiffies still give a utilisation, but
	// there is no rate per second.
	root := filepath.Join(t.TempDir(), "root")
	useSnapshot(t, root, "node-a", "t0")
	s := newSampler(t, root)
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
	s := newSampler(t, "/")
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
	if r.MemUsed < 0 || r.MemUsed > 1 || r.MemTotalBytes == 0 {
		t.Errorf("memory: total %d, available %d, used %v", r.MemTotalBytes, r.MemAvailableBytes, r.MemUsed)
	}
	if r.NetKnown && (r.NetRxBytesPerSec < 0 || r.NetTxBytesPerSec < 0) {
		t.Errorf("net rates %v, %v, want >= 0", r.NetRxBytesPerSec, r.NetTxBytesPerSec)
	}
	for _, p := range []agent.Pressure{r.MemPressure, r.CPUPressure} {
		if p.StalledKnown && (p.SomeStalled < 0 || p.SomeStalled > 1 || p.FullStalled < 0 || p.FullStalled > 1) {
			t.Errorf("pressure %+v: stall shares outside [0, 1]", p)
		}
	}
	t.Logf("this machine: %d CPUs, util %.3f (known %v), mem used %.3f, mem PSI %v, net rx %.0f B/s tx %.0f B/s, notes %q",
		r.NumCPU, r.CPUUtil, r.CPUUtilKnown, r.MemUsed, r.MemPressure.Available, r.NetRxBytesPerSec, r.NetTxBytesPerSec, r.Notes)
}

// errString returns err's message, or "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// FuzzSample writes arbitrary /proc/stat, meminfo, net/dev and
// pressure/memory contents under a root and samples it twice: never a
// panic, an error always names the root, and a reading's shares stay in
// [0, 1] and its rates non-negative. The corpus starts from the fixtures.
func FuzzSample(f *testing.F) {
	files := []string{"stat", "meminfo", "net/dev", "pressure/memory"}
	for _, snap := range []string{"t0", "t1"} {
		var seed [4][]byte
		for i, name := range files {
			data, err := os.ReadFile(filepath.Join("testdata", "node-a", snap, "proc", name))
			if err != nil {
				f.Fatal(err)
			}
			seed[i] = data
		}
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	f.Fuzz(func(t *testing.T, stat, meminfo, netdev, psi []byte) {
		root := filepath.Join(t.TempDir(), "root")
		useSnapshot(t, root, "node-a", "t0")
		s := newSampler(t, root)
		if _, err := s.Sample(t0); err != nil {
			t.Fatal(err)
		}
		for i, data := range [][]byte{stat, meminfo, netdev, psi} {
			if err := os.WriteFile(filepath.Join(root, "proc", files[i]), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 2 {
			r, err := s.Sample(t0.Add(time.Duration(i+1) * time.Second))
			if err != nil {
				if !strings.HasPrefix(err.Error(), "agent: root "+root+": proc/") {
					t.Fatalf("error %q does not name the root and file", err)
				}
				continue
			}
			for _, v := range []float64{r.CPUUtil, r.MemUsed, r.MemPressure.SomeStalled, r.MemPressure.FullStalled} {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("share %v outside [0, 1] in %+v", v, r)
				}
			}
			if r.NetRxBytesPerSec < 0 || r.NetTxBytesPerSec < 0 {
				t.Fatalf("negative rates in %+v", r)
			}
		}
	})
}
