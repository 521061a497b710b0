package telemlog

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/drover-sched/drover/internal/pqlog"
)

// File naming: DIR/telemetry-000001.parquet once sealed; the file being
// written carries TmpSuffix, and its write-ahead log is
// DIR/telemetry-000001.wal. The prefix differs from the decision log's
// (datasets/declog, "decisions-"), so both logs can share a directory and
// each reader ignores the other's files.
const (
	// FilePrefix starts every log file's name.
	FilePrefix = "telemetry-"
	// FileSuffix ends a sealed log file's name.
	FileSuffix = pqlog.FileSuffix
	// TmpSuffix is appended to the name of a file still being written.
	TmpSuffix = pqlog.TmpSuffix
	// WALSuffix ends the name of an unsealed file's write-ahead log.
	WALSuffix = pqlog.WALSuffix
)

// Defaults of the Writer's options.
const (
	// DefaultMaxSamples is the samples per file before it is sealed.
	DefaultMaxSamples = 1_000_000
	// DefaultRowGroupSamples is the samples buffered in memory per row
	// group.
	DefaultRowGroupSamples = 8192
	// DefaultSealInterval is how long a file stays open before the next
	// Write seals it.
	DefaultSealInterval = time.Minute
	// DefaultQueue is the queue a server sets (Options.Queue): the
	// samples Write queues before it drops.
	DefaultQueue = pqlog.DefaultQueue
)

// ErrClosed is returned by Write and Flush after Close.
var ErrClosed = errors.New("telemlog: writer closed")

// FileName returns the name of the sealed log file with index i.
func FileName(i int) string { return format.FileName(i) }

// Options configures a Writer; the zero value takes every default.
type Options struct {
	// MaxSamples seals a file once it holds this many samples
	// (DefaultMaxSamples when 0; negative: no limit).
	MaxSamples int
	// RowGroupSamples bounds the samples buffered in memory: a row group
	// is written every RowGroupSamples samples (DefaultRowGroupSamples
	// when 0).
	RowGroupSamples int
	// SealInterval seals the current file at the first Write this long
	// after the file's first sample (DefaultSealInterval when 0; negative:
	// only by size, Flush and Close), bounding what a crash of the machine
	// can lose.
	SealInterval time.Duration
	// Now is the clock of SealInterval (time.Now when nil), read by
	// Write. Samples keep their own times.
	Now func() time.Time
	// Queue, when positive, is how many samples Write queues for a
	// background goroutine that writes them: Write then does no I/O, and
	// when the queue is full it drops the sample and counts it (Dropped).
	// A server sets DefaultQueue. When 0 or negative (the default), Write
	// encodes and writes on the caller's goroutine and never drops, as an
	// offline recorder (drover sim --record) wants.
	Queue int
	// WALDelay, with a queue, is how long the background goroutine may
	// hold samples' write-ahead-log frames in memory before writing them:
	// 0 is pqlog.DefaultWALDelay (2 ms), negative after every batch. Held
	// frames are lost if the process is killed, like queued samples.
	WALDelay time.Duration
}

// Writer appends samples to the telemetry log files of one directory. It
// is safe for concurrent use. Write writes the sample (or, with
// Options.Queue, queues it for one background goroutine that does) to the
// current file's write-ahead log,
// DIR/telemetry-N.wal, and, a row group at a time, to
// DIR/telemetry-N.parquet.tmp; a file is sealed (footer written, fsync,
// renamed to .parquet, directory fsynced, write-ahead log removed) when
// it reaches MaxSamples, at the first Write SealInterval or more after
// the file's first sample, on Flush and on Close. A killed process loses
// only the samples still in a queue: the next Writer on the directory
// seals the write-ahead log's samples (Recovered). Sealed files are never
// touched; a sample Write accepted is in a sealed file after the next
// seal.
type Writer struct {
	w *pqlog.Writer[Sample]
}

var _ io.Closer = (*Writer)(nil)

// Recovery is what NewWriter found of one unsealed file: the samples it
// recovered into a sealed file, and the bytes it could not recover, with
// the file they were in.
type Recovery = pqlog.Recovery

// NewWriter returns a Writer for dir, creating the directory if needed.
// It first recovers the files earlier writers left unsealed (see
// Recovered). File numbering continues after the highest index already in
// dir (sealed or not), so a restarted server never overwrites or reuses a
// file. It returns an error for a negative RowGroupSamples.
func NewWriter(dir string, opts Options) (*Writer, error) {
	if opts.MaxSamples == 0 {
		opts.MaxSamples = DefaultMaxSamples
	}
	if opts.RowGroupSamples == 0 {
		opts.RowGroupSamples = DefaultRowGroupSamples
	}
	if opts.RowGroupSamples < 0 {
		return nil, fmt.Errorf("telemlog: row group of %d samples, want > 0", opts.RowGroupSamples)
	}
	if opts.SealInterval == 0 {
		opts.SealInterval = DefaultSealInterval
	}
	if opts.WALDelay == 0 {
		opts.WALDelay = pqlog.DefaultWALDelay
	}
	w, err := pqlog.NewWriter(format, dir, pqlog.Config[Sample]{MaxRecords: opts.MaxSamples, RowGroup: opts.RowGroupSamples,
		SealInterval: opts.SealInterval, Now: opts.Now, Queue: opts.Queue, WALDelay: opts.WALDelay})
	if err != nil {
		return nil, err
	}
	return &Writer{w: w}, nil
}

// Write adds one sample to the log. It returns a *FormatError for an
// invalid sample (nothing is logged then), ErrClosed after Close, and the
// first I/O error the Writer met (the Writer is unusable after one). With
// a queue it never blocks on I/O: when the queue is full it drops the
// sample and counts it (Dropped).
func (w *Writer) Write(s Sample) error {
	if err := s.Validate(); err != nil {
		return err
	}
	return w.w.Write(s)
}

// Flush makes every sample written so far durable and readable: it waits
// for the queue (if any) to write them and seals the current file (if it holds any
// sample).
func (w *Writer) Flush() error { return w.w.Flush() }

// Close writes the queued samples (if any), seals the current file and releases
// the Writer. Closing twice returns nil.
func (w *Writer) Close() error { return w.w.Close() }

// Files returns the paths of the files this Writer has sealed, in order.
func (w *Writer) Files() []string { return w.w.Files() }

// Dropped returns how many samples Write dropped because the queue was
// full.
func (w *Writer) Dropped() int64 { return w.w.Dropped() }

// Recovered returns what NewWriter found unsealed in the directory, one
// entry per file, in index order: the samples it sealed from the file's
// write-ahead log, and the bytes it could not recover (a torn last frame,
// or a .tmp without a write-ahead log, left in place), naming the file.
func (w *Writer) Recovered() []Recovery { return w.w.Recovered() }

// drain waits until every sample written so far is in the current file's
// write-ahead log (tests).
func (w *Writer) drain() error { return w.w.Drain() }
