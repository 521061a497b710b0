package procfs_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/internal/procfs"
)

// readFixture returns a fixture file's contents.
func readFixture(t testing.TB, path ...string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// errString returns err's message, or "" for nil, so a table can hold both.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    procfs.CPUStat
		wantErr string
	}{{
		name: "fixture node-a t0",
		data: string(readFixture(t, "node-a", "t0", "proc", "stat")),
		want: procfs.CPUStat{User: 10000, Nice: 500, System: 3000, Idle: 80000, IOWait: 1500, IRQ: 200, SoftIRQ: 300, NumCPU: 4},
	}, {
		name: "eight fields, as before guest time (node-b)",
		data: string(readFixture(t, "node-b", "t0", "proc", "stat")),
		want: procfs.CPUStat{User: 5000, System: 1000, Idle: 20000, NumCPU: 2},
	}, {
		name: "guest fields read, extra fields ignored",
		data: "cpu 1 2 3 4 5 6 7 8 9 10 11 12\n",
		want: procfs.CPUStat{User: 1, Nice: 2, System: 3, Idle: 4, IOWait: 5, IRQ: 6, SoftIRQ: 7, Steal: 8, Guest: 9, GuestNice: 10},
	}, {
		name: "cpu-prefixed labels that are not cpuN are not counted",
		data: "cpu 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\ncpux 1\ncpu_total 9\n",
		want: procfs.CPUStat{User: 1, Nice: 2, System: 3, Idle: 4, IOWait: 5, IRQ: 6, SoftIRQ: 7, Steal: 8, NumCPU: 1},
	}, {
		name:    "two cpu lines",
		data:    "cpu 1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\ncpu 1 2 3 4 5 6 7 8\n",
		wantErr: "proc/stat:3: second cpu line",
	}, {
		name:    "too few fields",
		data:    "intr 1\nctxt 2\ncpu 1 2 3 4\n",
		wantErr: "proc/stat:3: cpu line has 4 fields, want at least 8",
	}, {
		name:    "not a number",
		data:    "cpu 1 2 3 -4 5 6 7 8\n",
		wantErr: `proc/stat:1: cpu field 4 is "-4", want a count of jiffies`,
	}, {
		name:    "overflow",
		data:    "cpu 18446744073709551615 1 0 0 0 0 0 0\n",
		wantErr: "proc/stat:1: cpu line's counters overflow 64 bits",
	}, {
		name:    "no cpu line",
		data:    "cpu0 1 2 3 4 5 6 7 8\n",
		wantErr: "proc/stat: no cpu line",
	}, {
		name:    "empty",
		data:    "",
		wantErr: "proc/stat: no cpu line",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := procfs.ParseStat("proc/stat", []byte(tt.data))
			if d := cmp.Diff(tt.wantErr, errString(err)); d != "" {
				t.Fatalf("error (-want,+got):\n%s", d)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ParseStat (-want,+got):\n%s", d)
			}
		})
	}
}

