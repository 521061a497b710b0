package pqlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"sync"
)

// File name suffixes: DIR/PREFIX-000001.parquet once sealed, with
// TmpSuffix while being written, and PREFIX-000001.wal for its
// write-ahead log.
const (
	// FileSuffix ends a sealed log file's name.
	FileSuffix = ".parquet"
	// TmpSuffix is appended to the name of a file still being written.
	TmpSuffix = ".tmp"
	// WALSuffix ends the name of an unsealed file's write-ahead log.
	WALSuffix = ".wal"
)

// Format describes one log: names, schema, and the codecs between a
// record of type T, a Parquet row and a write-ahead-log frame. Every field
// is required unless its comment says otherwise.
type Format[T any] struct {
	// Log names the log's package, the prefix of every error message
	// ("declog").
	Log string
	// Prefix starts every file name of the log ("decisions-").
	Prefix string
	// Schema lists a file's columns, in order: the indices of Row's
	// methods and the types of Column's values. NewWriter and Encode
	// refuse a type they do not know, naming the field.
	Schema []Field
	// VersionKey and Version are the file's first key-value metadata
	// pair, which a reader requires.
	VersionKey, Version string
	// Metadata holds more key-value pairs for the file's metadata, after
	// the version's (optional; the logs have none).
	Metadata [][2]string
	// ErrVersion is wrapped by the error for a file without VersionKey or
	// with another version.
	ErrVersion error
	// ErrClosed is returned by a Writer's methods after Close.
	ErrClosed error
	// CreatedBy is the Parquet footer's created_by.
	CreatedBy string
	// Append sets r's values in the row, a call per column (see Row).
	Append func(b *Row, r *T)
	// Columns decode a file's columns into records, in this order.
	Columns []Column[T]
	// Finish, when set, completes a decoded record before Validate.
	Finish func(r *T)
	// Validate checks a record; a *FormatError names the bad field.
	Validate func(r *T) error
	// FrameVersion is the version of AppendFrame's encoding, stored in
	// every write-ahead log's header.
	FrameVersion byte
	// AppendFrame appends r's write-ahead-log encoding to b.
	AppendFrame func(b []byte, r *T) []byte
	// DecodeFrame decodes one record from d (d's error says whether it
	// could).
	DecodeFrame func(d *Dec) T

	once   sync.Once
	nameRE *regexp.Regexp
}

// Column decodes one column of a file.
type Column[T any] struct {
	// Name is the column's name.
	Name string
	// Optional columns may be missing from a file (columns added after
	// the format's first release): the records keep their zero values.
	Optional bool
	// Set stores a row's value of the column, of the type Schema gives
	// it, into r, or says what is wrong with it.
	Set func(r *T, v Value) error
}

// FileName returns the name of the sealed log file with index i.
func (f *Format[T]) FileName(i int) string { return fmt.Sprintf("%s%06d%s", f.Prefix, i, FileSuffix) }

// walName returns the name of the write-ahead log of file i.
func (f *Format[T]) walName(i int) string { return fmt.Sprintf("%s%06d%s", f.Prefix, i, WALSuffix) }

// Kinds of log file names.
const (
	kindSealed = iota
	kindTmp
	kindWAL
)

// parseName returns the index of a log file name and its kind (sealed,
// .tmp or .wal); ok is false for other names.
func (f *Format[T]) parseName(name string) (index, kind int, ok bool) {
	f.once.Do(func() {
		f.nameRE = regexp.MustCompile(`^` + regexp.QuoteMeta(f.Prefix) + `([0-9]{6,})(` + regexp.QuoteMeta(FileSuffix) + `|` +
			regexp.QuoteMeta(FileSuffix+TmpSuffix) + `|` + regexp.QuoteMeta(WALSuffix) + `)$`)
	})
	m := f.nameRE.FindStringSubmatch(name)
	if m == nil {
		return 0, 0, false
	}
	i, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, 0, false
	}
	switch m[2] {
	case FileSuffix:
		return i, kindSealed, true
	case FileSuffix + TmpSuffix:
		return i, kindTmp, true
	}
	return i, kindWAL, true
}

// validate checks every record and returns the first error, its
// *FormatError's Row set to the record's 1-based index.
func (f *Format[T]) validate(recs []T) error {
	for i := range recs {
		if err := f.Validate(&recs[i]); err != nil {
			var fe *FormatError
			if errors.As(err, &fe) {
				fe.Row = i + 1
			}
			return err
		}
	}
	return nil
}

// Encode returns recs as one complete log file (one row group). It checks
// every record first; the error names the bad record's row and field.
func Encode[T any](f *Format[T], recs []T) ([]byte, error) {
	if err := f.validate(recs); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := f.encode(&buf, recs, len(recs)); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Log, err)
	}
	return buf.Bytes(), nil
}

// encode writes recs to w as one Parquet file, rowGroup records per row
// group (no row group when recs is empty).
func (f *Format[T]) encode(w io.Writer, recs []T, rowGroup int) error {
	e, err := newEncoder(f)
	if err != nil {
		return err
	}
	if err := e.start(w); err != nil {
		return err
	}
	for i := range recs {
		f.Append(&e.Row, &recs[i])
		if err := e.endRow(); err != nil {
			return err
		}
		if err := e.closeFull(nil); err != nil {
			return err
		}
		if e.rgRows >= rowGroup {
			if err := e.writeRowGroup(nil); err != nil {
				return err
			}
		}
	}
	return e.finish(nil)
}

// FormatError is a problem with a record or a log file: the file (empty
// for in-memory data), the 1-based row (0 when the whole file is bad) and
// the column.
type FormatError struct {
	// Log names the log's package ("declog", "telemlog"), the message's
	// prefix.
	Log string
	// File is the log file's path.
	File string
	// Row is the 1-based row within the file, or 0.
	Row int
	// Field is the column name.
	Field string
	// Err is what is wrong.
	Err error
}

// Error implements error: "LOG: FILE:ROW: FIELD: problem".
func (e *FormatError) Error() string {
	where := e.File
	if where == "" {
		where = "<data>"
	}
	if e.Row > 0 {
		where = fmt.Sprintf("%s:%d", where, e.Row)
	}
	log := e.Log
	if log == "" {
		log = "pqlog"
	}
	return fmt.Sprintf("%s: %s: %s: %v", log, where, e.Field, e.Err)
}

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }
