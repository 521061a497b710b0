package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// The files a Sampler reads, relative to its root.
const (
	StatFile        = "proc/stat"
	MeminfoFile     = "proc/meminfo"
	NetDevFile      = "proc/net/dev"
	MemPressureFile = "proc/pressure/memory"
	CPUPressureFile = "proc/pressure/cpu"
)

// Reading is one node's telemetry at one sample. Fields that need two
// samples compare against the previous successful one and carry a Known
// flag, false on the first sample.
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
	// CPUUtil). It is measured in jiffies, so it does not depend on Elapsed.
	CPUUtil float64
	// CPUUtilKnown reports whether CPUUtil holds a value.
	CPUUtilKnown bool

	// Mem is MemTotal and MemAvailable from /proc/meminfo, in bytes.
	Mem Meminfo
	// MemUsed is Mem.UsedShare(): 1 - MemAvailable/MemTotal, in [0, 1].
	MemUsed float64

	// MemPressure and CPUPressure are pressure stall information from
	// /proc/pressure/memory and /proc/pressure/cpu.
	MemPressure, CPUPressure Pressure

	// NetRxBytesPerSec and NetTxBytesPerSec are bytes per second received
	// and sent since the previous sample, summed over every interface but
	// Loopback (see NetRates).
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
	// PSI is the file as read: the kernel's running averages, in percent,
	// and its cumulative totals, in microseconds.
	PSI
	// SomeStalled and FullStalled are the shares of Elapsed, in [0, 1],
	// during which some or all non-idle tasks were stalled, from the
	// growth of the Total counters. FullStalled is zero without full lines.
	SomeStalled, FullStalled float64
	// StalledKnown reports whether SomeStalled and FullStalled hold values:
	// false on the first sample, when Elapsed is not positive, and when a
	// total went backwards.
	StalledKnown bool
}

// A Sampler reads a node's telemetry from a root directory: "/" on a real
// node, a fixture tree in tests. It keeps the previous sample to compute
// rates. A Sampler is not safe for concurrent use.
type Sampler struct {
	root string
	fsys fs.FS

	prev    snapshot
	hasPrev bool
	// absent holds the PSI files found missing; they are not read again.
	absent map[string]bool
}

// snapshot is what one sample read, kept for the next one's deltas.
type snapshot struct {
	at                   time.Time
	cpu                  CPUStat
	net                  []NetDev
	memPSI, cpuPSI       PSI
	hasMemPSI, hasCPUPSI bool
}

// New returns a Sampler that reads the files under root, for example
// root+"/proc/stat". It reads nothing until the first Sample.
func New(root string) *Sampler {
	return &Sampler{root: root, fsys: os.DirFS(root), absent: map[string]bool{}}
}

// Sample reads the node's files and returns the reading at now, the
// caller's clock. Rates and utilisations are against the previous
// successful sample. A missing or malformed file (other than a PSI file
// the kernel does not provide) is an error naming the file and, for
// malformed data, the line; the Sampler's state is then unchanged, so the
// next successful sample measures from the last good one.
func (s *Sampler) Sample(now time.Time) (Reading, error) {
	cur := snapshot{at: now}
	r := Reading{Time: now}
	var err error
	if cur.cpu, err = readParsed(s, StatFile, ParseStat); err != nil {
		return Reading{}, err
	}
	if r.Mem, err = readParsed(s, MeminfoFile, ParseMeminfo); err != nil {
		return Reading{}, err
	}
	if cur.net, err = readParsed(s, NetDevFile, ParseNetDev); err != nil {
		return Reading{}, err
	}
	var notes []string
	var absent []string
	for _, p := range []struct {
		file string
		psi  *PSI
		has  *bool
	}{
		{MemPressureFile, &cur.memPSI, &cur.hasMemPSI},
		{CPUPressureFile, &cur.cpuPSI, &cur.hasCPUPSI},
	} {
		if s.absent[p.file] {
			continue
		}
		data, err := fs.ReadFile(s.fsys, p.file)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errors.ErrUnsupported) {
			absent = append(absent, p.file)
			notes = append(notes, fmt.Sprintf("%s: not provided by this kernel (%v); pressure is unavailable and will not be read again", p.file, err))
			continue
		}
		if err != nil {
			return Reading{}, fmt.Errorf("procfs: root %s: %w", s.root, err)
		}
		if *p.psi, err = ParsePSI(p.file, data); err != nil {
			return Reading{}, fmt.Errorf("procfs: root %s: %w", s.root, err)
		}
		*p.has = true
	}

	r.NumCPU = cur.cpu.NumCPU
	r.MemUsed = r.Mem.UsedShare()
	r.MemPressure = Pressure{Available: cur.hasMemPSI, PSI: cur.memPSI}
	r.CPUPressure = Pressure{Available: cur.hasCPUPSI, PSI: cur.cpuPSI}
	r.Notes = notes
	if s.hasPrev {
		prev := s.prev
		r.Elapsed = now.Sub(prev.at)
		r.CPUUtil, r.CPUUtilKnown = CPUUtil(prev.cpu, cur.cpu)
		r.NetRxBytesPerSec, r.NetTxBytesPerSec, r.NetKnown = NetRates(prev.net, cur.net, r.Elapsed)
		if cur.hasMemPSI && prev.hasMemPSI {
			stalled(&r.MemPressure, prev.memPSI, r.Elapsed)
		}
		if cur.hasCPUPSI && prev.hasCPUPSI {
			stalled(&r.CPUPressure, prev.cpuPSI, r.Elapsed)
		}
	}
	for _, f := range absent {
		s.absent[f] = true
	}
	s.prev, s.hasPrev = cur, true
	return r, nil
}

// readParsed reads file under the Sampler's root and parses it.
func readParsed[T any](s *Sampler, file string, parse func(string, []byte) (T, error)) (T, error) {
	var zero T
	data, err := fs.ReadFile(s.fsys, file)
	if err != nil {
		return zero, fmt.Errorf("procfs: root %s: %w", s.root, err)
	}
	v, err := parse(file, data)
	if err != nil {
		return zero, fmt.Errorf("procfs: root %s: %w", s.root, err)
	}
	return v, nil
}

// stalled fills p's stall shares from the growth of its totals since prev.
func stalled(p *Pressure, prev PSI, elapsed time.Duration) {
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
