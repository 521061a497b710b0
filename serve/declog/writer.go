package declog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// File naming: DIR/decisions-000001.parquet once sealed; the file being
// written carries TmpSuffix.
const (
	// FilePrefix starts every log file's name.
	FilePrefix = "decisions-"
	// FileSuffix ends a sealed log file's name.
	FileSuffix = ".parquet"
	// TmpSuffix is appended to the name of a file still being written.
	TmpSuffix = ".tmp"
)

// Defaults of the Writer's options.
const (
	// DefaultMaxRecords is the records per file before it is sealed.
	DefaultMaxRecords = 100_000
	// DefaultMaxBytes is the bytes of row groups per file before it is sealed.
	DefaultMaxBytes = 64 << 20
	// DefaultRowGroupRecords is the records buffered in memory per row group.
	DefaultRowGroupRecords = 4096
)

// ErrClosed is returned by Append and Flush after Close.
var ErrClosed = errors.New("declog: writer closed")

var fileRE = regexp.MustCompile(`^` + FilePrefix + `([0-9]{6,})` + regexp.QuoteMeta(FileSuffix) + `(` + regexp.QuoteMeta(TmpSuffix) + `)?$`)

// FileName returns the name of the sealed log file with index i.
func FileName(i int) string { return fmt.Sprintf("%s%06d%s", FilePrefix, i, FileSuffix) }

// parseName returns the index of a log file name and whether it is a
// temporary (unsealed) file; ok is false for other names.
func parseName(name string) (index int, tmp, ok bool) {
	m := fileRE.FindStringSubmatch(name)
	if m == nil {
		return 0, false, false
	}
	i, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, false, false
	}
	return i, m[2] != "", true
}

// Option configures a Writer.
type Option func(*Writer)

// WithClock sets the clock that stamps records appended with a zero Time
// (default time.Now).
func WithClock(now func() time.Time) Option { return func(w *Writer) { w.now = now } }

// WithMaxRecords seals a file once it holds n records (default
// DefaultMaxRecords; n <= 0 means no limit).
func WithMaxRecords(n int) Option { return func(w *Writer) { w.maxRecords = n } }

// WithMaxBytes seals a file once its written row groups reach n bytes
// (default DefaultMaxBytes; n <= 0 means no limit).
func WithMaxBytes(n int64) Option { return func(w *Writer) { w.maxBytes = n } }

// WithRowGroupRecords bounds the records buffered in memory: a row group is
// written every n records (default DefaultRowGroupRecords).
func WithRowGroupRecords(n int) Option { return func(w *Writer) { w.rowGroup = n } }

// Writer appends records to the log files of one directory. It is safe for
// concurrent use. Records are buffered in memory up to the row-group size,
// then written as a row group to the current file, DIR/decisions-N.parquet.tmp;
// a file is sealed (footer written, fsync, renamed to .parquet, directory
// fsynced) when it reaches the record or byte limit, on Flush and on
// Close. A crash loses at most the records of the unsealed file and never
// touches sealed ones.
type Writer struct {
	dir        string
	now        func() time.Time
	maxRecords int
	maxBytes   int64
	rowGroup   int

	mu      sync.Mutex
	next    int // index of the next file to create
	f       *os.File
	cw      *countingWriter
	fw      *pqarrow.FileWriter
	b       *builder
	records int // records in the current file, buffered ones included
	sealed  []string
	err     error // sticky: the first write error
	closed  bool
}

