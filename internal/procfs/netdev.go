package procfs

import (
	"strings"
	"time"
)

// netDevFields is the number of counters per interface in /proc/net/dev:
// eight for receive, then eight for transmit.
const netDevFields = 16

// Loopback is the interface name NetRates leaves out.
const Loopback = "lo"

// NetDev is one interface's line of /proc/net/dev.
type NetDev struct {
	// Name is the interface name, e.g. "eth0" or "ib0".
	Name string
	// RxBytes and TxBytes are the bytes received and sent since the
	// counters were last reset (boot or driver load).
	RxBytes, TxBytes uint64
}

// ParseNetDev parses the contents of /proc/net/dev, returning the
// interfaces in file order. name is the file's name, used in errors. The
// header lines (those containing '|') are skipped; every other non-blank
// line must be "iface: " followed by at least 16 counters.
func ParseNetDev(name string, data []byte) ([]NetDev, error) {
	var devs []NetDev
	seen := map[string]bool{}
	for i, line := range splitLines(data) {
		n := i + 1
		if strings.TrimSpace(line) == "" || strings.Contains(line, "|") {
			continue
		}
		iface, rest, ok := strings.Cut(line, ":")
		iface = strings.TrimSpace(iface)
		if !ok || iface == "" || strings.ContainsAny(iface, " \t") {
			return nil, lineErr(name, n, "line does not start with an interface name and a colon")
		}
		if seen[iface] {
			return nil, lineErr(name, n, "second line for interface %s", iface)
		}
		seen[iface] = true
		fields := strings.Fields(rest)
		if len(fields) < netDevFields {
			return nil, lineErr(name, n, "interface %s has %d counters, want at least %d", iface, len(fields), netDevFields)
		}
		var vals [netDevFields]uint64
		for j, f := range fields[:netDevFields] {
			v, ok := parseCount(f)
			if !ok {
				return nil, lineErr(name, n, "interface %s counter %d is %q, want a count", iface, j+1, f)
			}
			vals[j] = v
		}
		devs = append(devs, NetDev{Name: iface, RxBytes: vals[0], TxBytes: vals[8]})
	}
	return devs, nil
}

// NetRates returns the receive and transmit rates, in bytes per second,
// summed over every interface in cur except Loopback, between two reads of
// /proc/net/dev taken elapsed apart. An interface missing from prev (it
// appeared in between) adds nothing. ok is false when elapsed is not
// positive or when any counter summed went backwards (a 32-bit wrap or a
// reset on driver reload): there is then no rate for the interval, rather
// than a negative or partial one.
func NetRates(prev, cur []NetDev, elapsed time.Duration) (rx, tx float64, ok bool) {
	if elapsed <= 0 {
		return 0, 0, false
	}
	before := make(map[string]NetDev, len(prev))
	for _, d := range prev {
		before[d.Name] = d
	}
	var drx, dtx float64
	for _, d := range cur {
		p, found := before[d.Name]
		if d.Name == Loopback || !found {
			continue
		}
		if d.RxBytes < p.RxBytes || d.TxBytes < p.TxBytes {
			return 0, 0, false
		}
		drx += float64(d.RxBytes - p.RxBytes)
		dtx += float64(d.TxBytes - p.TxBytes)
	}
	s := elapsed.Seconds()
	return drx / s, dtx / s, true
}
