package loadgen

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A /proc/PID/stat line (Linux 6.x) whose command name holds a space and
// a ')': utime 1234 and stime 56 ticks are 12.9 s at USER_HZ 100.
const statLine = "4242 (drover (x) y) S 1 4242 4242 0 -1 4194560 1000 0 0 0 1234 56 0 0 20 0 9 0 123456 1300000000 6000 18446744073709551615 1 1 0 0 0 0 0 0 2143420159 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

const statusText = `Name:	drover
Umask:	0022
State:	S (sleeping)
VmPeak:	 1300000 kB
VmHWM:	   30720 kB
VmRSS:	   24576 kB
RssAnon:	   10000 kB
Threads:	9
`

func TestParseProc(t *testing.T) {
	cpu, err := ParseProcStat([]byte(statLine))
	if err != nil || cpu != 12900*time.Millisecond {
		t.Errorf("ParseProcStat = %v, %v; want 12.9s", cpu, err)
	}
	rss, hwm, err := ParseProcStatus([]byte(statusText))
	if err != nil || rss != 24<<20 || hwm != 30<<20 {
		t.Errorf("ParseProcStatus = %d, %d, %v; want 24 MiB, 30 MiB", rss, hwm, err)
	}
	// A kernel thread has no Vm lines.
	if rss, hwm, err := ParseProcStatus([]byte("Name:\tkthreadd\n")); rss != 0 || hwm != 0 || err != nil {
		t.Errorf("no Vm lines: %d, %d, %v", rss, hwm, err)
	}
	for _, bad := range []string{"", "1 (x S 1", "1 (x) S 1 2 3", strings.Replace(statLine, " 1234 ", " -3 ", 1)} {
		if _, err := ParseProcStat([]byte(bad)); err == nil {
			t.Errorf("ParseProcStat(%q): no error", bad)
		}
	}
	for _, bad := range []string{"VmRSS: 12 MB\n", "VmHWM: x kB\n", "VmRSS:\n"} {
		if _, _, err := ParseProcStatus([]byte(bad)); err == nil {
			t.Errorf("ParseProcStatus(%q): no error", bad)
		}
	}
}

func TestWatchProcSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	w, err := WatchProc(os.Getpid(), 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// Burn some CPU (at least 20 ms: two ticks).
	x := 0.0
	for start := time.Now(); time.Since(start) < 60*time.Millisecond; {
		for i := range 10000 {
			x += float64(i)
		}
	}
	u, err := w.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if u.CPU <= 0 || u.PeakRSS <= 0 || u.HWM < u.PeakRSS/2 {
		t.Errorf("usage %+v (x %g): want CPU > 0, RSS > 0", u, x)
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte(statLine))
	f.Add([]byte("1 ()) S"))
	f.Add([]byte(")00 0 0 0000 0 00 0000000 0000 0 0 0 12000000000000 0")) // overflowed to a negative duration
	f.Fuzz(func(t *testing.T, b []byte) {
		if cpu, err := ParseProcStat(b); err == nil && cpu < 0 {
			t.Errorf("negative CPU %v", cpu)
		}
	})
}

func FuzzParseProcStatus(f *testing.F) {
	f.Add([]byte(statusText))
	f.Add([]byte("VmRSS: 1 kB"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if rss, hwm, err := ParseProcStatus(b); err == nil && (rss < 0 || hwm < 0) {
			t.Errorf("negative size %d, %d", rss, hwm)
		}
	})
}
