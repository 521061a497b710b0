// Package declog is Drover's decision log: every placement decision the
// policy server makes, and every outcome the cluster reports back, appended
// to Parquet files for offline evaluation (drover eval --log) and
// retraining. The format is specified in docs/format/decision-log.md.
//
// A Writer buffers records in memory (at most one row group), writes row
// groups to DIR/decisions-NNNNNN.parquet.tmp, and seals a file when it
// reaches a record or byte limit, on Flush and on Close: footer, fsync,
// rename to .parquet, fsync of the directory. Sealed files are never
// written again, so a crash can lose only the records of the unsealed file,
// which readers skip and report. Writers never use the wall clock except
// through the clock option (WithClock), which stamps records without a
// time.
//
// Encoding is separate from I/O: Encode and Decode turn records into one
// Parquet file's bytes and back; Writer, ReadFile and ReadDir put files on
// disk and read them back.
//
// # Usage
//
// The server's loop: one Writer for the process, one Append per decision
// and per outcome report, a periodic Flush, Close on shutdown.
//
//	w, err := declog.NewWriter("logs/decisions", declog.WithMaxRecords(100_000))
//	if err != nil { ... }
//	defer w.Close()
//	for req := range requests {
//		start := time.Now()
//		placement := decide(req)
//		err := w.Append(declog.Decision{
//			RequestID: req.ID, JobID: req.Job, Source: "learned@v3",
//			Workers: placement.Workers, Sync: "bsp", Latency: time.Since(start),
//		}.Record())
//		...
//	}
//
// Offline:
//
//	log, err := declog.ReadDir("logs/decisions")
//	for _, r := range log.Records {
//		if r.Kind == declog.KindDecision { fmt.Println(r.Decision.Source) }
//	}
//	// log.Partial lists unsealed files (a live writer's, or a crash's).
package declog
