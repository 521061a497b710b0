package llm

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Trace is a list of requests read from one source, sorted by arrival
// (stable with respect to the source's order), their IDs 0, 1, ... in that
// order, every one valid (Request.Validate).
type Trace struct {
	// Name names the trace: the source's base name for a file.
	Name string
	// Format is the format the trace was read from.
	Format Format
	// Origin is the absolute time of arrival 0 when the source gives
	// absolute times (the Azure traces: the earliest timestamp, naive
	// times read as UTC); the zero time otherwise.
	Origin time.Time
	// Requests are the requests, sorted by arrival.
	Requests []Request
	// Skips counts the rows left out (Options.SkipBad).
	Skips
}

// Skips counts the rows a reader or a generator left out, by reason.
type Skips struct {
	// Skipped is the number of rows left out.
	Skipped int
	// SkipReasons maps a Reason* constant to its number of rows; nil when
	// none was skipped.
	SkipReasons map[string]int
}

// skip counts one row left out for reason.
func (s *Skips) skip(reason string) {
	if s.SkipReasons == nil {
		s.SkipReasons = map[string]int{}
	}
	s.Skipped++
	s.SkipReasons[reason]++
}

// Reasons for a row left out, the keys of Skips.SkipReasons.
const (
	ReasonMalformed   = "malformed row" // wrong field count or a field that does not parse
	ReasonBadArrival  = "bad arrival"   // negative, NaN, infinite or beyond MaxArrival
	ReasonBadTokens   = "bad tokens"    // prompt or output tokens outside 1..MaxTokens
	ReasonBadImages   = "bad images"    // an image count outside 0..MaxImages
	ReasonShortPrompt = "short prompt"  // below Synth.MinPrompt (a generator's filter)
)

// MaxArrival bounds an arrival time, in seconds (1e8 s, about 3.2 years,
// the bound of the training simulator's traces, datasets.MaxSeconds): a
// trace whose timestamps span more than that is refused, as is a replay
// that would move a request past it.
const MaxArrival = 1e8

// Errors of the readers, wrapped in a *ParseError.
var (
	// ErrMissingColumn is a required column absent from the header.
	ErrMissingColumn = errors.New("llm: missing column")
	// ErrEmpty is a source with no request (left).
	ErrEmpty = errors.New("llm: no requests")
	// ErrUnknownFormat is data no reader recognises.
	ErrUnknownFormat = errors.New("llm: unknown format")
	// ErrVersion is a Parquet request table without the version this
	// build reads.
	ErrVersion = errors.New("llm: unsupported version")
)

// ParseError is a problem with the source at a place: the file, its
// 1-based line (the 1-based row of a Parquet file; 0 when not about a row)
// and column (1-based byte column of the field in a CSV line; 0 when not
// known), and the field (a column name, "header" or "file").
type ParseError struct {
	File  string // Options.Source
	Line  int    // 1-based line (row for Parquet), 0 if not about a row
	Col   int    // 1-based byte column in the line, 0 if not known
	Field string // column name, or "header", "row", "file", "gzip"
	Err   error  // what is wrong
}

// Error formats the error as "FILE:LINE:COL: field FIELD: ERR", leaving
// out a zero line or column.
func (e *ParseError) Error() string {
	where := e.File
	if where == "" {
		where = "<data>"
	}
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, e.Line)
		if e.Col > 0 {
			where = fmt.Sprintf("%s:%d", where, e.Col)
		}
	}
	return fmt.Sprintf("%s: field %s: %v", where, e.Field, e.Err)
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// Options control a reader.
type Options struct {
	// Source names the input in errors (a path); ReadFile sets it to the
	// path when empty.
	Source string
	// SkipBad skips bad rows, counting them in Skips by reason, instead
	// of failing on the first one. Structural problems (a missing
	// column, an unreadable header, no request left) still fail.
	SkipBad bool
}

// bad handles a bad row: with SkipBad it counts it and returns nil,
// otherwise it returns the *ParseError.
func (o *Options) bad(s *Skips, line, col int, field, reason string, err error) error {
	if o.SkipBad {
		s.skip(reason)
		return nil
	}
	return &ParseError{File: o.Source, Line: line, Col: col, Field: field, Err: err}
}

// checkTokens returns what is wrong with a token count, or nil.
func checkTokens(n int64) error {
	if n < 1 || n > MaxTokens {
		return fmt.Errorf("%w: %d tokens, want 1..%d", ErrBadRequest, n, MaxTokens)
	}
	return nil
}

// finish sorts reqs by arrival (stably), numbers them and checks each:
// the last step of every reader and generator.
func finish(reqs []Request) ([]Request, error) {
	byArrival := func(a, b Request) int { return cmp.Compare(a.Arrival, b.Arrival) }
	if !slices.IsSortedFunc(reqs, byArrival) { // a trace's rows usually are
		slices.SortStableFunc(reqs, byArrival)
	}
	for i := range reqs {
		reqs[i].ID = i
		if err := reqs[i].Validate(); err != nil {
			return nil, err
		}
	}
	return reqs, nil
}
