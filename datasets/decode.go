package datasets

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/drover-sched/drover/internal/inputfile"
)

// Decode parses data in format f. It is pure: no I/O. Gzip-compressed data
// is decompressed first. FormatAuto picks the format from the Parquet magic
// or the CSV header (see Sniff). o.Source names the input in errors.
func Decode(f Format, data []byte, o Options) (*Workload, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	data, err := gunzip(data, o.Source)
	if err != nil {
		return nil, err
	}
	if f == FormatAuto || f == "" {
		if f, err = Sniff(data); err != nil {
			return nil, &ParseError{File: o.Source, Line: 1, Field: "header", Err: err}
		}
	}
	switch f {
	case FormatPollux:
		return decodePollux(data, o)
	case FormatPhilly:
		return decodePhilly(data, o)
	case FormatHelios:
		return decodeHelios(data, o)
	case FormatAlibaba:
		return decodeAlibaba(data, o)
	case FormatJobs:
		return decodeJobs(data, o)
	case FormatParquet:
		return ReadParquet(data, o)
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownFormat, f)
}

// maxDecompressed bounds a gzip input's decompressed size; a variable so
// that a test can lower it.
var maxDecompressed = inputfile.Trace

// readWith reads the file at path (a regular file of at most
// inputfile.Trace bytes) and decodes it with decode, naming the file in
// errors: a read error as "read WHAT: ..." (whose rest names the path),
// and decode errors through o.Source, which defaults to path.
func readWith[T any](path, what string, o Options, decode func([]byte, Options) (T, error)) (T, error) {
	data, err := inputfile.ReadFile(path, inputfile.Trace)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("read %s: %w", what, err)
	}
	if o.Source == "" {
		o.Source = path
	}
	return decode(data, o)
}

// gunzip returns data decompressed when it is gzip, and data otherwise.
// The decompressed data is bounded like a file (inputfile.Gunzip at
// maxDecompressed): a small gzip bomb fails instead of filling memory.
func gunzip(data []byte, src string) ([]byte, error) {
	raw, err := inputfile.Gunzip(data, maxDecompressed, src)
	if err != nil {
		return nil, &ParseError{File: src, Field: "gzip", Err: err}
	}
	return raw, nil
}

// Sniff guesses the format of (uncompressed) data: Parquet by its "PAR1"
// magic, CSV formats by the column names of the first non-comment line.
// It returns ErrUnknownFormat when nothing matches.
func Sniff(data []byte) (Format, error) {
	if bytes.HasPrefix(data, []byte("PAR1")) {
		return FormatParquet, nil
	}
	rest := data
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		s := strings.TrimSpace(strings.TrimPrefix(string(line), "\ufeff"))
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		rec, err := csv.NewReader(strings.NewReader(s)).Read()
		if err != nil {
			break
		}
		has := make(map[string]bool, len(rec))
		for _, c := range rec {
			has[strings.TrimSpace(c)] = true
		}
		all := func(cols ...string) bool {
			for _, c := range cols {
				if !has[c] {
					return false
				}
			}
			return true
		}
		switch {
		case all(jobsHeader...):
			return FormatJobs, nil
		case all("name", "time", "application", "num_replicas"):
			return FormatPollux, nil
		case all("timestamp", "duration", "num_gpus"):
			return FormatPhilly, nil
		case all("job_id", "submit_time", "num_chips", "duration_s"):
			return FormatHelios, nil
		case all("name", "num_gpu", "creation_time", "scheduled_time"):
			return FormatAlibaba, nil
		}
		break
	}
	return "", ErrUnknownFormat
}

// ReadFile reads the file at path and decodes it with Decode; *.gz files
// (or any gzip data) are decompressed. o.Source defaults to path, and the
// workload is named after the file's base name without extensions.
func ReadFile(path string, f Format, o Options) (*Workload, error) {
	w, err := readWith(path, "trace", o, func(data []byte, o Options) (*Workload, error) { return Decode(f, data, o) })
	if err != nil {
		return nil, err
	}
	w.Name = baseName(path)
	return w, nil
}

// baseName is path's base name without .gz and one more extension.
func baseName(path string) string {
	b := strings.TrimSuffix(filepath.Base(path), ".gz")
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// BuiltinSpec is the Load spec that selects the embedded default workload.
const BuiltinSpec = "builtin"

// Load returns the embedded default workload when spec is "builtin" and
// otherwise reads spec as a path with ReadFile. The built-in workload's
// architectures are its generator's draw, not a trace's record: an
// o.PS with a share of its own (not FormatDefaultShare) draws them anew,
// GenerateDefaultPS(DefaultSeed, share), with o.PS's WorkersPerServer.
func Load(spec string, f Format, o Options) (*Workload, error) {
	if spec == BuiltinSpec {
		if err := o.check(); err != nil {
			return nil, err
		}
		if r := o.PS; r != nil && r.Share >= 0 {
			w := GenerateDefaultPS(DefaultSeed, r.Share)
			if r.WorkersPerServer > 0 {
				for i, j := range w.Jobs {
					if j.Arch == ArchPS {
						w.Jobs[i].PSShards = PSShards(j.GPUs, r.WorkersPerServer)
					}
				}
			}
			return w, nil
		}
		return Builtin(), nil
	}
	return ReadFile(spec, f, o)
}
