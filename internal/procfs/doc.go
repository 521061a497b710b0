// Package procfs reads a Linux node's telemetry for `drover agent` (issue
// 17): CPU utilisation and count from /proc/stat, memory use from
// /proc/meminfo, memory and CPU pressure stall information (PSI) from
// /proc/pressure, and network rates from /proc/net/dev. It depends on the
// standard library only.
//
// Everything is read under a root directory: "/" on a real node, a fixture
// tree in tests. The end-to-end test runs agents on synthetic
// roots, rewriting their files to make a node's load rise, beside one
// agent on the real /proc. The hand-written roots under testdata/ (node-a
// and node-b, each with snapshots t0 and t1) show the layout.
//
// The parsers (ParseStat, ParsePSI, ParseMeminfo, ParseNetDev) are pure
// functions of a file's bytes. Malformed data is an error that names the
// file and line, "proc/stat:3: cpu line has 4 fields, want at least 8",
// never a panic; each parser is fuzzed.
//
// # Units
//
//   - CPU: Reading.CPUUtil is a share in [0, 1] of all CPUs' time, from
//     jiffies (USER_HZ ticks); CPUStat holds the raw jiffies.
//   - Memory: bytes (the kernel's "kB" is KiB); MemUsed is a share in [0, 1].
//   - Pressure: the kernel's avg10/avg60/avg300 are percentages (0 to 100),
//     its totals microseconds; Pressure.SomeStalled and FullStalled are
//     shares in [0, 1] of the time between two samples.
//   - Network: bytes per second, summed over every interface but lo. A
//     bridge or veth pair carries traffic that a physical interface also
//     counts, so on a node running containers the sum counts it twice.
//
// # Usage
//
// A Sampler keeps the previous sample. Values that need two samples (CPU
// utilisation, stall shares, network rates) carry a Known flag that is
// false on the first sample and over an interval where a counter went
// backwards. The caller passes the clock, so tests are deterministic:
//
//	s := procfs.New("/")
//	for now := range ticker.C {
//		r, err := s.Sample(now)
//		if err != nil {
//			log.Print(err) // the next good sample measures from the last good one
//			continue
//		}
//		for _, n := range r.Notes {
//			log.Print(n) // e.g. a kernel without PSI, said once
//		}
//		send(r) // the receiver checks the Known flags
//	}
package procfs
