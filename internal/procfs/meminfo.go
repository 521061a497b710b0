package procfs

import (
	"fmt"
	"math"
	"strings"
)

// Meminfo is what the agent takes from /proc/meminfo, in bytes.
type Meminfo struct {
	// TotalBytes is MemTotal: usable RAM. ParseMeminfo guarantees it is
	// positive.
	TotalBytes uint64
	// AvailableBytes is MemAvailable: the kernel's estimate of memory
	// available for new work without swapping. ParseMeminfo guarantees it
	// is at most TotalBytes.
	AvailableBytes uint64
}

// UsedShare returns 1 - MemAvailable/MemTotal, in [0, 1].
func (m Meminfo) UsedShare() float64 {
	if m.TotalBytes == 0 {
		return 0
	}
	return 1 - float64(min(m.AvailableBytes, m.TotalBytes))/float64(m.TotalBytes)
}

// ParseMeminfo parses the contents of /proc/meminfo. name is the file's
// name, used in errors. MemTotal and MemAvailable must each appear once, in
// kB (which the kernel means as KiB); other lines are ignored. Kernels
// before 3.14 have no MemAvailable and are reported as an error.
func ParseMeminfo(name string, data []byte) (Meminfo, error) {
	var m Meminfo
	var seenTotal, seenAvail bool
	for i, line := range splitLines(data) {
		n := i + 1
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *uint64
		switch key {
		case "MemTotal":
			if seenTotal {
				return Meminfo{}, lineErr(name, n, "second MemTotal line")
			}
			seenTotal, dst = true, &m.TotalBytes
		case "MemAvailable":
			if seenAvail {
				return Meminfo{}, lineErr(name, n, "second MemAvailable line")
			}
			seenAvail, dst = true, &m.AvailableBytes
		default:
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return Meminfo{}, lineErr(name, n, "%s is %q, want a number of kB", key, strings.TrimSpace(rest))
		}
		kb, ok := parseCount(fields[0])
		if !ok || kb > math.MaxUint64/1024 {
			return Meminfo{}, lineErr(name, n, "%s is %q, want a number of kB", key, strings.TrimSpace(rest))
		}
		*dst = kb * 1024
	}
	switch {
	case !seenTotal:
		return Meminfo{}, fmt.Errorf("%s: no MemTotal line", name)
	case !seenAvail:
		return Meminfo{}, fmt.Errorf("%s: no MemAvailable line (kernel before 3.14?)", name)
	case m.TotalBytes == 0:
		return Meminfo{}, fmt.Errorf("%s: MemTotal is 0", name)
	case m.AvailableBytes > m.TotalBytes:
		return Meminfo{}, fmt.Errorf("%s: MemAvailable %d kB exceeds MemTotal %d kB", name, m.AvailableBytes/1024, m.TotalBytes/1024)
	}
	return m, nil
}
