package pqlog

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultQueue is the records a Writer's queue holds before it drops.
const DefaultQueue = 65536

// yieldAfter is how long the background goroutine works before it yields.
// With GOMAXPROCS=1 (the benchmarked server) nothing else runs while it
// works, and encoding a 4,096-record row group in one call (arrow-go's
// writer, before encode.go) took 15-40 ms on the benchmark machine:
// every Place call waited that long.
const yieldAfter = 100 * time.Microsecond

// DefaultWALDelay is how long a queued Writer's background goroutine
// holds write-ahead-log frames in memory before writing them (see
// Config.WALDelay).
const DefaultWALDelay = 2 * time.Millisecond

// tmpBuf is the size of the .tmp file's write buffer.
const tmpBuf = 64 << 10

// walBufMax is the frames a delayed write-ahead log buffers before it
// writes them, whatever their age.
const walBufMax = 64 << 10

// wakeBatch is the queued records at which Write wakes the background
// goroutine at once rather than at Config.WALDelay.
const wakeBatch = 256

// maxSpare is the capacity of the largest batch buffer the background
// goroutine keeps for reuse: a burst's larger buffer goes back to the
// garbage collector, so an idle writer holds little memory.
const maxSpare = 4096

// Config sets a Writer's limits.
type Config[T any] struct {
	// MaxRecords seals a file once it holds this many records (<= 0: no
	// limit).
	MaxRecords int
	// MaxBytes seals a file once its written row groups reach this many
	// bytes (<= 0: no limit).
	MaxBytes int64
	// RowGroup is the records per row group, the most buffered in memory
	// (> 0).
	RowGroup int
	// SealInterval seals the current file at the first record accepted
	// this long after the file's first record (<= 0: never by time).
	SealInterval time.Duration
	// Now is the clock of SealInterval, read on the caller's goroutine
	// (time.Now when nil).
	Now func() time.Time
	// Stamp, when set, completes each record on the caller's goroutine,
	// in queue order, before it is queued (the decision log stamps
	// records without a time).
	Stamp func(r *T)
	// Queue is the records the queue holds: Write queues records and one
	// background goroutine writes them; when the queue is full Write
	// drops the record and counts it (Dropped). Queue <= 0: no queue,
	// Write encodes and writes on the caller's goroutine under the
	// Writer's lock and never drops.
	Queue int
	// WALDelay, with a queue, lets records wait: the background
	// goroutine takes the queue this long after a record enters it
	// empty (or once it holds 256 records), and writes the write-ahead
	// log once its oldest record was queued this long ago (or 64 KiB of
	// frames are buffered), instead of waking for every record and
	// writing after every batch: at 10,000 records/s the goroutine woke
	// for nearly every record and wrote the log 0.87 times per record, a
	// system call each; with a delay it wakes and writes once per delay.
	// The records waiting are lost if the process is killed, like the
	// queue's; Flush, Close and row groups write them at once. <= 0: at
	// once.
	WALDelay time.Duration
}

// item is one queued record and when it was accepted.
type item[T any] struct {
	rec T
	at  time.Time
}

// Writer appends records to the log files of one directory (see the
// package comment). It is safe for concurrent use.
type Writer[T any] struct {
	f   *Format[T]
	dir string
	cfg Config[T]

	// The queue: what Write accepted and the background goroutine has not
	// taken yet.
	qmu     sync.Mutex
	pending []item[T]
	flushes []chan error // Flush calls waiting for the records before them
	drains  []chan error // drain calls, likewise
	closed  bool
	err     error // sticky: the first write error, as the queue's users see it
	dropped atomic.Int64
	wake    chan struct{}
	done    chan struct{} // closed when the background goroutine ends
	walDue  time.Time     // the background goroutine's: when the buffered frames must be written (zero: none buffered)
	walTick *time.Timer   // wakes the background goroutine at walDue
	// With a WALDelay: queuedAt is when the oldest queued record
	// entered the queue, and wakeTick, armed then, wakes the goroutine
	// WALDelay later (armed: it is).
	queuedAt time.Time
	armed    bool
	wakeTick *time.Timer

	// The files: owned by the background goroutine, or by the caller
	// holding mu when there is no queue.
	mu        sync.Mutex
	next      int // index of the next file to create
	cur       int // index of the current file (0: none)
	wal       *os.File
	walBuf    []byte // frames not yet written to wal
	f2        *os.File
	tb        *bufio.Writer // the .tmp's buffer
	enc       *encoder      // the current file's Parquet encoder, kept from file to file
	y         *yielder      // the background goroutine's; nil without a queue
	records   int           // records in the current file, buffered ones included
	opened    time.Time
	sealed    []string
	recovered []Recovery
	ferr      error // the first write error, as the files' owner sees it
	closeErr  error
}

