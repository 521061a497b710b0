package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"time"

	"github.com/prometheus/procfs"
)

// userHZ is the clock tick the procfs library divides /proc/stat's
// jiffies by to give seconds (USER_HZ, 100 on nearly every kernel);
// Sample multiplies back, so that utilisation is computed on whole jiffies.
const userHZ = 100

// Loopback is the network interface the rates leave out.
const Loopback = "lo"

// Reading is one node's telemetry at one sample. Fields that need two
// samples compare against the previous successful one and carry a Known
// flag, false on the first sample.
//
// Units: CPUUtil, MemUsed and the stall shares are shares in [0, 1];
// memory is in bytes (the kernel's "kB" is KiB); the PSI averages are the
// kernel's percentages (0 to 100) and its totals microseconds; network
// rates are bytes per second summed over every interface but Loopback (a
// bridge or veth pair carries traffic that a physical interface also
// counts, so on a node running containers the sum counts it twice).
type Reading struct {
	// Time is the clock value passed to Sample.
	Time time.Time
	// Elapsed is Time minus the previous successful sample's Time; zero on
	// the first sample.
	Elapsed time.Duration

	// NumCPU is the number of CPUs online (cpuN lines of /proc/stat).
	NumCPU int
	// CPUUtil is the share of CPU time over all CPUs, in [0, 1], that was
	// neither idle nor waiting for I/O since the previous sample (see
	// cpuUtil). It is measured in jiffies, so it does not depend on
	// Elapsed.
	CPUUtil float64
	// CPUUtilKnown reports whether CPUUtil holds a value.
	CPUUtilKnown bool

	// MemTotalBytes and MemAvailableBytes are /proc/meminfo's MemTotal and
	// MemAvailable (the kernel's estimate of memory available for new work
	// without swapping), in bytes.
	MemTotalBytes, MemAvailableBytes uint64
	// MemUsed is 1 - MemAvailable/MemTotal, in [0, 1].
	MemUsed float64

	// MemPressure and CPUPressure are pressure stall information from
	// /proc/pressure/memory and /proc/pressure/cpu.
	MemPressure, CPUPressure Pressure

	// NetRxBytesPerSec and NetTxBytesPerSec are bytes per second received
	// and sent since the previous sample, summed over every interface but
	// Loopback.
	NetRxBytesPerSec, NetTxBytesPerSec float64
	// NetKnown reports whether the two rates hold values: false on the
	// first sample, when Elapsed is not positive, and across a counter
	// reset or wrap.
	NetKnown bool

	// Notes are conditions the Sampler found for the first time, such as
	// a PSI file the kernel does not provide. Each appears in one Reading
	// only, for the agent to log once.
	Notes []string
}

// Pressure is one resource's pressure stall information at a sample.
type Pressure struct {
	// Available is false when the kernel has no PSI file for the resource
	// (before 4.20, built without CONFIG_PSI, or booted with psi=0); the
	// other fields are then zero.
	Available bool
	// Some and Full are the file's lines as read: the kernel's running
	// averages, in percent, and its cumulative totals, in microseconds.
	// Some is the time at least one non-idle task was stalled; Full the
	// time all were at once.
	Some, Full procfs.PSILine
	// HasFull reports whether the file had a full line: kernels before
	// 5.13 write none for cpu.
	HasFull bool
	// SomeStalled and FullStalled are the shares of Elapsed, in [0, 1],
	// during which some or all non-idle tasks were stalled, from the
	// growth of the Total counters. FullStalled is zero without full lines.
	SomeStalled, FullStalled float64
	// StalledKnown reports whether SomeStalled and FullStalled hold values:
	// false on the first sample, when Elapsed is not positive, and when a
	// total went backwards.
	StalledKnown bool
}

// A Sampler reads a node's telemetry with github.com/prometheus/procfs
// from a root directory: "/" on a real node, a fixture tree in tests
// (testdata/node-a and node-b, each with snapshots t0 and t1, show the
// layout). It keeps the previous sample to compute rates. A Sampler is not
// safe for concurrent use.
type Sampler struct {
	root string
	fs   procfs.FS

	prev    snapshot
	hasPrev bool
	// absent holds the PSI resources found missing; they are not read
	// again.
	absent map[string]bool
}

// snapshot is what one sample read, kept for the next one's deltas.
type snapshot struct {
	at                   time.Time
	cpu                  cpuJiffies
	net                  procfs.NetDev
	memPSI, cpuPSI       Pressure
	hasMemPSI, hasCPUPSI bool
}

