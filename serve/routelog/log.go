package routelog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/drover-sched/drover/internal/inputfile"
)

// FileName is the route log's name in a server's log directory (drover
// serve -log-dir DIR writes DIR/routes.jsonl beside the decision log).
const FileName = "routes.jsonl"

// MaxLine bounds one line of the log (a record with 1,024 instances is
// about 200 KiB).
const MaxLine = 64 << 20

// Read reads a route log: one record a line, in the order they were
// written. A line that is not a valid record is an error naming its line
// number (from 1); a last line without its newline (a write cut short by
// a crash) is left out and counted in partial.
func Read(r io.Reader) ([]Record, int, error) {
	recs, partial, err := Records(r, Decode)
	if err != nil {
		return recs, 0, fmt.Errorf("routelog: %w", err)
	}
	return recs, partial, nil
}

// Records reads a log of JSON lines whose every line decode turns into a
// record, in order (ReadLines): a line decode refuses is an error naming
// its line number, and a last line without its newline is left out and
// counted in partial. The records before a bad line are returned with
// its error. Read and serve/mmlog's readers are it with their decoders.
func Records[T any](r io.Reader, decode func(line []byte) (T, error)) (recs []T, partial int, err error) {
	partial, err = ReadLines(r, func(line []byte) error {
		rec, err := decode(line)
		if err == nil {
			recs = append(recs, rec)
		}
		return err
	})
	return recs, partial, err
}

// ReadLines calls fn with each line of a log of JSON lines (without its
// newline; a "\r" before it is dropped), in order, until fn returns an
// error, which it returns as "line N: " and that error (N from 1). A last line
// without its newline (a write cut short by a crash) is not passed to fn
// and counted in partial. The line is valid only during the call. Read
// and serve/mmlog's readers sit on it.
func ReadLines(r io.Reader, fn func(line []byte) error) (partial int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err == io.EOF {
			return 0, nil
		}
		if errors.Is(err, errPartial) {
			return 1, nil
		}
		if err == nil {
			err = fn(line)
		}
		if err != nil {
			return 0, fmt.Errorf("line %d: %w", n, err)
		}
	}
}

var errPartial = errors.New("routelog: partial last line")

// readLine returns the next line without its newline; io.EOF at the end,
// errPartial for a last line without a newline.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			return nil, fmt.Errorf("longer than %d bytes", MaxLine)
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'}), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(line) == 0:
			return nil, io.EOF
		case err == io.EOF:
			return nil, errPartial
		default:
			return nil, err
		}
	}
}

// ReadFile reads the route log at path (Read) through internal/inputfile:
// a path that is not a regular file, or a log larger than inputfile.Log
// (1 GiB), is an error naming the path.
func ReadFile(path string) ([]Record, int, error) { return ReadFileWith(path, Read) }

// ReadFileWith opens path through internal/inputfile (a regular file of at
// most inputfile.Log bytes; otherwise an error naming the path) and reads
// it with read, prefixing read's error with the path. ReadFile and
// serve/mmlog's file readers are it with their readers.
func ReadFileWith[T any](path string, read func(io.Reader) ([]T, int, error)) ([]T, int, error) {
	f, err := inputfile.Open(path, inputfile.Log)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	recs, partial, err := read(f)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return recs, partial, nil
}

// DefaultQueue is a Writer's default queue of encoded lines.
const DefaultQueue = 16384

// Writer appends records to a route log. Append encodes on the caller's
// goroutine and only queues the line: one goroutine of the Writer writes
// them, and when the queue is full the record is dropped and counted
// (Dropped), so that a slow disk never delays a Route. Flush waits for the
// queued lines to be written; Close flushes and closes. A Writer is safe
// for concurrent use.
type Writer struct {
	w       io.Writer
	c       io.Closer
	q       chan item
	done    chan struct{}
	dropped atomic.Int64

	mu     sync.Mutex // closed, and the queue's closing
	closed bool
	errMu  sync.Mutex
	err    error // the first write error, under errMu
}

type item struct {
	line  []byte
	flush chan error
}

