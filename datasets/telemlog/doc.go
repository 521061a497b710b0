// Package telemlog is Drover's telemetry log: every node sample the policy
// server receives (from the drover agents, or from a simulation standing
// in for them), appended to Parquet files beside the decision log
// (datasets/declog), so that offline evaluation (drover eval --log) can
// replay the nodes' load. The format is specified in
// docs/format/telemetry-log.md.
//
// A Writer follows the decision log's design (both are built on
// internal/pqlog): Write validates the sample and writes it or, with
// Options.Queue (a server's choice), puts it in a bounded queue for one
// background goroutine (a full queue drops and counts, Dropped, never
// blocks). Each sample goes to the current file's write-ahead log, DIR/telemetry-NNNNNN.wal, and, a row group at a
// time, to DIR/telemetry-NNNNNN.parquet.tmp, and seals a file (footer,
// fsync, rename to .parquet, fsync of the directory, removal of the
// write-ahead log) when it holds Options.MaxSamples samples, at the first
// Write Options.SealInterval after the file's first sample, on Flush and
// on Close. Sealed files are never written again; a killed process loses
// only queued samples, since the next NewWriter seals the leftover
// write-ahead logs (Recovered). Readers skip and report unsealed files
// (Log.Partial). The file names differ from the decision log's
// ("telemetry-" against "decisions-"), so the two logs share a directory
// and each reader ignores the other's files.
//
// Encoding is separate from I/O: Encode and Decode turn samples into one
// Parquet file's bytes and back; Writer, ReadFile and ReadDir put files on
// disk and read them back.
//
// # Usage
//
// The server's loop: one Writer for the process, one Write per agent
// sample (Write is safe for concurrent use, one call per stream), Close on
// shutdown.
//
//	w, err := telemlog.NewWriter("logs", telemlog.Options{})
//	if err != nil { ... }
//	defer w.Close()
//	for s := range samples {
//		err := w.Write(telemlog.Sample{Node: s.Node, Time: s.Time,
//			CPU: s.CPU, MemBW: s.MemBW, Net: s.Net, // the derived shares
//			CPUUtil: s.CPUUtil, MemUsed: s.MemUsed, ...}) // raw, NaN unknown
//		...
//	}
//
// Offline:
//
//	log, err := telemlog.ReadDir("logs")
//	for _, s := range log.Samples { // by time, then node
//		fmt.Println(s.Node, s.Time, s.CPU)
//	}
package telemlog
