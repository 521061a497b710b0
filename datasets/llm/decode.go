package llm

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/drover-sched/drover/internal/inputfile"
)

// Format names a request-trace format.
type Format string

// The formats. FormatAuto picks one from the data (Sniff).
const (
	FormatAuto Format = ""
	// FormatAzure is an Azure LLM inference trace (DecodeAzure).
	FormatAzure Format = "azure"
	// FormatRequests is Drover's request table in CSV (Decode; written by
	// Encode; docs/format/requests.md).
	FormatRequests Format = "requests"
	// FormatParquet is Drover's request table in Parquet (ReadParquet;
	// written by WriteParquet).
	FormatParquet Format = "parquet"
	// FormatSplitwise is SplitwiseSim's request trace (DecodeSplitwise).
	FormatSplitwise Format = "splitwise"
	// FormatVidur is a table of request lengths without arrival times,
	// Vidur's processed traces (DecodeVidur); Synth gives them arrivals.
	FormatVidur Format = "vidur"
)

// Sniff guesses the format of (uncompressed) data: Parquet by its "PAR1"
// magic, the CSV formats by the column names of the header. It returns
// ErrUnknownFormat when nothing matches.
func Sniff(data []byte) (Format, error) {
	if bytes.HasPrefix(data, []byte("PAR1")) {
		return FormatParquet, nil
	}
	line, _, _ := bytes.Cut(inputfile.TrimBOM(data), []byte{'\n'})
	rec, err := csv.NewReader(bytes.NewReader(line)).Read()
	if err != nil {
		return "", ErrUnknownFormat
	}
	has := make(map[string]bool, len(rec))
	for _, c := range rec {
		has[strings.TrimSpace(c)] = true
	}
	switch {
	case has[ColArrival] && has[ColPrompt] && has[ColOutput]:
		return FormatRequests, nil
	case has[AzureTimestamp] && has[AzurePrompt] && has[AzureOutput]:
		return FormatAzure, nil
	case has[SplitwiseArrival] && has[SplitwisePrompt] && has[SplitwiseOutput]:
		return FormatSplitwise, nil
	case has[VidurPrompt] && has[VidurOutput]:
		return FormatVidur, nil
	}
	return "", ErrUnknownFormat
}

// Decode reads a trace with arrival times in format f (FormatAuto: by
// Sniff); gzip data is decompressed first. It is pure: no I/O. A table of
// lengths only (FormatVidur) is an error here: read it with DecodeVidur
// and give it arrivals with Synth.
func Decode(f Format, data []byte, o Options) (*Trace, error) {
	data, err := gunzip(data, o.Source)
	if err != nil {
		return nil, err
	}
	if f == FormatAuto {
		if f, err = Sniff(data); err != nil {
			return nil, &ParseError{File: o.Source, Line: 1, Field: "header", Err: err}
		}
	}
	switch f {
	case FormatAzure:
		return DecodeAzure(data, o)
	case FormatRequests:
		return DecodeRequests(data, o)
	case FormatParquet:
		return ReadParquet(data, o)
	case FormatSplitwise:
		return DecodeSplitwise(data, o)
	case FormatVidur:
		return nil, &ParseError{File: o.Source, Line: 1, Field: "header",
			Err: fmt.Errorf("%w: %s is a table of lengths without arrival times: read it with DecodeVidur and give it arrivals with Synth", ErrUnknownFormat, f)}
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownFormat, f)
}

// ReadFile reads the trace at path (a regular file of at most
// inputfile.Trace bytes, gzip or not) with Decode. o.Source defaults to
// path, and the trace is named after the file's base name without its
// extensions.
func ReadFile(path string, f Format, o Options) (*Trace, error) {
	data, err := read(path, &o)
	if err != nil {
		return nil, err
	}
	tr, err := Decode(f, data, o)
	if err != nil {
		return nil, err
	}
	tr.Name = baseName(path)
	return tr, nil
}

// ReadLengths reads the table of lengths at path (FormatVidur) with
// DecodeVidur, as ReadFile reads a trace.
func ReadLengths(path string, o Options) (*Lengths, error) {
	data, err := read(path, &o)
	if err != nil {
		return nil, err
	}
	ls, err := DecodeVidur(data, o)
	if err != nil {
		return nil, err
	}
	ls.Name = baseName(path)
	return ls, nil
}

// read reads the file at path through inputfile, and sets o.Source to
// path when empty.
func read(path string, o *Options) ([]byte, error) {
	data, err := inputfile.ReadFile(path, inputfile.Trace)
	if err != nil {
		return nil, fmt.Errorf("read request trace: %w", err)
	}
	if o.Source == "" {
		o.Source = path
	}
	return data, nil
}

// baseName is path's base name without .gz and one more extension.
func baseName(path string) string {
	b := strings.TrimSuffix(filepath.Base(path), ".gz")
	return strings.TrimSuffix(b, filepath.Ext(b))
}