// NewWriter returns a Writer for dir, creating the directory if needed.
// It first recovers what earlier writers left unsealed (Recover); file
// numbering continues after the highest index in dir, so a restarted
// server never overwrites or reuses a file. With cfg.Queue > 0 it starts
// the background goroutine, which Close ends.
func NewWriter[T any](f *Format[T], dir string, cfg Config[T]) (*Writer[T], error) {
	if cfg.RowGroup <= 0 {
		return nil, fmt.Errorf("%s: row group of %d records, want > 0", f.Log, cfg.RowGroup)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Log, err)
	}
	rec, next, err := recoverDir(f, dir, cfg.RowGroup)
	if err != nil {
		return nil, err
	}
	enc, err := newEncoder(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Log, err)
	}
	w := &Writer[T]{f: f, dir: dir, cfg: cfg, next: next, recovered: rec, enc: enc}
	if cfg.Queue > 0 {
		warmZstd()
		if w.y, err = newYielder(); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Log, err)
		}
		w.wake = make(chan struct{}, 1)
		w.done = make(chan struct{})
		w.wakeTick = time.AfterFunc(time.Hour, w.signal)
		w.wakeTick.Stop()
		go w.run()
	}
	return w, nil
}

// Write adds records to the log, in order. With a queue it only queues
// them (dropping, and counting, those the full queue cannot take); the
// error is ErrClosed after Close, or the first I/O error the background
// goroutine met (records accepted before it may be lost; the Writer is
// unusable after one). Without a queue it writes them, and returns the
// I/O error it meets. Records are not validated here. The queue keeps
// the records (and what they point to) until it writes them.
func (w *Writer[T]) Write(recs ...T) error {
	if w.cfg.Queue <= 0 {
		if err := w.lockFiles(); err != nil {
			return err
		}
		defer w.mu.Unlock()
		at := w.now()
		var it item[T]
		for i := range recs {
			it = item[T]{recs[i], at}
			if w.cfg.Stamp != nil {
				w.cfg.Stamp(&it.rec)
			}
			if err := w.add(&it); err != nil {
				return w.fail(err)
			}
		}
		return w.flushWAL()
	}
	if err := w.lockQueue(); err != nil {
		return err
	}
	at := w.now()
	if len(recs) > 0 && w.cfg.WALDelay > 0 && !w.armed && len(w.pending) < w.cfg.Queue {
		w.armed = true
		w.queuedAt = time.Now()
		w.wakeTick.Reset(w.cfg.WALDelay)
	}
	for i := range recs {
		if len(w.pending) >= w.cfg.Queue {
			w.dropped.Add(int64(len(recs) - i))
			break
		}
		// Stamped in place: a copy whose address Stamp takes would be
		// allocated on the heap, per record.
		w.pending = append(w.pending, item[T]{recs[i], at})
		if w.cfg.Stamp != nil {
			w.cfg.Stamp(&w.pending[len(w.pending)-1].rec)
		}
	}
	now := w.cfg.WALDelay <= 0 || len(w.pending) >= wakeBatch
	w.qmu.Unlock()
	if now {
		w.signal()
	}
	return nil
}

// lockQueue locks the queue for a call, unless the Writer is closed
// (ErrClosed) or failed (its error): then it returns the error, unlocked.
func (w *Writer[T]) lockQueue() error {
	w.qmu.Lock()
	err := w.err
	if w.closed {
		err = w.f.ErrClosed
	}
	if err != nil {
		w.qmu.Unlock()
	}
	return err
}

// lockFiles is lockQueue for a Writer without a queue: it locks the files.
func (w *Writer[T]) lockFiles() error {
	w.mu.Lock()
	err := w.ferr
	if w.closed {
		err = w.f.ErrClosed
	}
	if err != nil {
		w.mu.Unlock()
	}
	return err
}

// now reads the clock of SealInterval, only when there is one.
func (w *Writer[T]) now() time.Time {
	if w.cfg.SealInterval > 0 {
		return w.cfg.Now()
	}
	return time.Time{}
}

