package declog

import (
	"errors"
	"fmt"
	"time"

	"github.com/drover-sched/drover/internal/pqlog"
)

// File naming: DIR/decisions-000001.parquet once sealed; the file being
// written carries TmpSuffix, and its write-ahead log is
// DIR/decisions-000001.wal.
const (
	// FilePrefix starts every log file's name.
	FilePrefix = "decisions-"
	// FileSuffix ends a sealed log file's name.
	FileSuffix = pqlog.FileSuffix
	// TmpSuffix is appended to the name of a file still being written.
	TmpSuffix = pqlog.TmpSuffix
	// WALSuffix ends the name of an unsealed file's write-ahead log.
	WALSuffix = pqlog.WALSuffix
)

// Defaults of the Writer's options.
const (
	// DefaultMaxRecords is the records per file before it is sealed.
	DefaultMaxRecords = 100_000
	// DefaultMaxBytes is the bytes of row groups per file before it is sealed.
	DefaultMaxBytes = 64 << 20
	// DefaultRowGroupRecords is the records buffered in memory per row
	// group. 1,024 rather than 4,096: the background goroutine yields the
	// processor between 64-row slices of a column, but it compresses and
	// writes each column's pages in one step, which takes longer with more
	// rows, and the builders and encoders hold less; the files are 14%
	// larger (100,000 server decisions: 1.86 against 1.64 MB).
	// BenchmarkServerLoad at 10,000 records/s, three interleaved runs:
	// probe p99 0.85-1.8 ms against 2.0-2.4, p99.9 2.1-10.5 against
	// 4.1-8.9, peak heap 9.7-9.8 MB against 12.5-13.3, VmRSS 40.8-41.4 MB
	// against 44.1-45.1 (log off: 0.14-0.38 ms, 0.62-0.95 ms, 4.8 MB,
	// 32.2-32.6 MB).
	DefaultRowGroupRecords = 1024
	// DefaultQueue is the records Append queues before it drops.
	DefaultQueue = pqlog.DefaultQueue
	// DefaultWALDelay is how long records may wait before the
	// write-ahead log has them (WithWALDelay).
	DefaultWALDelay = pqlog.DefaultWALDelay
)

// ErrClosed is returned by Append and Flush after Close.
var ErrClosed = errors.New("declog: writer closed")

// FileName returns the name of the sealed log file with index i.
func FileName(i int) string { return format.FileName(i) }

// Option configures a Writer.
type Option func(*config)

type config struct {
	now func() time.Time
	pq  pqlog.Config[Record]
}