// NewWriter returns a Writer appending to w with a queue of queue lines
// (0: DefaultQueue); Close closes w when it is an io.Closer.
func NewWriter(w io.Writer, queue int) *Writer {
	if queue <= 0 {
		queue = DefaultQueue
	}
	lw := &Writer{w: w, q: make(chan item, queue), done: make(chan struct{})}
	if c, ok := w.(io.Closer); ok {
		lw.c = c
	}
	go lw.run()
	return lw
}

// Create opens (or creates) the route log at path for appending, with
// the default queue. A last line that a crash cut short (no newline) is
// cut off first, so that the records appended after it stay readable.
func Create(path string) (*Writer, error) {
	if err := trimPartial(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return NewWriter(f, 0), nil
}

// trimPartial cuts a last line without its newline off the file at path
// (a write a crash cut short), so that appending continues a valid log.
func trimPartial(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	// Find the last newline, reading backwards in blocks.
	const block = 64 << 10
	end := fi.Size()
	buf := make([]byte, block)
	for off := end; off > 0; {
		n := min(int64(block), off)
		off -= n
		if _, err := f.ReadAt(buf[:n], off); err != nil {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			if keep := off + int64(i) + 1; keep != end {
				return f.Truncate(keep)
			}
			return nil
		}
	}
	return f.Truncate(0)
}

func (lw *Writer) run() {
	defer close(lw.done)
	bw := bufio.NewWriterSize(lw.w, 256<<10)
	for it := range lw.q {
		if it.flush != nil {
			err := bw.Flush()
			lw.setErr(err)
			it.flush <- lw.Err()
			continue
		}
		if _, err := bw.Write(it.line); err != nil {
			lw.setErr(err)
		}
		if len(lw.q) == 0 {
			lw.setErr(bw.Flush())
		}
	}
	lw.setErr(bw.Flush())
}

func (lw *Writer) setErr(err error) {
	if err == nil {
		return
	}
	lw.errMu.Lock()
	if lw.err == nil {
		lw.err = err
	}
	lw.errMu.Unlock()
}

// Err returns the first write error, if any.
func (lw *Writer) Err() error {
	lw.errMu.Lock()
	defer lw.errMu.Unlock()
	return lw.err
}

// ErrClosed is returned by Append and Flush after Close.
var ErrClosed = errors.New("routelog: writer closed")

// Append validates r and queues its line; it returns the validation's
// error, or ErrClosed, and drops the record (counted) when the queue is
// full.
func (lw *Writer) Append(r *Record) error {
	if err := r.Validate(); err != nil {
		return err
	}
	return lw.AppendLine(Encode(nil, r))
}

// AppendLine queues an encoded line as it is (it must end in a newline):
// a Writer carries any log of JSON lines, e.g. serve/mmlog's. It returns
// ErrClosed after Close and drops the line (counted) when the queue is
// full.
func (lw *Writer) AppendLine(line []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.closed {
		return ErrClosed
	}
	select {
	case lw.q <- item{line: line}:
	default:
		lw.dropped.Add(1)
	}
	return nil
}

// Dropped returns how many records were dropped because the queue was
// full.
func (lw *Writer) Dropped() int64 { return lw.dropped.Load() }

// Flush waits until the lines queued before it are written and returns
// the first write error.
func (lw *Writer) Flush() error {
	ch := make(chan error, 1)
	lw.mu.Lock()
	if lw.closed {
		lw.mu.Unlock()
		return ErrClosed
	}
	// Under mu, so that Close cannot close the queue meanwhile; the send
	// may wait for room, and the writer goroutine takes no lock to make it.
	lw.q <- item{flush: ch}
	lw.mu.Unlock()
	return <-ch
}

// Close writes the queued lines, closes the underlying writer and returns
// the first error.
func (lw *Writer) Close() error {
	lw.mu.Lock()
	if lw.closed {
		lw.mu.Unlock()
		return ErrClosed
	}
	lw.closed = true
	close(lw.q)
	lw.mu.Unlock()
	<-lw.done
	if lw.c != nil {
		lw.setErr(lw.c.Close())
	}
	return lw.Err()
}