// cpuJiffies is the aggregate cpu line of /proc/stat in jiffies: all CPU
// time (user through steal; guest time is already in user and nice) and
// the idle and iowait part of it.
type cpuJiffies struct{ total, idle uint64 }

// NewSampler returns a Sampler that reads the files under root+"/proc". It
// fails when that directory does not exist, and reads nothing until the
// first Sample.
func NewSampler(root string) (*Sampler, error) {
	f, err := procfs.NewFS(filepath.Join(root, "proc"))
	if err != nil {
		return nil, fmt.Errorf("agent: root %s: no proc directory (proc/stat, proc/meminfo, proc/net/dev): %w", root, err)
	}
	return &Sampler{root: root, fs: f, absent: map[string]bool{}}, nil
}

// Sample reads the node's files and returns the reading at now, the
// caller's clock. Rates and utilisations are against the previous
// successful sample. A missing or malformed file (other than a PSI file
// the kernel does not provide) is an error naming the file; the Sampler's
// state is then unchanged, so the next successful sample measures from the
// last good one.
func (s *Sampler) Sample(now time.Time) (Reading, error) {
	cur := snapshot{at: now}
	r := Reading{Time: now}
	st, err := read(s, "proc/stat", s.fs.Stat)
	if err != nil {
		return Reading{}, err
	}
	if cur.cpu, err = jiffiesOf(st.CPUTotal); err != nil {
		return Reading{}, fmt.Errorf("agent: root %s: proc/stat: %w", s.root, err)
	}
	if r.NumCPU = len(st.CPU); r.NumCPU == 0 {
		return Reading{}, fmt.Errorf("agent: root %s: proc/stat: no cpuN lines", s.root)
	}
	mi, err := read(s, "proc/meminfo", s.fs.Meminfo)
	if err != nil {
		return Reading{}, err
	}
	switch {
	case mi.MemTotalBytes == nil || *mi.MemTotalBytes == 0:
		return Reading{}, fmt.Errorf("agent: root %s: proc/meminfo: no MemTotal, or 0", s.root)
	case mi.MemAvailableBytes == nil:
		return Reading{}, fmt.Errorf("agent: root %s: proc/meminfo: no MemAvailable line (kernel before 3.14?)", s.root)
	case *mi.MemAvailableBytes > *mi.MemTotalBytes:
		return Reading{}, fmt.Errorf("agent: root %s: proc/meminfo: MemAvailable %d kB exceeds MemTotal %d kB", s.root, *mi.MemAvailableBytes/1024, *mi.MemTotalBytes/1024)
	}
	r.MemTotalBytes, r.MemAvailableBytes = *mi.MemTotalBytes, *mi.MemAvailableBytes
	r.MemUsed = 1 - float64(r.MemAvailableBytes)/float64(r.MemTotalBytes)
	if cur.net, err = read(s, "proc/net/dev", s.fs.NetDev); err != nil {
		return Reading{}, err
	}
	var absent []string
	for _, p := range []struct {
		resource string
		psi      *Pressure
		has      *bool
	}{
		{"memory", &cur.memPSI, &cur.hasMemPSI},
		{"cpu", &cur.cpuPSI, &cur.hasCPUPSI},
	} {
		if s.absent[p.resource] {
			continue
		}
		file := "proc/pressure/" + p.resource
		st, err := read(s, file, func() (procfs.PSIStats, error) { return s.fs.PSIStatsForResource(p.resource) })
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errors.ErrUnsupported) {
			absent = append(absent, p.resource)
			r.Notes = append(r.Notes, fmt.Sprintf("%s: not provided by this kernel (%v); pressure is unavailable and will not be read again", file, err))
			continue
		}
		if err != nil {
			return Reading{}, err
		}
		if st.Some == nil {
			return Reading{}, fmt.Errorf("agent: root %s: %s: no some line", s.root, file)
		}
		*p.psi = Pressure{Available: true, Some: *st.Some}
		if st.Full != nil {
			p.psi.Full, p.psi.HasFull = *st.Full, true
		}
		*p.has = true
	}
	r.MemPressure, r.CPUPressure = cur.memPSI, cur.cpuPSI
	if s.hasPrev {
		prev := s.prev
		r.Elapsed = now.Sub(prev.at)
		r.CPUUtil, r.CPUUtilKnown = cpuUtil(prev.cpu, cur.cpu)
		r.NetRxBytesPerSec, r.NetTxBytesPerSec, r.NetKnown = netRates(prev.net, cur.net, r.Elapsed)
		if cur.hasMemPSI && prev.hasMemPSI {
			stallShares(&r.MemPressure, prev.memPSI, r.Elapsed)
		}
		if cur.hasCPUPSI && prev.hasCPUPSI {
			stallShares(&r.CPUPressure, prev.cpuPSI, r.Elapsed)
		}
	}
	for _, f := range absent {
		s.absent[f] = true
	}
	s.prev, s.hasPrev = cur, true
	return r, nil
}

