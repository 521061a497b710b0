package telemlog

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

// File naming: DIR/telemetry-000001.parquet once sealed; the file being
// written carries TmpSuffix. The prefix differs from the decision log's
// (serve/declog, "decisions-"), so both logs can share a directory and
// each reader ignores the other's files.
const (
	// FilePrefix starts every log file's name.
	FilePrefix = "telemetry-"
	// FileSuffix ends a sealed log file's name.
	FileSuffix = ".parquet"
	// TmpSuffix is appended to the name of a file still being written.
	TmpSuffix = ".tmp"
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
)

// ErrClosed is returned by Write and Flush after Close.
var ErrClosed = errors.New("telemlog: writer closed")

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
	// only by size, Flush and Close), bounding what a crash can lose.
	SealInterval time.Duration
	// Now is the clock of SealInterval (time.Now when nil). Samples keep
	// their own times.
	Now func() time.Time
}

// Writer appends samples to the telemetry log files of one directory. It
// is safe for concurrent use. Samples are buffered in memory up to the
// row-group size, then written as a row group to the current file,
// DIR/telemetry-N.parquet.tmp; a file is sealed (footer written, fsync,
// renamed to .parquet, directory fsynced) when it reaches MaxSamples, at
// the first Write SealInterval or more after the file's first sample, on Flush and on Close. A crash loses
// at most the samples of the unsealed file and never touches sealed ones;
// a sample Write accepted is in a sealed file after the next seal.
type Writer struct {
	dir  string
	opts Options

	mu      sync.Mutex
	next    int // index of the next file to create
	f       *os.File
	fw      *pqarrow.FileWriter
	opened  time.Time // when the current file's first sample was written
	b       *builder
	samples int // samples in the current file, buffered ones included
	sealed  []string
	err     error // sticky: the first write error
	closed  bool
}

// NewWriter returns a Writer for dir, creating the directory if needed.
// File numbering continues after the highest index already in dir (sealed
// or not), so a restarted server never overwrites or reuses a file. It
// returns an error for a negative RowGroupSamples.
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
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("telemlog: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("telemlog: %w", err)
	}
	w := &Writer{dir: dir, opts: opts, next: 1, b: newBuilder()}
	for _, e := range ents {
		if i, _, ok := parseName(e.Name()); ok && i >= w.next {
			w.next = i + 1
		}
	}
	return w, nil
}

// Write adds one sample to the log. It returns a *FormatError for an
// invalid sample (nothing is logged then), ErrClosed after Close, and the
// first I/O error the Writer met (the Writer is unusable after one).
func (w *Writer) Write(s Sample) error {
	if err := s.Validate(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if w.samples > 0 && w.opts.SealInterval > 0 && w.opts.Now().Sub(w.opened) >= w.opts.SealInterval {
		if err := w.seal(); err != nil {
			return w.fail(err)
		}
	}
	if w.samples == 0 {
		w.opened = w.opts.Now()
	}
	w.b.append(&s)
	w.samples++
	if w.b.n >= w.opts.RowGroupSamples {
		if err := w.writeRowGroup(); err != nil {
			return w.fail(err)
		}
	}
	if w.opts.MaxSamples > 0 && w.samples >= w.opts.MaxSamples {
		if err := w.seal(); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// Flush makes every sample written so far durable and readable: it seals
// the current file (if it holds any sample).
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

// writeRowGroup writes the buffered samples as one row group, opening a
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
		return fmt.Errorf("telemlog: write %s: %w", w.f.Name(), err)
	}
	return nil
}

func (w *Writer) open() error {
	path := filepath.Join(w.dir, FileName(w.next)+TmpSuffix)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("telemlog: %w", err)
	}
	w.next++
	fw, err := pqarrow.NewFileWriter(schema, nopCloser{f}, writerProps(), pqarrow.DefaultWriterProps())
	if err != nil {
		f.Close()
		return fmt.Errorf("telemlog: %s: %w", path, err)
	}
	w.f, w.fw = f, fw
	return nil
}

// seal writes the buffered samples, the footer, fsyncs and renames the
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
		return fmt.Errorf("telemlog: close %s: %w", tmp, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("telemlog: sync %s: %w", tmp, err)
	}
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("telemlog: close %s: %w", tmp, err)
	}
	final := tmp[:len(tmp)-len(TmpSuffix)]
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("telemlog: %w", err)
	}
	if err := syncDir(w.dir); err != nil {
		return err
	}
	w.f, w.fw = nil, nil
	w.samples = 0
	w.sealed = append(w.sealed, final)
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("telemlog: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("telemlog: sync %s: %w", dir, err)
	}
	return nil
}

var _ io.Closer = (*Writer)(nil)
