package procfs

import (
	"fmt"
	"math/bits"
	"strings"
)

// statMinFields is the number of values the aggregate cpu line must carry:
// user nice system idle iowait irq softirq steal (every kernel since 2.6.11).
const statMinFields = 8

// CPUStat is what /proc/stat says about CPU time: the aggregate "cpu"
// line's counters, in jiffies (USER_HZ ticks, 1/100 s on nearly every
// kernel) summed over all CPUs since boot, and the number of per-CPU lines.
type CPUStat struct {
	// User .. Steal are the first eight counters of the cpu line.
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
	// Guest and GuestNice are zero when the kernel does not report them.
	// The kernel already counts them in User and Nice, so Total leaves
	// them out.
	Guest, GuestNice uint64
	// NumCPU is the number of "cpuN" lines: the CPUs online when read.
	NumCPU int
}

// Total returns all CPU time in jiffies: User through Steal. Steal (time a
// hypervisor gave to another guest) counts as busy, since it was not
// available to this node's work. ParseStat guarantees the sum does not
// overflow.
func (c CPUStat) Total() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// ParseStat parses the contents of /proc/stat. name is the file's name,
// used in errors ("proc/stat:1: cpu line has 4 fields, want at least 8").
// Lines other than cpu and cpuN (intr, ctxt, btime, ...) are ignored.
func ParseStat(name string, data []byte) (CPUStat, error) {
	var s CPUStat
	seen := false
	for i, line := range splitLines(data) {
		n := i + 1
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		label := fields[0]
		if label != "cpu" {
			if len(label) > 3 && strings.HasPrefix(label, "cpu") && isDigits(label[3:]) {
				s.NumCPU++
			}
			continue
		}
		if seen {
			return CPUStat{}, lineErr(name, n, "second cpu line")
		}
		seen = true
		vals := fields[1:]
		if len(vals) < statMinFields {
			return CPUStat{}, lineErr(name, n, "cpu line has %d fields, want at least %d", len(vals), statMinFields)
		}
		dst := []*uint64{&s.User, &s.Nice, &s.System, &s.Idle, &s.IOWait, &s.IRQ, &s.SoftIRQ, &s.Steal, &s.Guest, &s.GuestNice}
		for j, v := range vals {
			if j == len(dst) {
				break // counters added by later kernels
			}
			c, ok := parseCount(v)
			if !ok {
				return CPUStat{}, lineErr(name, n, "cpu field %d is %q, want a count of jiffies", j+1, v)
			}
			*dst[j] = c
		}
		var sum, carry uint64
		for _, p := range dst[:statMinFields] {
			sum, carry = bits.Add64(sum, *p, 0)
			if carry != 0 {
				return CPUStat{}, lineErr(name, n, "cpu line's counters overflow 64 bits")
			}
		}
	}
	if !seen {
		return CPUStat{}, fmt.Errorf("%s: no cpu line", name)
	}
	return s, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// CPUUtil returns the share of CPU time, over all CPUs, that was neither
// idle nor waiting for I/O between two reads of /proc/stat:
// 1 - (idle+iowait delta)/(total delta), in [0, 1]. ok is false when no
// time passed or the counters went backwards (a different boot, or
// swapped fixtures): there is then no utilisation for the interval.
//
// The kernel documents that iowait can decrease; a result pushed outside
// [0, 1] by that is clamped rather than reported as unknown.
func CPUUtil(prev, cur CPUStat) (util float64, ok bool) {
	t0, t1 := prev.Total(), cur.Total()
	if t1 <= t0 {
		return 0, false
	}
	var idle float64
	if i0, i1 := prev.Idle+prev.IOWait, cur.Idle+cur.IOWait; i1 > i0 {
		idle = float64(i1 - i0)
	}
	u := 1 - idle/float64(t1-t0)
	return min(max(u, 0), 1), true
}
