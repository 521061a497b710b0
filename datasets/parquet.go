package datasets

import (
	"fmt"
	"io"
	"strconv"

	"github.com/drover-sched/drover/internal/pqlog"
)

// Parquet metadata keys of Drover's job table (docs/format/jobs.md).
const (
	ParquetVersionKey  = "drover.jobs.version"  // format version, "2" (readers also take "1")
	ParquetWorkloadKey = "drover.workload.name" // Workload.Name
	ParquetFormatKey   = "drover.workload.format"
	// JobsVersion is the version of the job table that Encode and
	// WriteParquet write; readers also read version 1, which has no arch
	// and ps_shards columns.
	JobsVersion = 2
)

// jobsSchema lists the columns of the Parquet job table, version 2.
var jobsSchema = []pqlog.Field{
	{Name: "name", Type: pqlog.String},
	{Name: "submit", Type: pqlog.Float64},
	{Name: "gpus", Type: pqlog.Int64},
	{Name: "duration", Type: pqlog.Float64},
	{Name: "model", Type: pqlog.String},
	{Name: "batch_size", Type: pqlog.Int64},
	{Name: "cluster", Type: pqlog.String},
	{Name: "status", Type: pqlog.String},
	{Name: "cpu_milli", Type: pqlog.Int64},
	{Name: "memory_mib", Type: pqlog.Int64},
	{Name: "arch", Type: pqlog.String},
	{Name: "ps_shards", Type: pqlog.Int64},
}

// jobsFormat is the job table of wl for internal/pqlog's Parquet encoder:
// the schema, a job's row, and the metadata naming the version, wl and
// its format.
func jobsFormat(wl *Workload) *pqlog.Format[Job] {
	return &pqlog.Format[Job]{
		Log:        "datasets",
		Schema:     jobsSchema,
		VersionKey: ParquetVersionKey,
		Version:    strconv.Itoa(JobsVersion),
		Metadata:   [][2]string{{ParquetWorkloadKey, wl.Name}, {ParquetFormatKey, string(wl.Format)}},
		CreatedBy:  "drover datasets jobs v" + strconv.Itoa(JobsVersion),
		Append: func(b *pqlog.Row, j *Job) {
			b.String(0, j.Name)
			b.Float64(1, j.Submit)
			b.Int64(2, int64(j.GPUs))
			b.Float64(3, j.Duration)
			b.String(4, j.Model)
			b.Int64(5, int64(j.BatchSize))
			b.String(6, j.Cluster)
			b.String(7, j.Status)
			b.Int64(8, j.CPUMilli)
			b.Int64(9, j.MemoryMiB)
			b.String(10, j.Arch.String())
			b.Int64(11, int64(j.PSShards))
		},
		Validate: func(*Job) error { return nil },
	}
}

// WriteParquet writes wl's jobs to w as a Parquet file (one row group,
// zstd-compressed, by internal/pqlog's encoder) with the columns of the
// CSV job table and the metadata "drover.jobs.version"="2". It does not
// close w.
func WriteParquet(w io.Writer, wl *Workload) error {
	data, err := pqlog.Encode(jobsFormat(wl), wl.Jobs)
	if err == nil {
		_, err = w.Write(data)
	}
	if err != nil {
		return fmt.Errorf("datasets: write parquet: %w", err)
	}
	return nil
}

