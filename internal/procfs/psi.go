package procfs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// PSILine is one line of a pressure stall information file.
type PSILine struct {
	// Avg10, Avg60 and Avg300 are the percentage of wall time, 0 to 100,
	// that tasks were stalled on the resource, as running averages over
	// 10, 60 and 300 seconds.
	Avg10, Avg60, Avg300 float64
	// Total is the cumulative stall time since boot, in microseconds.
	Total uint64
}

// PSI is the contents of a /proc/pressure file (Linux 4.20 and later).
// Some is the time at least one non-idle task was stalled; Full is the time
// all non-idle tasks were stalled at once.
type PSI struct {
	Some PSILine
	Full PSILine
	// HasFull reports whether the file had a full line: kernels before
	// 5.13 write none for cpu, and for cpu at the system level the kernel
	// always writes zeros.
	HasFull bool
}

// ParsePSI parses a /proc/pressure/{cpu,memory,io} file. name is the
// file's name, used in errors. A line must start with some or full and
// carry avg10, avg60, avg300 and total; keys it does not know are ignored.
func ParsePSI(name string, data []byte) (PSI, error) {
	var p PSI
	hasSome := false
	for i, line := range splitLines(data) {
		n := i + 1
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		var dst *PSILine
		switch fields[0] {
		case "some":
			if hasSome {
				return PSI{}, lineErr(name, n, "second some line")
			}
			hasSome, dst = true, &p.Some
		case "full":
			if p.HasFull {
				return PSI{}, lineErr(name, n, "second full line")
			}
			p.HasFull, dst = true, &p.Full
		default:
			return PSI{}, lineErr(name, n, "line starts with %q, want some or full", fields[0])
		}
		var got [4]bool // avg10, avg60, avg300, total
		for _, kv := range fields[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return PSI{}, lineErr(name, n, "%q is not key=value", kv)
			}
			var avg *float64
			switch k {
			case "avg10":
				avg, got[0] = &dst.Avg10, true
			case "avg60":
				avg, got[1] = &dst.Avg60, true
			case "avg300":
				avg, got[2] = &dst.Avg300, true
			case "total":
				t, ok := parseCount(v)
				if !ok {
					return PSI{}, lineErr(name, n, "total=%q, want microseconds", v)
				}
				dst.Total, got[3] = t, true
				continue
			default:
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || f < 0 || f > 100 {
				return PSI{}, lineErr(name, n, "%s=%q, want a percentage", k, v)
			}
			*avg = f
		}
		for j, key := range []string{"avg10", "avg60", "avg300", "total"} {
			if !got[j] {
				return PSI{}, lineErr(name, n, "%s line has no %s", fields[0], key)
			}
		}
	}
	if !hasSome {
		return PSI{}, fmt.Errorf("%s: no some line", name)
	}
	return p, nil
}