func TestCPUUtil(t *testing.T) {
	// base: total 1000 jiffies, idle+iowait 800.
	base := procfs.CPUStat{User: 150, System: 50, Idle: 700, IOWait: 100}
	tests := []struct {
		name   string
		cur    procfs.CPUStat
		want   float64
		wantOK bool
	}{
		// total delta 1000, idle+iowait delta 250: 1 - 250/1000.
		{"busy 750 of 1000", procfs.CPUStat{User: 800, System: 100, IRQ: 50, Idle: 900, IOWait: 150}, 0.75, true},
		// total delta 100, all of it idle.
		{"idle", procfs.CPUStat{User: 150, System: 50, Idle: 800, IOWait: 100}, 0, true},
		// total delta 100, none of it idle; steal counts as busy.
		{"all steal", procfs.CPUStat{User: 150, System: 50, Idle: 700, IOWait: 100, Steal: 100}, 1, true},
		// iowait fell by 50 while 100 jiffies of user time passed: the
		// idle+iowait delta is negative, clamped to nothing idle.
		{"iowait went backwards", procfs.CPUStat{User: 300, System: 50, Idle: 700, IOWait: 50}, 1, true},
		{"no time passed", base, 0, false},
		{"counters reset", procfs.CPUStat{User: 1, Idle: 1}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := procfs.CPUUtil(base, tt.cur)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("CPUUtil = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestParsePSI(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    procfs.PSI
		wantErr string
	}{{
		name: "fixture memory",
		data: string(readFixture(t, "node-a", "t0", "proc", "pressure", "memory")),
		want: procfs.PSI{
			Some:    procfs.PSILine{Avg10: 1.5, Avg60: 0.8, Avg300: 0.2, Total: 1000000},
			Full:    procfs.PSILine{Avg10: 0.5, Avg60: 0.3, Avg300: 0.1, Total: 400000},
			HasFull: true,
		},
	}, {
		name: "cpu before 5.13: no full line; unknown keys ignored",
		data: "some avg10=2.00 avg60=1.00 avg300=0.50 total=123 avg900=0.1\n",
		want: procfs.PSI{Some: procfs.PSILine{Avg10: 2, Avg60: 1, Avg300: 0.5, Total: 123}},
	}, {
		name:    "missing total",
		data:    "some avg10=0.00 avg60=0.00 avg300=0.00\n",
		wantErr: "proc/pressure/memory:1: some line has no total",
	}, {
		name:    "not key=value",
		data:    "some avg10=0.00 avg60 avg300=0.00 total=0\n",
		wantErr: `proc/pressure/memory:1: "avg60" is not key=value`,
	}, {
		name:    "not a percentage",
		data:    "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=NaN avg60=0.00 avg300=0.00 total=0\n",
		wantErr: `proc/pressure/memory:2: avg10="NaN", want a percentage`,
	}, {
		name:    "over 100 percent",
		data:    "some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n",
		wantErr: `proc/pressure/memory:1: avg10="100.01", want a percentage`,
	}, {
		name:    "negative total",
		data:    "some avg10=0 avg60=0 avg300=0 total=-1\n",
		wantErr: `proc/pressure/memory:1: total="-1", want microseconds`,
	}, {
		name:    "unknown line",
		data:    "some avg10=0 avg60=0 avg300=0 total=0\npartial avg10=0\n",
		wantErr: `proc/pressure/memory:2: line starts with "partial", want some or full`,
	}, {
		name:    "duplicate",
		data:    "some avg10=0 avg60=0 avg300=0 total=0\nsome avg10=0 avg60=0 avg300=0 total=0\n",
		wantErr: "proc/pressure/memory:2: second some line",
	}, {
		name:    "only full",
		data:    "full avg10=0 avg60=0 avg300=0 total=0\n",
		wantErr: "proc/pressure/memory: no some line",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := procfs.ParsePSI("proc/pressure/memory", []byte(tt.data))
			if d := cmp.Diff(tt.wantErr, errString(err)); d != "" {
				t.Fatalf("error (-want,+got):\n%s", d)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ParsePSI (-want,+got):\n%s", d)
			}
		})
	}
}

func TestParseMeminfo(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		want     procfs.Meminfo
		wantUsed float64
		wantErr  string
	}{{
		// 12 GiB available of 16 GiB: a quarter used.
		name:     "fixture node-a t0",
		data:     string(readFixture(t, "node-a", "t0", "proc", "meminfo")),
		want:     procfs.Meminfo{TotalBytes: 16 << 30, AvailableBytes: 12 << 30},
		wantUsed: 0.25,
	}, {
		name:     "nothing available",
		data:     "MemAvailable: 0 kB\nMemTotal: 4 kB\n",
		want:     procfs.Meminfo{TotalBytes: 4096},
		wantUsed: 1,
	}, {
		name:    "no MemAvailable",
		data:    "MemTotal: 1024 kB\nMemFree: 512 kB\n",
		wantErr: "proc/meminfo: no MemAvailable line (kernel before 3.14?)",
	}, {
		name:    "no unit",
		data:    "MemTotal: 1024\nMemAvailable: 512 kB\n",
		wantErr: `proc/meminfo:1: MemTotal is "1024", want a number of kB`,
	}, {
		name:    "overflow",
		data:    "MemTotal: 18446744073709551615 kB\nMemAvailable: 512 kB\n",
		wantErr: `proc/meminfo:1: MemTotal is "18446744073709551615 kB", want a number of kB`,
	}, {
		name:    "available above total",
		data:    "MemTotal: 1024 kB\nMemAvailable: 2048 kB\n",
		wantErr: "proc/meminfo: MemAvailable 2048 kB exceeds MemTotal 1024 kB",
	}, {
		name:    "zero total",
		data:    "MemTotal: 0 kB\nMemAvailable: 0 kB\n",
		wantErr: "proc/meminfo: MemTotal is 0",
	}, {
		name:    "duplicate",
		data:    "MemTotal: 1 kB\nMemTotal: 1 kB\n",
		wantErr: "proc/meminfo:2: second MemTotal line",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := procfs.ParseMeminfo("proc/meminfo", []byte(tt.data))
			if d := cmp.Diff(tt.wantErr, errString(err)); d != "" {
				t.Fatalf("error (-want,+got):\n%s", d)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ParseMeminfo (-want,+got):\n%s", d)
			}
			if err == nil && got.UsedShare() != tt.wantUsed {
				t.Errorf("UsedShare = %v, want %v", got.UsedShare(), tt.wantUsed)
			}
		})
	}
}

