// Package pqlog is the machinery Drover's Parquet logs share (the decision
// log, datasets/declog, and the telemetry log, datasets/telemlog): a directory
// of sealed Parquet files written by one background goroutine, and the
// reader of such a directory. A Format describes one log: its file names,
// its columns and their types, how a record becomes a row and a row a
// record, and how a record is framed in the write-ahead log.
//
// A Writer takes records on the caller's goroutine into a bounded queue
// (a full queue drops and counts, never blocks) and a background goroutine
// appends them to the current file's write-ahead log,
// DIR/PREFIX-NNNNNN.wal, builds row groups, writes them to
// DIR/PREFIX-NNNNNN.parquet.tmp and seals the file (footer, fsync, rename
// to .parquet, fsync of the directory, removal of the .wal) by size, by
// interval, on Flush and on Close. The goroutine appends each record's
// values to its columns' pages as it takes the record, compresses a page
// once it holds 16 KiB, and gives the processor to the other goroutines
// every 100 us of work, so that on one processor (GOMAXPROCS=1) a Place
// call waits for at most one page's compression. A new Writer on the directory first turns every leftover .wal
// into a sealed file, so the records of a killed process's unsealed file
// survive; what cannot be recovered is reported (Writer.Recovered), never
// deleted. The file formats are specified in docs/format/decision-log.md
// and telemetry-log.md.
//
// The files are written by this package's own Parquet encoder
// (encode.go), a streaming one with no garbage per record, and read
// through parquet-go's column pages (decode.go): arrow-go's writer cost
// 7.4 us and 2.7 KB of garbage per decision record, compressed a column
// chunk in one call, and its buffers' pages went back and forth to the
// OS (see encode.go for what the files hold); arrow-go's reader (pqarrow)
// linked its compute kernels, the largest part of a cold build and of
// every drover command's start-up. The tests read the files with arrow-go
// too (pqlogtest.ArrowColumns), an implementation independent of both.
// The encoder and OpenFile also serve datasets' Parquet job table.
//
// Encoding is separate from I/O: Encode and Decode turn records into one
// Parquet file's bytes and back, AppendFrame and ReadFrames frame records
// for the write-ahead log; Writer, ReadDir and ReadFile put them on disk.
package pqlog
