package runlog

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// CSVFile is the name of the CSV scalar log in a run directory.
const CSVFile = "scalars.csv"

// EventFileName is the name TensorFlow gives an event file written at t
// on host: events.out.tfevents.<unix seconds>.<host>. TensorBoard finds
// event files by the "tfevents" in their names.
func EventFileName(t time.Time, host string) string {
	return "events.out.tfevents." + strconv.FormatInt(t.Unix(), 10) + "." + host
}

// Options configures a Logger. The zero value is usable.
type Options struct {
	// Now is the clock that stamps every scalar and paces flushes; nil
	// means time.Now. Tests pass a fake one.
	Now func() time.Time
	// Hostname goes into the event file's name; "" means os.Hostname().
	Hostname string
	// FlushEvery writes the buffered scalars out once this many are
	// buffered; 0 means 256.
	FlushEvery int
	// FlushInterval writes them out when a scalar is logged this long
	// after the last write; 0 means 10 seconds.
	FlushInterval time.Duration
}

// Logger writes the scalars of a training run to a TensorBoard event file
// and to scalars.csv in the run directory. Scalars are buffered and
// written out whole (every FlushEvery scalars, every FlushInterval, and
// on Flush and Close), each file appended in one write per flush, so a
// crash loses at most the scalars since the last flush and leaves the
// rows and records before them intact. A Logger is safe for concurrent
// use.
type Logger struct {
	mu            sync.Mutex
	now           func() time.Time
	flushEvery    int
	flushInterval time.Duration
	lastFlush     time.Time
	events        *os.File
	csv           *os.File
	eventBuf      []byte
	csvBuf        []byte
	pending       int
	err           error // the first write error; sticky
	closed        bool
}

// Open creates dir (and its parents) if needed, a new event file in it
// named by EventFileName, starting with the file-version event, and
// scalars.csv, appended to when it exists (its header must then be
// CSVHeader). It fails if the event file already exists.
func Open(dir string, opts Options) (*Logger, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("runlog: hostname: %w", err)
		}
		opts.Hostname = h
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = 256
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 10 * time.Second
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	t := opts.Now()
	csvf, err := openCSV(filepath.Join(dir, CSVFile))
	if err != nil {
		return nil, err
	}
	evPath := filepath.Join(dir, EventFileName(t, opts.Hostname))
	evf, err := os.OpenFile(evPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		csvf.Close()
		return nil, fmt.Errorf("runlog: %w", err)
	}
	l := &Logger{now: opts.Now, flushEvery: opts.FlushEvery, flushInterval: opts.FlushInterval,
		lastFlush: t, events: evf, csv: csvf}
	l.eventBuf = AppendEventRecord(l.eventBuf, Event{WallTime: WallSeconds(t), FileVersion: FileVersion})
	if err := l.flushLocked(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// openCSV opens path for appending, writing the header to a new or empty
// file and checking it in an existing one.
func openCSV(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("runlog: %w", err)
	}
	if st.Size() == 0 {
		_, err = f.WriteString(CSVHeader + "\n")
	} else {
		var line string
		line, err = bufio.NewReader(io.NewSectionReader(f, 0, st.Size())).ReadString('\n')
		if err == nil && line != CSVHeader+"\n" {
			err = fmt.Errorf("%w: header %q, want %q", ErrCorrupt, line, CSVHeader)
		}
		if err == nil {
			err = dropPartialRow(f, st.Size())
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("runlog: %s: %w", path, err)
	}
	return f, nil
}

// dropPartialRow truncates the file of size bytes after its last
// newline: a row that a crash cut short would otherwise run into the
// next row appended.
func dropPartialRow(f *os.File, size int64) error {
	const window = 64 << 10 // far longer than a row
	off := max(0, size-window)
	tail := make([]byte, size-off)
	if _, err := f.ReadAt(tail, off); err != nil {
		return err
	}
	i := bytes.LastIndexByte(tail, '\n')
	switch {
	case i == len(tail)-1:
		return nil
	case i < 0:
		return fmt.Errorf("%w: no newline in the last %d bytes", ErrCorrupt, len(tail))
	}
	return f.Truncate(off + int64(i) + 1)
}

// EventPath returns the path of the Logger's event file.
func (l *Logger) EventPath() string { return l.events.Name() }

// CSVPath returns the path of the Logger's scalars.csv.
func (l *Logger) CSVPath() string { return l.csv.Name() }

// Scalar logs value under tag at step, stamped with the Logger's clock,
// to both files. The event file keeps it as a float32, the CSV in full.
// It writes the buffered scalars out when FlushEvery or FlushInterval
// says so. A write error is kept and returned by Flush and Close; after
// one, or after Close, Scalar drops its value. A tag holding a newline
// is a programmer error: Scalar panics.
func (l *Logger) Scalar(tag string, step int, value float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.err != nil {
		return
	}
	t := l.now()
	w := WallSeconds(t)
	l.csvBuf = AppendCSVRow(l.csvBuf, Row{Step: int64(step), Tag: tag, Value: value, WallTime: w})
	l.eventBuf = AppendEventRecord(l.eventBuf, Event{WallTime: w, Step: int64(step), Values: []Value{{Tag: tag, SimpleValue: float32(value)}}})
	l.pending++
	if l.pending >= l.flushEvery || t.Sub(l.lastFlush) >= l.flushInterval {
		l.err = l.flushLocked()
	}
}

// Flush writes the buffered scalars out. It returns the first write error
// the Logger has met.
func (l *Logger) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.err
	}
	if l.err == nil {
		l.err = l.flushLocked()
	}
	return l.err
}

func (l *Logger) flushLocked() error {
	// The CSV first: a reader that sees a scalar in the event file sees
	// it in the CSV too.
	if len(l.csvBuf) > 0 {
		if _, err := l.csv.Write(l.csvBuf); err != nil {
			return fmt.Errorf("runlog: %w", err)
		}
		l.csvBuf = l.csvBuf[:0]
	}
	if len(l.eventBuf) > 0 {
		if _, err := l.events.Write(l.eventBuf); err != nil {
			return fmt.Errorf("runlog: %w", err)
		}
		l.eventBuf = l.eventBuf[:0]
	}
	l.pending = 0
	l.lastFlush = l.now()
	return nil
}

// Close flushes, syncs and closes both files. It returns the first error
// the Logger has met; closing twice returns it again.
func (l *Logger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.err
	}
	l.closed = true
	if l.err == nil {
		l.err = l.flushLocked()
	}
	for _, f := range []*os.File{l.csv, l.events} {
		if err := f.Sync(); err != nil {
			l.err = firstErr(l.err, fmt.Errorf("runlog: %w", err))
		}
		if err := f.Close(); err != nil {
			l.err = firstErr(l.err, fmt.Errorf("runlog: %w", err))
		}
	}
	return l.err
}

// firstErr keeps the first error.
func firstErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}