// read calls the library's reader of file, naming the root and file in
// its error. The library indexes a line's fields without checking their
// number on some malformed lines (a meminfo or net/dev line cut short);
// its panic is returned as an error too, so a malformed file never stops
// the agent.
func read[T any](s *Sampler, file string, f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero T
			v, err = zero, fmt.Errorf("agent: root %s: %s: malformed: %v", s.root, file, p)
		}
	}()
	if v, err = f(); err != nil {
		err = fmt.Errorf("agent: root %s: %s: %w", s.root, file, err)
	}
	return v, err
}

// jiffiesOf turns the library's aggregate cpu line, in seconds, back into
// jiffies.
func jiffiesOf(c procfs.CPUStat) (cpuJiffies, error) {
	var j [8]uint64
	for i, v := range []float64{c.User, c.Nice, c.System, c.Idle, c.Iowait, c.IRQ, c.SoftIRQ, c.Steal} {
		t := math.Round(v * userHZ)
		if !(t >= 0 && t < 1<<53) {
			return cpuJiffies{}, fmt.Errorf("cpu line's counter %d is %v s, want a count of jiffies under 2^53", i+1, v)
		}
		j[i] = uint64(t)
	}
	var total uint64
	for _, v := range j {
		total += v // under 8 x 2^53: no overflow
	}
	return cpuJiffies{total: total, idle: j[3] + j[4]}, nil
}

// cpuUtil returns the share of CPU time, over all CPUs, that was neither
// idle nor waiting for I/O between two reads of /proc/stat:
// 1 - (idle+iowait delta)/(total delta), in [0, 1]. Steal (time a
// hypervisor gave to another guest) counts as busy, since it was not
// available to this node's work. ok is false when no time passed or the
// counters went backwards (a different boot, or swapped fixtures): there
// is then no utilisation for the interval.
//
// The kernel documents that iowait can decrease; a result pushed outside
// [0, 1] by that is clamped rather than reported as unknown.
func cpuUtil(prev, cur cpuJiffies) (util float64, ok bool) {
	if cur.total <= prev.total {
		return 0, false
	}
	var idle float64
	if cur.idle > prev.idle {
		idle = float64(cur.idle - prev.idle)
	}
	u := 1 - idle/float64(cur.total-prev.total)
	return min(max(u, 0), 1), true
}

// netRates returns the receive and transmit rates, in bytes per second,
// summed over every interface in cur except Loopback, between two reads of
// /proc/net/dev taken elapsed apart. An interface missing from prev (it
// appeared in between) adds nothing. ok is false when elapsed is not
// positive or when any counter summed went backwards (a 32-bit wrap or a
// reset on driver reload): there is then no rate for the interval, rather
// than a negative or partial one.
func netRates(prev, cur procfs.NetDev, elapsed time.Duration) (rx, tx float64, ok bool) {
	if elapsed <= 0 {
		return 0, 0, false
	}
	var drx, dtx uint64
	for name, d := range cur {
		p, found := prev[name]
		if name == Loopback || !found {
			continue
		}
		if d.RxBytes < p.RxBytes || d.TxBytes < p.TxBytes {
			return 0, 0, false
		}
		drx += d.RxBytes - p.RxBytes
		dtx += d.TxBytes - p.TxBytes
	}
	s := elapsed.Seconds()
	return float64(drx) / s, float64(dtx) / s, true
}

// stallShares fills p's stall shares from the growth of its totals since prev.
func stallShares(p *Pressure, prev Pressure, elapsed time.Duration) {
	us := float64(elapsed.Microseconds())
	if us <= 0 || p.Some.Total < prev.Some.Total || p.Full.Total < prev.Full.Total {
		return
	}
	share := func(t0, t1 uint64) float64 { return min(float64(t1-t0)/us, 1) }
	p.SomeStalled = share(prev.Some.Total, p.Some.Total)
	if p.HasFull && prev.HasFull {
		p.FullStalled = share(prev.Full.Total, p.Full.Total)
	}
	p.StalledKnown = true
}