func (w *Writer[T]) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Dropped returns how many records Write dropped because the queue was
// full.
func (w *Writer[T]) Dropped() int64 { return w.dropped.Load() }

// Flush makes every record written so far durable and readable: it waits
// for the queue to reach them and seals the current file (if it holds any
// record).
func (w *Writer[T]) Flush() error {
	return w.request(func(w *Writer[T]) *[]chan error { return &w.flushes })
}

// Drain waits until every record written so far has reached the current
// file's write-ahead log (from where a restart recovers it after a crash
// of the process), without sealing.
func (w *Writer[T]) Drain() error {
	return w.request(func(w *Writer[T]) *[]chan error { return &w.drains })
}

func (w *Writer[T]) request(list func(*Writer[T]) *[]chan error) error {
	if w.cfg.Queue <= 0 {
		if err := w.lockFiles(); err != nil {
			return err
		}
		defer w.mu.Unlock()
		if list(w) == &w.flushes {
			return w.fail(w.seal())
		}
		return nil
	}
	if err := w.lockQueue(); err != nil {
		return err
	}
	ch := make(chan error, 1)
	l := list(w)
	*l = append(*l, ch)
	w.qmu.Unlock()
	w.signal()
	return <-ch
}

// Close writes what the queue holds, seals the current file and releases
// the Writer. Closing twice returns nil.
func (w *Writer[T]) Close() error {
	if w.cfg.Queue <= 0 {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.closed {
			return nil
		}
		w.closed = true
		return w.shutdown()
	}
	w.qmu.Lock()
	if w.closed {
		w.qmu.Unlock()
		return nil
	}
	w.closed = true
	w.qmu.Unlock()
	w.signal()
	<-w.done
	return w.closeErr
}

// Files returns the paths of the files this Writer has sealed, in order
// (files recovered at NewWriter not included).
func (w *Writer[T]) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.sealed...)
}

// Recovered returns what NewWriter found unsealed in the directory: one
// entry per unsealed file, recovered or not.
func (w *Writer[T]) Recovered() []Recovery {
	return append([]Recovery(nil), w.recovered...)
}

// run is the background goroutine: it takes the queue's records in
// batches, writes them, answers Flush and drain calls, and on Close seals
// and ends.
func (w *Writer[T]) run() {
	defer close(w.done)
	defer w.y.close()
	defer func() {
		if w.walTick != nil {
			w.walTick.Stop()
		}
		w.wakeTick.Stop()
	}()
	var spare []item[T]
	for {
		<-w.wake
		w.y.start()
		w.qmu.Lock()
		batch := w.pending
		w.pending = spare[:0]
		flushes, drains, closed := w.flushes, w.drains, w.closed
		w.flushes, w.drains = nil, nil
		queuedAt := w.queuedAt
		w.armed = false
		w.qmu.Unlock()

		w.mu.Lock()
		if w.ferr == nil {
			for i := range batch {
				if err := w.add(&batch[i]); err != nil {
					w.fail(err)
					break
				}
			}
			if len(batch) > 0 && w.cfg.WALDelay > 0 {
				// The batch's frames are due WALDelay after its
				// oldest record was queued.
				if due := queuedAt.Add(w.cfg.WALDelay); w.walDue.IsZero() || due.Before(w.walDue) {
					w.walDue = due
				}
			}
			if w.ferr == nil && w.walNow(len(flushes) > 0 || len(drains) > 0 || closed) {
				w.fail(w.flushWAL())
			}
		}
		for _, ch := range drains {
			ch <- w.ferr
		}
		if len(flushes) > 0 && w.ferr == nil {
			w.fail(w.seal())
		}
		for _, ch := range flushes {
			ch <- w.ferr
		}
		if closed {
			w.closeErr = w.shutdown()
		}
		if w.ferr != nil {
			w.qmu.Lock()
			w.err = w.ferr
			w.qmu.Unlock()
		}
		w.mu.Unlock()
		if closed {
			return
		}
		clear(batch) // let the records' memory go
		spare = batch[:0]
		if cap(spare) > maxSpare {
			spare = nil // a burst's buffer: do not keep it
		}
	}
}

