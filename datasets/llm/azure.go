package llm

import (
	"fmt"
	"io"
	"time"
)

// Columns of the Azure LLM inference traces (Azure/AzurePublicDataset:
// AzureLLMInferenceTrace_{code,conv}.csv of 2023, the 2024 week-long
// traces and the 2025 multimodal trace, AzureLMMInferenceTrace_multimodal,
// which adds NumImages).
const (
	AzureTimestamp = "TIMESTAMP"
	AzurePrompt    = "ContextTokens"
	AzureOutput    = "GeneratedTokens"
	// AzureImages is the 2025 multimodal trace's image count (0 for a
	// text-only request); optional.
	AzureImages = "NumImages"
)

// DecodeAzure reads an Azure LLM inference trace: a CSV with the columns
// TIMESTAMP, ContextTokens and GeneratedTokens, and NumImages when present
// (the 2025 multimodal trace's schema; others are ignored). Each row is a
// request whose prompt is ContextTokens, output GeneratedTokens and images
// NumImages (0..MaxImages; 0 without the column), arriving at its
// TIMESTAMP minus the earliest one, in
// seconds: the difference is taken in whole nanoseconds (exact for the
// 2023 traces' 100 ns ticks) and converted to the nearest float64. See
// ParseTimestamp for the forms read; times without a zone are read as
// UTC, and Trace.Origin is the earliest. Requests are sorted by arrival,
// stably (the 2023 files are sorted already). Gzip data is decompressed.
//
// A row that does not parse, whose tokens are outside 1..MaxTokens, or
// whose time is more than MaxArrival after the earliest is a *ParseError
// naming o.Source, the line, the column and the field, or is skipped and
// counted with o.SkipBad. A trace with no request is ErrEmpty.
func DecodeAzure(data []byte, o Options) (*Trace, error) {
	data, err := gunzip(data, o.Source)
	if err != nil {
		return nil, err
	}
	t, err := openTable(data, o.Source, AzureTimestamp, AzurePrompt, AzureOutput)
	if err != nil {
		return nil, err
	}
	tr := &Trace{Format: FormatAzure}
	_, hasImages := t.cols[AzureImages]
	cTime, cPrompt, cOutput, cImages := t.column(AzureTimestamp), t.column(AzurePrompt), t.column(AzureOutput), t.column(AzureImages)
	reqs := make([]Request, 0, min(t.rows, 1<<20))
	times := make([]time.Time, 0, cap(reqs))
	lines := make([]int, 0, cap(reqs))
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if err := o.bad(&tr.Skips, line, 0, "row", ReasonMalformed, err); err != nil {
				return nil, err
			}
			continue
		}
		s, l, c := t.field(rec, cTime)
		ts, err := ParseTimestamp(s)
		if err != nil {
			if err := o.bad(&tr.Skips, l, c, AzureTimestamp, ReasonMalformed, err); err != nil {
				return nil, err
			}
			continue
		}
		var r Request
		if r.Prompt, err = tokens(t, rec, cPrompt, &o, &tr.Skips); err != nil || r.Prompt == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		if r.Output, err = tokens(t, rec, cOutput, &o, &tr.Skips); err != nil || r.Output == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		if hasImages {
			if r.Images, err = images(t, rec, cImages, &o, &tr.Skips); err != nil || r.Images < 0 {
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		reqs, times, lines = append(reqs, r), append(times, ts), append(lines, line)
	}
	if len(reqs) == 0 {
		return nil, &ParseError{File: o.Source, Field: "file", Err: ErrEmpty}
	}
	origin := times[0]
	for _, ts := range times {
		if ts.Before(origin) {
			origin = ts
		}
	}
	kept := reqs[:0]
	for i, r := range reqs {
		d := times[i].Sub(origin) // saturates past 292 years: still beyond MaxArrival
		if d > time.Duration(MaxArrival)*time.Second {
			err := fmt.Errorf("%v after the earliest timestamp (%v), more than MaxArrival (%g s)", d, origin.Format(time.RFC3339Nano), float64(MaxArrival))
			if err := o.bad(&tr.Skips, lines[i], 0, AzureTimestamp, ReasonBadArrival, err); err != nil {
				return nil, err
			}
			continue
		}
		r.Arrival = float64(d.Nanoseconds()) / 1e9
		kept = append(kept, r)
	}
	if tr.Requests, err = finish(kept); err != nil {
		return nil, err
	}
	tr.Origin = origin
	return tr, nil
}

// tokens reads the token count in column name of rec. A count that does
// not parse or is outside 1..MaxTokens is an error, or, with SkipBad,
// counted in s and returned as 0.
func tokens(t *table, rec []string, col column, o *Options, s *Skips) (int, error) {
	f, l, c := t.field(rec, col)
	v, err := parseInt(f)
	reason := ReasonMalformed
	if err == nil {
		if err = checkTokens(v); err == nil {
			return int(v), nil
		}
		reason = ReasonBadTokens
	}
	return 0, o.bad(s, l, c, col.name, reason, err)
}

// ParseTimestamp parses a trace timestamp: "YYYY-MM-DD HH:MM:SS" with an
// optional fraction of 1 to 9 digits (the Azure 2023 traces write 7:
// "2023-11-16 18:17:03.9799600"), the space or a 'T' between date and
// time, and an optional trailing 'Z' (the Azure 2025 trace's
// "2024-10-15T12:00:05.819Z"). There is no other zone: every time is UTC.
// Fields out of range (month 13, February 30, hour 24, second 60) are
// errors, not normalised. The parse is exact to the nanosecond.
func ParseTimestamp(s string) (time.Time, error) {
	bad := func(why string) (time.Time, error) {
		return time.Time{}, fmt.Errorf("parse %q as a timestamp (YYYY-MM-DD HH:MM:SS[.fffffffff][Z]): %s", s, why)
	}
	b := s
	if len(b) > 0 && b[len(b)-1] == 'Z' {
		b = b[:len(b)-1]
	}
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != ' ' && b[10] != 'T') || b[13] != ':' || b[16] != ':' {
		return bad("layout")
	}
	num := func(p string) int {
		n := 0
		for i := range len(p) {
			c := p[i]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d, h, mi, sec := num(b[0:4]), num(b[5:7]), num(b[8:10]), num(b[11:13]), num(b[14:16]), num(b[17:19])
	if y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || sec < 0 {
		return bad("not a digit")
	}
	ns := 0
	if frac := b[19:]; len(frac) > 0 {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return bad("fraction")
		}
		if ns = num(frac[1:]); ns < 0 {
			return bad("fraction")
		}
		for range 10 - len(frac) {
			ns *= 10
		}
	}
	if mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59 {
		return bad("field out of range")
	}
	ts := time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC)
	if ts.Day() != d {
		return bad("no such day")
	}
	return ts, nil
}