func TestParseNetDev(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    []procfs.NetDev
		wantErr string
	}{{
		name: "fixture node-a t0",
		data: string(readFixture(t, "node-a", "t0", "proc", "net", "dev")),
		want: []procfs.NetDev{
			{Name: "lo", RxBytes: 5000000, TxBytes: 5000000},
			{Name: "eth0", RxBytes: 100000000, TxBytes: 50000000},
			{Name: "ib0", RxBytes: 2000000000, TxBytes: 3000000000},
		},
	}, {
		name: "no space after the colon (old kernels)",
		data: "eth0:1 0 0 0 0 0 0 0 2 0 0 0 0 0 0 0\n",
		want: []procfs.NetDev{{Name: "eth0", RxBytes: 1, TxBytes: 2}},
	}, {
		name: "headers only",
		data: "Inter-| Receive | Transmit\n face |bytes|bytes\n",
	}, {
		name:    "short line",
		data:    "h1|\nh2|\n eth0: 1 2 3\n",
		wantErr: "proc/net/dev:3: interface eth0 has 3 counters, want at least 16",
	}, {
		name:    "no colon",
		data:    "eth0 1 0 0 0 0 0 0 0 2 0 0 0 0 0 0 0\n",
		wantErr: "proc/net/dev:1: line does not start with an interface name and a colon",
	}, {
		name:    "bad counter",
		data:    "eth0: 1 0 0 0 0 0 0 0 x 0 0 0 0 0 0 0\n",
		wantErr: `proc/net/dev:1: interface eth0 counter 9 is "x", want a count`,
	}, {
		name:    "duplicate",
		data:    "eth0: 1 0 0 0 0 0 0 0 2 0 0 0 0 0 0 0\neth0: 1 0 0 0 0 0 0 0 2 0 0 0 0 0 0 0\n",
		wantErr: "proc/net/dev:2: second line for interface eth0",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := procfs.ParseNetDev("proc/net/dev", []byte(tt.data))
			if d := cmp.Diff(tt.wantErr, errString(err)); d != "" {
				t.Fatalf("error (-want,+got):\n%s", d)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ParseNetDev (-want,+got):\n%s", d)
			}
		})
	}
}

func TestNetRates(t *testing.T) {
	prev := []procfs.NetDev{{"lo", 100, 100}, {"eth0", 1000, 2000}, {"ib0", 10000, 20000}}
	tests := []struct {
		name           string
		cur            []procfs.NetDev
		elapsed        time.Duration
		wantRx, wantTx float64
		wantOK         bool
	}{
		// eth0 +1000/+500, ib0 +3000/+1500 over 2 s; lo's +1000 left out.
		{"summed without lo", []procfs.NetDev{{"lo", 1100, 1100}, {"eth0", 2000, 2500}, {"ib0", 13000, 21500}}, 2 * time.Second, 2000, 1000, true},
		// docker0 is new since prev: it adds nothing; ib0 vanished.
		{"interfaces come and go", []procfs.NetDev{{"eth0", 1400, 2200}, {"docker0", 5000, 5000}}, time.Second, 400, 200, true},
		{"reset", []procfs.NetDev{{"eth0", 10, 2500}, {"ib0", 13000, 21500}}, time.Second, 0, 0, false},
		{"loopback reset is ignored", []procfs.NetDev{{"lo", 0, 0}, {"eth0", 1000, 2000}}, time.Second, 0, 0, true},
		{"no time passed", prev, 0, 0, 0, false},
		{"clock went back", prev, -time.Second, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rx, tx, ok := procfs.NetRates(prev, tt.cur, tt.elapsed)
			if rx != tt.wantRx || tx != tt.wantTx || ok != tt.wantOK {
				t.Errorf("NetRates = %v, %v, %v; want %v, %v, %v", rx, tx, ok, tt.wantRx, tt.wantTx, tt.wantOK)
			}
		})
	}
}