// walNow reports whether the background goroutine writes the buffered
// write-ahead-log frames now (asked, or due by Config.WALDelay); when it
// does not, the timer wakes it when they are due.
func (w *Writer[T]) walNow(asked bool) bool {
	if len(w.walBuf) == 0 {
		w.walDue = time.Time{}
		return false
	}
	if asked || w.cfg.WALDelay <= 0 || len(w.walBuf) >= walBufMax {
		w.walDue = time.Time{}
		return true
	}
	now := time.Now()
	if w.walDue.IsZero() {
		w.walDue = now.Add(w.cfg.WALDelay)
	}
	if !now.Before(w.walDue) {
		w.walDue = time.Time{}
		return true
	}
	if w.walTick == nil {
		w.walTick = time.AfterFunc(w.walDue.Sub(now), w.signal)
	} else {
		w.walTick.Reset(w.walDue.Sub(now))
	}
	return false
}

// fail records the first write error; it returns err.
func (w *Writer[T]) fail(err error) error {
	if err != nil && w.ferr == nil {
		w.ferr = err
	}
	return err
}

// shutdown seals the current file (unless a write failed: then the
// broken .tmp and .wal stay for the next Writer to recover) and releases
// the builder.
func (w *Writer[T]) shutdown() error {
	var err error
	if w.ferr == nil {
		err = w.seal()
	} else {
		if w.f2 != nil {
			w.f2.Close()
		}
		if w.wal != nil {
			w.wal.Close()
		}
		err = w.ferr
		if w.cfg.Queue <= 0 {
			err = nil // the caller has had it from Write
		}
	}
	return err
}

// add appends one record to the current file: its frame to the
// write-ahead log's buffer, its row to the builder; it writes a full row
// group and seals by the limits.
func (w *Writer[T]) add(it *item[T]) error {
	if w.records > 0 && w.cfg.SealInterval > 0 && it.at.Sub(w.opened) >= w.cfg.SealInterval {
		if err := w.seal(); err != nil {
			return err
		}
	}
	if w.records == 0 {
		if err := w.openWAL(); err != nil {
			return err
		}
		w.opened = it.at
	}
	w.y.maybe()
	w.walBuf = AppendFrame(w.f, w.walBuf, &it.rec)
	w.f.Append(&w.enc.Row, &it.rec)
	if err := w.enc.endRow(); err != nil {
		return err
	}
	w.records++
	// The pages the record filled, compressed a page at a time between
	// yields.
	if err := w.enc.closeFull(w.y); err != nil {
		return w.tmpErr(err)
	}
	if w.enc.rgRows >= w.cfg.RowGroup {
		if err := w.writeRowGroup(); err != nil {
			return err
		}
	}
	if (w.cfg.MaxRecords > 0 && w.records >= w.cfg.MaxRecords) || (w.cfg.MaxBytes > 0 && w.f2 != nil && w.enc.off >= w.cfg.MaxBytes) {
		return w.seal()
	}
	return nil
}

// openWAL starts the next file: its write-ahead log, with its header.
func (w *Writer[T]) openWAL() error {
	path := filepath.Join(w.dir, w.f.walName(w.next))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", w.f.Log, err)
	}
	w.cur = w.next
	w.next++
	w.wal = f
	w.walBuf = w.f.appendHeader(w.walBuf[:0])
	return nil
}

// flushWAL writes the buffered frames to the write-ahead log.
func (w *Writer[T]) flushWAL() error {
	if w.wal == nil || len(w.walBuf) == 0 {
		return nil
	}
	if _, err := w.wal.Write(w.walBuf); err != nil {
		return fmt.Errorf("%s: write %s: %w", w.f.Log, w.wal.Name(), err)
	}
	w.walBuf = w.walBuf[:0]
	return nil
}

// writeRowGroup writes the buffered records as one row group, opening the
// current file's .tmp first when it is not open. The write-ahead log gets
// the records first, so it always holds every record of the .tmp.
func (w *Writer[T]) writeRowGroup() error {
	if w.enc.rgRows == 0 {
		return nil
	}
	if err := w.flushWAL(); err != nil {
		return err
	}
	if w.f2 == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	if err := w.enc.writeRowGroup(w.y); err != nil {
		return w.tmpErr(err)
	}
	if err := w.tb.Flush(); err != nil {
		return w.tmpErr(err)
	}
	return nil
}

// tmpErr names the file being written (or, before it is opened, the
// next one) in an encoding or write error.
func (w *Writer[T]) tmpErr(err error) error {
	name := filepath.Join(w.dir, w.f.FileName(w.cur)+TmpSuffix)
	if w.f2 != nil {
		name = w.f2.Name()
	}
	return fmt.Errorf("%s: write %s: %w", w.f.Log, name, err)
}