// WithClock sets the clock that stamps records appended with a zero Time
// (default time.Now).
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithMaxRecords seals a file once it holds n records (default
// DefaultMaxRecords; n <= 0 means no limit).
func WithMaxRecords(n int) Option { return func(c *config) { c.pq.MaxRecords = n } }

// WithMaxBytes seals a file once its written row groups reach n bytes
// (default DefaultMaxBytes; n <= 0 means no limit).
func WithMaxBytes(n int64) Option { return func(c *config) { c.pq.MaxBytes = n } }

// WithRowGroupRecords bounds the records buffered in memory: a row group is
// written every n records (default DefaultRowGroupRecords).
func WithRowGroupRecords(n int) Option { return func(c *config) { c.pq.RowGroup = n } }

// WithQueue sets how many records Append queues for the background
// goroutine before it drops (default DefaultQueue). n <= 0 means no queue:
// Append encodes and writes on the caller's goroutine, under the Writer's
// lock, and never drops (for offline writers that prefer waiting to
// losing records).
func WithQueue(n int) Option { return func(c *config) { c.pq.Queue = n } }

// WithWALDelay sets how long records may wait, in the queue and then as
// frames in memory, before the write-ahead log has them (default
// DefaultWALDelay; d <= 0: the background goroutine takes each record
// at once and writes the log after every batch). Waiting records are
// lost if the process is killed, like queued ones; the delay saves a
// goroutine wake-up and a system call per record at high rates (the
// goroutine wakes once per delay, or once 256 records are queued).
func WithWALDelay(d time.Duration) Option { return func(c *config) { c.pq.WALDelay = d } }

// Writer appends records to the log files of one directory. It is safe for
// concurrent use. Append validates and stamps the records and queues them;
// one background goroutine writes them: first to the current file's
// write-ahead log, DIR/decisions-N.wal, then, a row group at a time, to
// DIR/decisions-N.parquet.tmp. A file is sealed (footer written, fsync,
// renamed to .parquet, directory fsynced, write-ahead log removed) when it
// reaches the record or byte limit, on Flush and on Close. A killed
// process loses only the records still in the queue and those of the
// last WithWALDelay (2 ms by default) not yet in the write-ahead log:
// the next Writer on
// the directory seals the write-ahead log's records (Recovered). Sealed
// files are never written again.
type Writer struct {
	w *pqlog.Writer[Record]
}

// Recovery is what NewWriter found of one unsealed file: the records it
// recovered into a sealed file, and the bytes it could not recover, with
// the file they were in.
type Recovery = pqlog.Recovery

// NewWriter returns a Writer for dir, creating the directory if needed.
// It first recovers the files earlier writers left unsealed (see
// Recovered). File numbering continues after the highest index already in
// dir (sealed or not), so a restarted server never overwrites or reuses a
// file.
func NewWriter(dir string, opts ...Option) (*Writer, error) {
	c := config{now: time.Now, pq: pqlog.Config[Record]{MaxRecords: DefaultMaxRecords, MaxBytes: DefaultMaxBytes,
		RowGroup: DefaultRowGroupRecords, Queue: DefaultQueue, WALDelay: DefaultWALDelay}}
	for _, o := range opts {
		o(&c)
	}
	if c.now == nil {
		return nil, errors.New("declog: nil clock")
	}
	if c.pq.RowGroup <= 0 {
		return nil, fmt.Errorf("declog: row group of %d records, want > 0", c.pq.RowGroup)
	}
	now := c.now
	c.pq.Stamp = func(r *Record) {
		if r.Time().IsZero() {
			if r.Kind == KindDecision {
				r.Decision.Time = now()
			} else {
				r.Outcome.Time = now()
			}
		}
	}
	w, err := pqlog.NewWriter(format, dir, c.pq)
	if err != nil {
		return nil, err
	}
	return &Writer{w: w}, nil
}

// Append adds records to the log. Records with a zero Time are stamped
// with the Writer's clock. It returns a *FormatError for an invalid record
// (nothing of the call is logged then), ErrClosed after Close, and the
// first I/O error the Writer met (the Writer is unusable after one). It
// never blocks on I/O: when the queue is full it drops the records that do
// not fit and counts them (Dropped). The queue keeps the records' slices
// (Workers, PS, ...) until it writes them: do not modify them after the
// call.
func (w *Writer) Append(recs ...Record) error {
	for i := range recs {
		if err := recs[i].Validate(); err != nil {
			return err
		}
	}
	return w.w.Write(recs...)
}

// Flush makes every record appended so far durable and readable: it waits
// for the queue to write them and seals the current file (if it holds any
// record). A server calls it periodically to bound what a crash of the
// machine can lose.
func (w *Writer) Flush() error { return w.w.Flush() }

// Close writes the queued records, seals the current file and releases
// the Writer. Closing twice returns nil.
func (w *Writer) Close() error { return w.w.Close() }

// Files returns the paths of the files this Writer has sealed, in order.
func (w *Writer) Files() []string { return w.w.Files() }

// Dropped returns how many records Append dropped because the queue was
// full.
func (w *Writer) Dropped() int64 { return w.w.Dropped() }

// Recovered returns what NewWriter found unsealed in the directory, one
// entry per file, in index order: the records it sealed from the file's
// write-ahead log, and the bytes it could not recover (a torn last frame,
// or a .tmp without a write-ahead log, left in place), naming the file.
func (w *Writer) Recovered() []Recovery { return w.w.Recovered() }

// drain waits until every record appended so far is in the current
// file's write-ahead log (tests: a crash after it loses nothing).
func (w *Writer) drain() error { return w.w.Drain() }
