package procfs_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/internal/procfs"
)

// addFixtures seeds f with every fixture file at rel under testdata's
// snapshots (testdata/<node>/<snap>/<rel>).
func addFixtures(f *testing.F, rel string) {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*", "*", rel))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// checkErr fails unless err, when present, starts with the file's name, so
// the agent's log says which file was wrong.
func checkErr(t *testing.T, name string, err error) {
	t.Helper()
	if err != nil && !strings.HasPrefix(err.Error(), name+":") {
		t.Fatalf("error %q does not start with %q", err, name+":")
	}
}

func FuzzStat(f *testing.F) {
	addFixtures(f, "proc/stat")
	f.Add([]byte("cpu 1 2 3 4\n"))
	f.Add([]byte("cpu 18446744073709551615 1 0 0 0 0 0 0\n"))
	f.Add([]byte("cpu0 1\ncpu"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := procfs.ParseStat("proc/stat", data)
		checkErr(t, "proc/stat", err)
		if err != nil {
			return
		}
		if s.NumCPU < 0 || s.Idle+s.IOWait > s.Total() {
			t.Fatalf("inconsistent %+v (total %d)", s, s.Total())
		}
		// Utilisation against itself is unknown; against zero, when any
		// time was counted, it is a share.
		if _, ok := procfs.CPUUtil(s, s); ok {
			t.Fatal("CPUUtil of a sample against itself is known")
		}
		if u, ok := procfs.CPUUtil(procfs.CPUStat{}, s); ok && (u < 0 || u > 1 || math.IsNaN(u)) {
			t.Fatalf("CPUUtil from zero = %v", u)
		}
	})
}

func FuzzPSI(f *testing.F) {
	addFixtures(f, "proc/pressure/memory")
	addFixtures(f, "proc/pressure/cpu")
	f.Add([]byte("some avg10=NaN avg60=0 avg300=0 total=0\n"))
	f.Add([]byte("some avg10=1e2 avg60=0x1p-2 avg300=0 total=0 avg10=3\n"))
	f.Add([]byte("full avg10=0 avg60=0 avg300=0 total=0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := procfs.ParsePSI("proc/pressure/memory", data)
		checkErr(t, "proc/pressure/memory", err)
		if err != nil {
			return
		}
		for _, l := range []procfs.PSILine{p.Some, p.Full} {
			for _, v := range []float64{l.Avg10, l.Avg60, l.Avg300} {
				if !(v >= 0 && v <= 100) {
					t.Fatalf("average %v is not a percentage in %+v", v, p)
				}
			}
		}
		if !p.HasFull && p.Full != (procfs.PSILine{}) {
			t.Fatalf("full line values without a full line: %+v", p)
		}
	})
}

func FuzzMeminfo(f *testing.F) {
	addFixtures(f, "proc/meminfo")
	f.Add([]byte("MemTotal: 18014398509481984 kB\nMemAvailable: 0 kB\n"))
	f.Add([]byte("MemTotal:1 kB\nMemAvailable:1 kB"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := procfs.ParseMeminfo("proc/meminfo", data)
		checkErr(t, "proc/meminfo", err)
		if err != nil {
			return
		}
		if m.TotalBytes == 0 || m.AvailableBytes > m.TotalBytes {
			t.Fatalf("inconsistent %+v", m)
		}
		if u := m.UsedShare(); !(u >= 0 && u <= 1) {
			t.Fatalf("UsedShare = %v for %+v", u, m)
		}
	})
}

func FuzzNetDev(f *testing.F) {
	addFixtures(f, "proc/net/dev")
	f.Add([]byte("eth0:1 0 0 0 0 0 0 0 2 0 0 0 0 0 0 0\n"))
	f.Add([]byte(":\n"))
	f.Add([]byte("a b: 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		devs, err := procfs.ParseNetDev("proc/net/dev", data)
		checkErr(t, "proc/net/dev", err)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, d := range devs {
			if d.Name == "" || strings.ContainsAny(d.Name, " \t:|") || seen[d.Name] {
				t.Fatalf("bad or repeated interface name %q in %+v", d.Name, devs)
			}
			seen[d.Name] = true
		}
		// Against itself one second later: zero, known.
		if rx, tx, ok := procfs.NetRates(devs, devs, time.Second); rx != 0 || tx != 0 || !ok {
			t.Fatalf("NetRates against itself = %v, %v, %v", rx, tx, ok)
		}
	})
}