func (w *Writer[T]) open() error {
	path := filepath.Join(w.dir, w.f.FileName(w.cur)+TmpSuffix)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", w.f.Log, err)
	}
	// Buffered, and written a row group at a time: a system call per
	// column chunk would be some 25 per row group.
	tb := bufio.NewWriterSize(f, tmpBuf)
	if err := w.enc.start(tb); err != nil {
		f.Close()
		return fmt.Errorf("%s: write %s: %w", w.f.Log, path, err)
	}
	w.f2, w.tb = f, tb
	return nil
}

// seal writes the buffered records, the footer, fsyncs and renames the
// current file to its final name, fsyncs the directory, and removes the
// file's write-ahead log.
func (w *Writer[T]) seal() error {
	if w.records == 0 {
		return nil
	}
	if err := w.writeRowGroup(); err != nil {
		return err
	}
	tmp := w.f2.Name()
	if err := w.enc.finish(w.y); err != nil {
		return fmt.Errorf("%s: write %s: %w", w.f.Log, tmp, err)
	}
	if err := w.tb.Flush(); err != nil {
		return fmt.Errorf("%s: write %s: %w", w.f.Log, tmp, err)
	}
	if err := w.f2.Sync(); err != nil {
		return fmt.Errorf("%s: sync %s: %w", w.f.Log, tmp, err)
	}
	if err := w.f2.Close(); err != nil {
		return fmt.Errorf("%s: close %s: %w", w.f.Log, tmp, err)
	}
	final := tmp[:len(tmp)-len(TmpSuffix)]
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("%s: %w", w.f.Log, err)
	}
	if err := syncDir(w.f.Log, w.dir); err != nil {
		return err
	}
	w.f2, w.tb = nil, nil
	w.records = 0
	w.sealed = append(w.sealed, final)
	// The sealed file holds every record of the write-ahead log; a crash
	// before the removal leaves a log that the next Writer removes.
	wal := w.wal.Name()
	w.wal.Close()
	w.wal, w.walBuf = nil, w.walBuf[:0]
	if err := os.Remove(wal); err != nil {
		return fmt.Errorf("%s: %w", w.f.Log, err)
	}
	return nil
}

func syncDir(log, dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", log, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("%s: sync %s: %w", log, dir, err)
	}
	return nil
}

// yielder lets the background goroutine give the processor to the
// goroutines that are ready, those the network poller would wake
// included, as a Place call is. runtime.Gosched would not do: the
// scheduler polls the network only when no goroutine is runnable (or
// every 10 ms, from sysmon), and a goroutine that calls Gosched stays
// runnable; nor would a short time.Sleep: the scheduler runs the timers
// that are due before it polls the network, and when it finds nothing to
// run it sleeps in the poller for at least 1 ms. yield parks the
// goroutine reading an empty pipe and has a helper goroutine write a byte
// to it: the goroutine is runnable again when the scheduler next polls
// the network, which it does once the helper and everything else ready
// have run, and which wakes the other goroutines waiting on the network
// too.
type yielder struct {
	r    *os.File
	kick chan struct{}
	last time.Time // when the goroutine last started or resumed work
	buf  [1]byte   // what it reads
}

func newYielder() (*yielder, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	y := &yielder{r: r, kick: make(chan struct{})}
	go func() {
		var b [1]byte
		for range y.kick {
			if w != nil {
				if _, err := w.Write(b[:]); err != nil {
					// None is expected; closed, the pipe reads EOF at
					// once, and a yield does nothing.
					w.Close()
					w = nil
				}
			}
		}
		if w != nil {
			w.Close()
		}
	}()
	return y, nil
}

// start notes that the goroutine starts working (after waiting for the
// queue).
func (y *yielder) start() {
	if y != nil {
		y.last = time.Now()
	}
}

// maybe yields once the goroutine has worked yieldAfter since it started
// or last yielded; a nil yielder (a Writer without a queue, working on
// its caller's goroutine) never yields.
func (y *yielder) maybe() {
	if y == nil || time.Since(y.last) < yieldAfter {
		return
	}
	y.kick <- struct{}{}
	y.r.Read(y.buf[:])
	y.last = time.Now()
}

// close ends the helper goroutine and closes the pipe.
func (y *yielder) close() {
	if y != nil {
		close(y.kick)
		y.r.Close()
	}
}