// NewWriter returns a Writer for dir, creating the directory if needed.
// File numbering continues after the highest index already in dir (sealed
// or not), so a restarted server never overwrites or reuses a file.
func NewWriter(dir string, opts ...Option) (*Writer, error) {
	w := &Writer{dir: dir, now: time.Now, maxRecords: DefaultMaxRecords, maxBytes: DefaultMaxBytes, rowGroup: DefaultRowGroupRecords}
	for _, o := range opts {
		o(w)
	}
	if w.now == nil {
		return nil, errors.New("declog: nil clock")
	}
	if w.rowGroup <= 0 {
		return nil, fmt.Errorf("declog: row group of %d records, want > 0", w.rowGroup)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("declog: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("declog: %w", err)
	}
	w.next = 1
	for _, e := range ents {
		if i, _, ok := parseName(e.Name()); ok && i >= w.next {
			w.next = i + 1
		}
	}
	w.b = newBuilder()
	return w, nil
}

// Append adds records to the log. Records with a zero Time are stamped
// with the Writer's clock. It returns a *FormatError for an invalid record
// (nothing of the call is logged then), ErrClosed after Close, and the
// first I/O error the Writer met (the Writer is unusable after one).
func (w *Writer) Append(recs ...Record) error {
	for i := range recs {
		if err := recs[i].Validate(); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	for i := range recs {
		r := recs[i]
		if r.Time().IsZero() {
			if r.Kind == KindDecision {
				r.Decision.Time = w.now()
			} else {
				r.Outcome.Time = w.now()
			}
		}
		w.b.append(&r)
		w.records++
		if w.b.n >= w.rowGroup {
			if err := w.writeRowGroup(); err != nil {
				return w.fail(err)
			}
		}
		if (w.maxRecords > 0 && w.records >= w.maxRecords) || (w.maxBytes > 0 && w.cw != nil && w.cw.n >= w.maxBytes) {
			if err := w.seal(); err != nil {
				return w.fail(err)
			}
		}
	}
	return nil
}

// Flush makes every record appended so far durable and readable: it seals
// the current file (if it holds any record). A server calls it
// periodically to bound what a crash can lose.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if err := w.seal(); err != nil {
		return w.fail(err)
	}
	return nil
}

// Close seals the current file and releases the Writer. Closing twice
// returns nil.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var err error
	if w.err == nil {
		err = w.seal()
	} else if w.f != nil {
		w.f.Close() // leave the broken .tmp for readers to report
	}
	w.b.release()
	return err
}

// Files returns the paths of the files this Writer has sealed, in order.
func (w *Writer) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.sealed...)
}

func (w *Writer) fail(err error) error {
	w.err = err
	return err
}

// writeRowGroup writes the buffered records as one row group, opening a
// new file first when none is open.
func (w *Writer) writeRowGroup() error {
	if w.b.n == 0 {
		return nil
	}
	if w.fw == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	rec := w.b.batch()
	defer rec.Release()
	if err := w.fw.Write(rec); err != nil {
		return fmt.Errorf("declog: write %s: %w", w.f.Name(), err)
	}
	return nil
}

func (w *Writer) open() error {
	path := filepath.Join(w.dir, FileName(w.next)+TmpSuffix)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("declog: %w", err)
	}
	w.next++
	cw := &countingWriter{w: f}
	fw, err := pqarrow.NewFileWriter(schema, nopCloser{cw}, writerProps(), pqarrow.DefaultWriterProps())
	if err != nil {
		f.Close()
		return fmt.Errorf("declog: %s: %w", path, err)
	}
	w.f, w.cw, w.fw = f, cw, fw
	return nil
}

// seal writes the buffered records, the footer, fsyncs and renames the
// current file to its final name, then fsyncs the directory.
func (w *Writer) seal() error {
	if err := w.writeRowGroup(); err != nil {
		return err
	}
	if w.fw == nil {
		return nil
	}
	tmp := w.f.Name()
	if err := w.fw.Close(); err != nil {
		return fmt.Errorf("declog: close %s: %w", tmp, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("declog: sync %s: %w", tmp, err)
	}
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("declog: close %s: %w", tmp, err)
	}
	final := tmp[:len(tmp)-len(TmpSuffix)]
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("declog: %w", err)
	}
	if err := syncDir(w.dir); err != nil {
		return err
	}
	w.f, w.cw, w.fw = nil, nil, nil
	w.records = 0
	w.sealed = append(w.sealed, final)
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("declog: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("declog: sync %s: %w", dir, err)
	}
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

// Write implements io.Writer.
func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
