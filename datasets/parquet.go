package datasets

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
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

// jobsSchema is the Arrow schema of the Parquet job table, version 2.
func jobsSchema(wl *Workload) *arrow.Schema {
	md := arrow.NewMetadata(
		[]string{ParquetVersionKey, ParquetWorkloadKey, ParquetFormatKey},
		[]string{strconv.Itoa(JobsVersion), wl.Name, string(wl.Format)},
	)
	return arrow.NewSchema([]arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "submit", Type: arrow.PrimitiveTypes.Float64},
		{Name: "gpus", Type: arrow.PrimitiveTypes.Int64},
		{Name: "duration", Type: arrow.PrimitiveTypes.Float64},
		{Name: "model", Type: arrow.BinaryTypes.String},
		{Name: "batch_size", Type: arrow.PrimitiveTypes.Int64},
		{Name: "cluster", Type: arrow.BinaryTypes.String},
		{Name: "status", Type: arrow.BinaryTypes.String},
		{Name: "cpu_milli", Type: arrow.PrimitiveTypes.Int64},
		{Name: "memory_mib", Type: arrow.PrimitiveTypes.Int64},
		{Name: "arch", Type: arrow.BinaryTypes.String},
		{Name: "ps_shards", Type: arrow.PrimitiveTypes.Int64},
	}, &md)
}

// WriteParquet writes wl's jobs to w as a Parquet file (one row group,
// zstd-compressed) with the columns of the CSV job table and the schema
// metadata "drover.jobs.version"="2". It does not close w.
func WriteParquet(w io.Writer, wl *Workload) error {
	sc := jobsSchema(wl)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, j := range wl.Jobs {
		b.Field(0).(*array.StringBuilder).Append(j.Name)
		b.Field(1).(*array.Float64Builder).Append(j.Submit)
		b.Field(2).(*array.Int64Builder).Append(int64(j.GPUs))
		b.Field(3).(*array.Float64Builder).Append(j.Duration)
		b.Field(4).(*array.StringBuilder).Append(j.Model)
		b.Field(5).(*array.Int64Builder).Append(int64(j.BatchSize))
		b.Field(6).(*array.StringBuilder).Append(j.Cluster)
		b.Field(7).(*array.StringBuilder).Append(j.Status)
		b.Field(8).(*array.Int64Builder).Append(j.CPUMilli)
		b.Field(9).(*array.Int64Builder).Append(j.MemoryMiB)
		b.Field(10).(*array.StringBuilder).Append(j.Arch.String())
		b.Field(11).(*array.Int64Builder).Append(int64(j.PSShards))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	// The Parquet writer closes a sink that is an io.Closer; w belongs to
	// the caller, so hide its Close.
	fw, err := pqarrow.NewFileWriter(sc, struct{ io.Writer }{w}, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return fmt.Errorf("datasets: write parquet: %w", err)
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return fmt.Errorf("datasets: write parquet: %w", err)
	}
	if err := fw.Close(); err != nil {
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
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return fail("file", err)
	}
	defer pf.Close()
	v := pf.MetaData().KeyValueMetadata().FindValue(ParquetVersionKey)
	if v == nil {
		return fail(ParquetVersionKey, fmt.Errorf("%w: key missing", ErrVersion))
	}
	if *v != "1" && *v != strconv.Itoa(JobsVersion) {
		return fail(ParquetVersionKey, fmt.Errorf("%w: %q", ErrVersion, *v))
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return fail("file", err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return fail("file", err)
	}
	defer tbl.Release()

	n := int(tbl.NumRows())
	cols := make(map[string]*arrow.Chunked)
	for i := 0; i < int(tbl.NumCols()); i++ {
		c := tbl.Column(i)
		if _, dup := cols[c.Name()]; !dup {
			cols[c.Name()] = c.Data()
		}
	}
	var names, models, clusters, statuses []string
	var submits, durations []float64
	var gpus, batch, cpu, mem []int64
	for _, c := range []struct {
		name string
		dst  any
	}{
		{"name", &names}, {"submit", &submits}, {"gpus", &gpus}, {"duration", &durations},
		{"model", &models}, {"batch_size", &batch}, {"cluster", &clusters}, {"status", &statuses},
		{"cpu_milli", &cpu}, {"memory_mib", &mem},
	} {
		ch, ok := cols[c.name]
		if !ok {
			return fail(c.name, ErrMissingColumn)
		}
		if err := flatten(ch, n, c.dst); err != nil {
			return fail(c.name, err)
		}
	}
	var archs []string
	var shards []int64
	for _, c := range []struct {
		name string
		dst  any
	}{{"arch", &archs}, {"ps_shards", &shards}} {
		if ch, ok := cols[c.name]; ok {
			if err := flatten(ch, n, c.dst); err != nil {
				return fail(c.name, err)
			}
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
	if nm := pf.MetaData().KeyValueMetadata().FindValue(ParquetWorkloadKey); nm != nil && *nm != "" {
		wl.Name = *nm
	}
	return wl, nil
}

// flatten copies a chunked column into *dst (a *[]string, *[]float64 or
// *[]int64). Nulls read as the zero value.
func flatten(ch *arrow.Chunked, n int, dst any) error {
	if ch.Len() != n {
		return fmt.Errorf("column has %d rows, want %d", ch.Len(), n)
	}
	switch d := dst.(type) {
	case *[]string:
		out := make([]string, 0, n)
		for _, c := range ch.Chunks() {
			switch a := c.(type) {
			case *array.String:
				for i := 0; i < a.Len(); i++ {
					out = append(out, a.Value(i))
				}
			case *array.LargeString:
				for i := 0; i < a.Len(); i++ {
					out = append(out, a.Value(i))
				}
			default:
				return fmt.Errorf("type %s, want string", c.DataType())
			}
		}
		*d = out
	case *[]float64:
		out := make([]float64, 0, n)
		for _, c := range ch.Chunks() {
			a, ok := c.(*array.Float64)
			if !ok {
				return fmt.Errorf("type %s, want double", c.DataType())
			}
			for i := 0; i < a.Len(); i++ {
				out = append(out, a.Value(i))
			}
		}
		*d = out
	case *[]int64:
		out := make([]int64, 0, n)
		for _, c := range ch.Chunks() {
			switch a := c.(type) {
			case *array.Int64:
				for i := 0; i < a.Len(); i++ {
					out = append(out, a.Value(i))
				}
			case *array.Int32:
				for i := 0; i < a.Len(); i++ {
					out = append(out, int64(a.Value(i)))
				}
			default:
				return fmt.Errorf("type %s, want int64", c.DataType())
			}
		}
		*d = out
	default:
		panic("datasets: flatten: bad destination type")
	}
	return nil
}