// ReadParquet decodes a Parquet job table written by WriteParquet (or any
// file with the same column names and types; integer columns may be int32
// or int64). The file must carry "drover.jobs.version" "1" or "2"; the
// arch and ps_shards columns are optional (version 1 has none), and a row
// with an empty arch has its architecture decided by o.PS, like every row
// of a file without them. Rows are validated like every other format, with
// the 1-based row number as the line. Malformed files return an error; a
// panic inside the Parquet library on corrupt input is recovered and
// returned as an error.
func ReadParquet(data []byte, o Options) (wl *Workload, err error) {
	defer func() {
		if p := recover(); p != nil {
			wl, err = nil, &ParseError{File: o.Source, Field: "file", Err: fmt.Errorf("corrupt parquet: %v", p)}
		}
	}()
	fail := func(field string, err error) (*Workload, error) {
		return nil, &ParseError{File: o.Source, Field: field, Err: err}
	}
	pf, err := pqlog.OpenFile(data)
	if err != nil {
		return fail("file", err)
	}
	v, ok := pf.Lookup(ParquetVersionKey)
	if !ok {
		return fail(ParquetVersionKey, fmt.Errorf("%w: key missing", ErrVersion))
	}
	if v != "1" && v != strconv.Itoa(JobsVersion) {
		return fail(ParquetVersionKey, fmt.Errorf("%w: %q", ErrVersion, v))
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	n := int(pf.NumRows())
	var names, models, clusters, statuses, archs []string
	var submits, durations []float64
	var gpus, batch, cpu, mem, shards []int64
	for _, c := range []struct {
		name     string
		dst      any
		optional bool
	}{
		{"name", &names, false}, {"submit", &submits, false}, {"gpus", &gpus, false}, {"duration", &durations, false},
		{"model", &models, false}, {"batch_size", &batch, false}, {"cluster", &clusters, false}, {"status", &statuses, false},
		{"cpu_milli", &cpu, false}, {"memory_mib", &mem, false}, {"arch", &archs, true}, {"ps_shards", &shards, true},
	} {
		if !pf.Has(c.name) {
			if c.optional {
				continue
			}
			return fail(c.name, ErrMissingColumn)
		}
		if err := readColumn(pf, c.name, int64(n), len(data), c.dst); err != nil {
			return fail(c.name, err)
		}
	}
	src := o.Source
	b := newBuilder(FormatParquet, o)
	for i := 0; i < n; i++ {
		j := Job{
			Name: names[i], Submit: submits[i], GPUs: int(gpus[i]), Duration: durations[i],
			Model: models[i], BatchSize: int(batch[i]), Cluster: clusters[i], Status: statuses[i],
			CPUMilli: cpu[i], MemoryMiB: mem[i],
		}
		if int64(j.GPUs) != gpus[i] || int64(j.BatchSize) != batch[i] {
			if err := b.bad(i+1, "gpus", ReasonMalformed, fmt.Errorf("value out of range")); err != nil {
				return nil, err
			}
			continue
		}
		if j.Model == "" {
			if err := b.bad(i+1, "model", ReasonUnknownModel, fmt.Errorf("%w: empty", ErrUnknownModel)); err != nil {
				return nil, err
			}
			continue
		}
		known := archs != nil && archs[i] != ""
		if known {
			a, err := ParseArch(archs[i])
			if err != nil {
				if err := b.bad(i+1, "arch", ReasonMalformed, err); err != nil {
					return nil, err
				}
				continue
			}
			j.Arch = a
			if shards != nil {
				j.PSShards = int(shards[i])
				if int64(j.PSShards) != shards[i] {
					if err := b.bad(i+1, "ps_shards", ReasonMalformed, fmt.Errorf("value out of range")); err != nil {
						return nil, err
					}
					continue
				}
			}
		}
		if err := b.addArch(i+1, j, known); err != nil {
			return nil, err
		}
	}
	wl, err = b.finish(false)
	if err != nil {
		return nil, err
	}
	wl.Name = src
	if nm, ok := pf.Lookup(ParquetWorkloadKey); ok && nm != "" {
		wl.Name = nm
	}
	return wl, nil
}

// readColumn reads column name, of n rows, into *dst (a *[]string,
// *[]float64 or *[]int64) from a file of size bytes. Nulls read as the
// zero value.
func readColumn(pf *pqlog.File, name string, n int64, size int, dst any) error {
	// The rows the footer claims, within what the file's bytes can hold
	// (at a 64:1 compression: past that, append grows the slice).
	c := int(min(n, int64(64*size+1024)))
	var t pqlog.Type
	var set func(v *pqlog.Value)
	switch d := dst.(type) {
	case *[]string:
		*d = make([]string, 0, c)
		t, set = pqlog.String, func(v *pqlog.Value) { *d = append(*d, v.Str) }
	case *[]float64:
		*d = make([]float64, 0, c)
		t, set = pqlog.Float64, func(v *pqlog.Value) { *d = append(*d, v.Float) }
	case *[]int64:
		*d = make([]int64, 0, c)
		t, set = pqlog.Int64, func(v *pqlog.Value) { *d = append(*d, v.Int) }
	default:
		panic("datasets: readColumn: bad destination type")
	}
	var rows int64
	err := pf.ReadColumn(name, t, func(v *pqlog.Value) error {
		if rows++; rows > n {
			return fmt.Errorf("column has more than %d rows", n)
		}
		if v == nil {
			v = &pqlog.Value{}
		}
		set(v)
		return nil
	})
	if err != nil {
		return err
	}
	if rows != n {
		return fmt.Errorf("column has %d rows, want %d", rows, n)
	}
	return nil
}
