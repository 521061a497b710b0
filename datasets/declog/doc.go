// Package declog is Drover's decision log: every placement decision the
// policy server makes, and every outcome the cluster reports back, appended
// to Parquet files for offline evaluation (drover eval --log) and
// retraining. The format is specified in docs/format/decision-log.md.
//
// A Writer never does I/O on the caller's goroutine: Append validates and
// stamps the records and puts them in a bounded queue (WithQueue, default
// 65,536 records); when the queue is full it drops them and counts them
// (Dropped) rather than block. One background goroutine writes the
// queue: each record to the current file's write-ahead log,
// DIR/decisions-NNNNNN.wal, and, a row group at a time (at most one in
// memory), to DIR/decisions-NNNNNN.parquet.tmp. It seals a file when it
// reaches a record or byte limit, on Flush and on Close: footer, fsync,
// rename to .parquet, fsync of the directory, removal of the write-ahead
// log. Sealed files are never written again. A killed process loses only
// the records still in the queue and those of the last 2 ms not yet in the
// write-ahead log (WithWALDelay): the next NewWriter on the directory
// seals the records of every leftover write-ahead log and reports what it
// could not recover (Recovered). ReadDir skips and reports unsealed
// files; ReadDirTail also reads the records their write-ahead logs hold
// (a live writer's current file).
// Writers never use the wall clock except through the clock option
// (WithClock), which stamps records without a time.
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
