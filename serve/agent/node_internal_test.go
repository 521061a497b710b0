package agent

import (
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

func TestCPUUtil(t *testing.T) {
	// base: total 1000 jiffies, idle+iowait 800.
	base := cpuJiffies{total: 1000, idle: 800}
	tests := []struct {
		name   string
		cur    cpuJiffies
		want   float64
		wantOK bool
	}{
		// total delta 1000, idle+iowait delta 250: 1 - 250/1000.
		{"busy 750 of 1000", cpuJiffies{total: 2000, idle: 1050}, 0.75, true},
		// total delta 100, all of it idle.
		{"idle", cpuJiffies{total: 1100, idle: 900}, 0, true},
		// total delta 100, none of it idle.
		{"all busy", cpuJiffies{total: 1100, idle: 800}, 1, true},
		// iowait fell by 50 while 100 jiffies of user time passed: the
		// idle+iowait delta is negative, clamped to nothing idle.
		{"iowait went backwards", cpuJiffies{total: 1050, idle: 750}, 1, true},
		{"no time passed", base, 0, false},
		{"counters reset", cpuJiffies{total: 2, idle: 1}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := cpuUtil(base, tt.cur)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("cpuUtil = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestJiffiesOf: the library's seconds (jiffies / USER_HZ) come back as the
// file's whole jiffies, including counts that are not a whole number of
// hundredths in binary (1, 12345) and large ones.
func TestJiffiesOf(t *testing.T) {
	for _, j := range []uint64{0, 1, 7, 12345, 95500, 1 << 40, 1<<50 + 3} {
		s := float64(j) / userHZ
		got, err := jiffiesOf(procfs.CPUStat{User: s, Idle: s, Iowait: s, Steal: s})
		if err != nil || got.total != 4*j || got.idle != 2*j {
			t.Errorf("%d jiffies: got %+v, %v; want total %d, idle %d", j, got, err, 4*j, 2*j)
		}
	}
}

func TestNetRates(t *testing.T) {
	dev := func(lines ...procfs.NetDevLine) procfs.NetDev {
		d := procfs.NetDev{}
		for _, l := range lines {
			d[l.Name] = l
		}
		return d
	}
	line := func(name string, rx, tx uint64) procfs.NetDevLine {
		return procfs.NetDevLine{Name: name, RxBytes: rx, TxBytes: tx}
	}
	prev := dev(line("lo", 100, 100), line("eth0", 1000, 2000), line("ib0", 10000, 20000))
	tests := []struct {
		name           string
		cur            procfs.NetDev
		elapsed        time.Duration
		wantRx, wantTx float64
		wantOK         bool
	}{
		// eth0 +1000/+500, ib0 +3000/+1500 over 2 s; lo's +1000 left out.
		{"summed without lo", dev(line("lo", 1100, 1100), line("eth0", 2000, 2500), line("ib0", 13000, 21500)), 2 * time.Second, 2000, 1000, true},
		// docker0 is new since prev: it adds nothing; ib0 vanished.
		{"interfaces come and go", dev(line("eth0", 1400, 2200), line("docker0", 5000, 5000)), time.Second, 400, 200, true},
		{"reset", dev(line("eth0", 10, 2500), line("ib0", 13000, 21500)), time.Second, 0, 0, false},
		{"loopback reset is ignored", dev(line("lo", 0, 0), line("eth0", 1000, 2000)), time.Second, 0, 0, true},
		{"no time passed", prev, 0, 0, 0, false},
		{"clock went back", prev, -time.Second, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rx, tx, ok := netRates(prev, tt.cur, tt.elapsed)
			if rx != tt.wantRx || tx != tt.wantTx || ok != tt.wantOK {
				t.Errorf("netRates = %v, %v, %v; want %v, %v, %v", rx, tx, ok, tt.wantRx, tt.wantTx, tt.wantOK)
			}
		})
	}
}
