package datasets

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// This file reads the Alibaba PAI v2020 per-worker mini-batch-time data
// (cluster-trace-gpu-v2020/mini-batch-time): the per-iteration coefficient
// of variation table and the per-worker time series of single jobs.

// Sentinel errors of the mini-batch decoders, wrapped by ParseError.Err.
var (
	// ErrBlank reports an empty cell inside a job's CoV series (trailing
	// empty cells are allowed) or a job row with no values at all.
	ErrBlank = errors.New("datasets: blank value")
	// ErrIncomplete reports an iteration that lacks some worker's time.
	ErrIncomplete = errors.New("datasets: iteration lacks a worker")
	// ErrDuplicateRow reports a second time for one (iteration, worker).
	ErrDuplicateRow = errors.New("datasets: duplicate iteration and worker")
)

// Bounds on the mini-batch data's values beyond which a value is absurd
// rather than rare: a *ParseError wrapping ErrOutOfRange.
const (
	// MaxCoV bounds a per-iteration CoV. The CoV of n non-negative times
	// is at most sqrt(n-1) (one worker takes all the time), so 100 would
	// take over 10,000 workers; the PAI data's largest is 3.15.
	MaxCoV = 100
	// MaxBatchTimeNorm bounds batch_time_norm: PAI normalised the times
	// to 0-1000.
	MaxBatchTimeNorm = 1000
	// MaxGPUShare bounds the gpu column, a worker's share of one GPU in
	// percent: 800 is eight whole GPUs (the PAI data has 20-50).
	MaxGPUShare = 800
)

// CoVSeries is one job's row of the CoV table: the coefficient of variation
// of its workers' mini-batch times, one value per iteration.
type CoVSeries struct {
	Name string    // the row label, e.g. "job_00"
	CoV  []float64 // per iteration, finite and >= 0; trailing blank cells dropped
}

// CoVTable is a decoded coefficient_variation.csv: one series per job, in
// file order.
type CoVTable struct {
	Jobs []CoVSeries
	// Skipped counts the job rows left out under Options.SkipBad.
	Skipped int
}

// Values returns the per-job CoV series (shared with t, not copied).
func (t CoVTable) Values() [][]float64 {
	v := make([][]float64, len(t.Jobs))
	for i, j := range t.Jobs {
		v[i] = j.CoV
	}
	return v
}

// Len returns the number of values in all series together.
func (t CoVTable) Len() int {
	n := 0
	for _, j := range t.Jobs {
		n += len(j.CoV)
	}
	return n
}

// DecodeCoV parses the PAI v2020 coefficient_variation.csv (optionally
// gzipped): a header row (an empty cell, then the iteration indices 0, 1,
// ...), then one row per job: its name and one CoV per iteration, with empty
// cells after the job's last iteration. It is pure: no I/O.
//
// An empty cell before a job's last value, a job without values, a negative
// or non-finite value, one above MaxCoV (ErrOutOfRange) or a malformed row
// is a *ParseError naming the line and the column (the header's name for
// it) unless o.SkipBad, which drops
// the job's row and counts it in CoVTable.Skipped. A table without jobs is
// ErrEmpty.
func DecodeCoV(data []byte, o Options) (CoVTable, error) {
	data, err := gunzip(data, o.Source)
	if err != nil {
		return CoVTable{}, err
	}
	t, err := openTable(data, o.Source, false)
	if err != nil {
		return CoVTable{}, err
	}
	var out CoVTable
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			break
		}
		field := "row"
		if err == nil {
			var s CoVSeries
			s, field, err = covRow(rec, t.header)
			if err == nil {
				out.Jobs = append(out.Jobs, s)
				continue
			}
		}
		if !o.SkipBad {
			return CoVTable{}, &ParseError{File: o.Source, Line: line, Field: field, Err: err}
		}
		out.Skipped++
	}
	if len(out.Jobs) == 0 {
		return CoVTable{}, &ParseError{File: o.Source, Field: "row", Err: ErrEmpty}
	}
	return out, nil
}

// covRow parses one job row; on failure it returns the offending column.
func covRow(rec, header []string) (CoVSeries, string, error) {
	col := func(i int) string {
		if header[i] == "" {
			return fmt.Sprintf("column %d", i+1)
		}
		return header[i]
	}
	n := len(rec)
	for n > 1 && strings.TrimSpace(rec[n-1]) == "" {
		n--
	}
	if n <= 1 {
		return CoVSeries{}, "row", ErrBlank
	}
	s := CoVSeries{Name: strings.TrimSpace(rec[0]), CoV: make([]float64, 0, n-1)}
	for i := 1; i < n; i++ {
		f := strings.TrimSpace(rec[i])
		if f == "" {
			return CoVSeries{}, col(i), ErrBlank
		}
		v, err := strconv.ParseFloat(f, 64)
		switch {
		case err != nil:
			return CoVSeries{}, col(i), fmt.Errorf("parse %q as number", f)
		case math.IsNaN(v) || math.IsInf(v, 0):
			return CoVSeries{}, col(i), ErrNotFinite
		case v < 0:
			return CoVSeries{}, col(i), ErrNegative
		case v > MaxCoV:
			return CoVSeries{}, col(i), fmt.Errorf("%w: CoV %g, want at most %d", ErrOutOfRange, v, MaxCoV)
		}
		s.CoV = append(s.CoV, v)
	}
	return s, "", nil
}

// ReadCoV reads and decodes the CoV table at path (gzipped or not) with
// DecodeCoV; o.Source defaults to path.
func ReadCoV(path string, o Options) (CoVTable, error) {
	return readWith(path, "trace", o, DecodeCoV)
}

// MiniBatch is one job's per-worker mini-batch times, decoded from a PAI
// v2020 job_N_norm.csv: a matrix of iterations by workers.
type MiniBatch struct {
	// Workers holds the worker ids in ascending order; column w of Times
	// belongs to Workers[w].
	Workers []int
	// GPU is each worker's requested GPU share in percent of one GPU (the
	// `gpu` column; 25 = a quarter), parallel to Workers; 0 if absent.
	GPU []float64
	// Iterations holds the `time` value (iteration number) of each row of
	// Times, ascending.
	Iterations []int
	// Times[i][w] is worker Workers[w]'s normalised (0-1000) mini-batch time
	// in iteration Iterations[i].
	Times [][]float64
	// Skipped counts the rows left out under Options.SkipBad: bad rows,
	// and the rows of iterations that lack some worker.
	Skipped int
	// Incomplete counts the iterations dropped under Options.SkipBad
	// because they lack some worker.
	Incomplete int
	// Repeated counts the rows dropped under Options.SkipBad as exact
	// repeats of an earlier row (same iteration, worker and time; PAI's
	// job_2 has one), a part of Skipped.
	Repeated int
	// Bad counts the other rows dropped under Options.SkipBad, for their
	// values (malformed, negative, not finite, out of range, a second
	// time for one iteration and worker), a part of Skipped; FirstBad is
	// the first of them, with its line and field. A caller that skips
	// only for incomplete iterations (the PAI jobs' last iterations lack
	// workers) and repeats refuses the data when FirstBad is set.
	Bad      int
	FirstBad *ParseError
}

func hasKey(m map[[2]int]float64, k [2]int) bool {
	_, ok := m[k]
	return ok
}

// DecodeMiniBatch parses a PAI v2020 job_N_norm.csv (optionally gzipped),
// with columns `,worker,gpu,time,batch_time_norm` (gpu optional): one row
// per worker and iteration. It is pure: no I/O.
//
// A malformed row, a negative worker id, a non-integral iteration, a
// negative or non-finite time or gpu share, a time above MaxBatchTimeNorm
// or a share above MaxGPUShare (ErrOutOfRange), a repeated (iteration,
// worker) and an
// iteration that lacks one of the job's workers (ErrIncomplete) are
// *ParseErrors unless o.SkipBad, which drops the row (or the iteration) and
// counts it. No complete iteration left is ErrEmpty.
func DecodeMiniBatch(data []byte, o Options) (MiniBatch, error) {
	data, err := gunzip(data, o.Source)
	if err != nil {
		return MiniBatch{}, err
	}
	t, err := openTable(data, o.Source, false, "worker", "time", "batch_time_norm")
	if err != nil {
		return MiniBatch{}, err
	}
	type cell struct {
		worker int
		time   float64
		line   int
	}
	var (
		mb      MiniBatch
		iters   = map[int][]cell{}
		gpu     = map[int]float64{}
		seen    = map[[2]int]float64{} // (iteration, worker) -> time
		_, hasG = t.cols["gpu"]
	)
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			break
		}
		field := "row"
		exact := false // a repeat of an earlier row, time and all
		if err == nil {
			r := row{t: t, rec: rec}
			w := r.int("worker")
			it := r.int("time")
			v := r.float("batch_time_norm")
			g := 0.0
			if hasG {
				g = r.float("gpu")
			}
			switch {
			case r.err != nil:
			case w < 0 || w > math.MaxInt32:
				r.fail("worker", fmt.Errorf("worker id %d out of range", w))
			case it < math.MinInt32 || it > math.MaxInt32:
				r.fail("time", fmt.Errorf("iteration %d out of range", it))
			case math.IsNaN(v) || math.IsInf(v, 0):
				r.fail("batch_time_norm", ErrNotFinite)
			case v < 0:
				r.fail("batch_time_norm", ErrNegative)
			case v > MaxBatchTimeNorm:
				r.fail("batch_time_norm", fmt.Errorf("%w: %g, want at most %d (the data is normalised to 0-1000)", ErrOutOfRange, v, MaxBatchTimeNorm))
			case math.IsNaN(g) || math.IsInf(g, 0):
				r.fail("gpu", ErrNotFinite)
			case g < 0:
				r.fail("gpu", ErrNegative)
			case g > MaxGPUShare:
				r.fail("gpu", fmt.Errorf("%w: %g%% of a GPU, want at most %d", ErrOutOfRange, g, MaxGPUShare))
			case hasKey(seen, [2]int{int(it), int(w)}):
				r.fail("worker", ErrDuplicateRow)
				exact = seen[[2]int{int(it), int(w)}] == v
			}
			if r.err == nil {
				seen[[2]int{int(it), int(w)}] = v
				iters[int(it)] = append(iters[int(it)], cell{int(w), v, line})
				if _, ok := gpu[int(w)]; !ok {
					gpu[int(w)] = g
				}
				continue
			}
			field, err = r.field, r.err
		}
		pe := &ParseError{File: o.Source, Line: line, Field: field, Err: err}
		if !o.SkipBad {
			return MiniBatch{}, pe
		}
		mb.Skipped++
		switch {
		case exact:
			mb.Repeated++
		default:
			mb.Bad++
			if mb.FirstBad == nil {
				mb.FirstBad = pe
			}
		}
	}
	mb.Workers = make([]int, 0, len(gpu))
	for w := range gpu {
		mb.Workers = append(mb.Workers, w)
	}
	slices.Sort(mb.Workers)
	col := make(map[int]int, len(mb.Workers))
	mb.GPU = make([]float64, len(mb.Workers))
	for i, w := range mb.Workers {
		col[w] = i
		mb.GPU[i] = gpu[w]
	}
	its := make([]int, 0, len(iters))
	for it := range iters {
		its = append(its, it)
	}
	slices.Sort(its)
	for _, it := range its {
		cells := iters[it]
		if len(cells) != len(mb.Workers) {
			if !o.SkipBad {
				have := make(map[int]bool, len(cells))
				for _, c := range cells {
					have[c.worker] = true
				}
				miss := 0
				for _, w := range mb.Workers {
					if !have[w] {
						miss = w
						break
					}
				}
				return MiniBatch{}, &ParseError{File: o.Source, Line: cells[0].line, Field: "worker",
					Err: fmt.Errorf("%w: iteration %d has no time for worker %d", ErrIncomplete, it, miss)}
			}
			mb.Skipped += len(cells)
			mb.Incomplete++
			continue
		}
		ts := make([]float64, len(mb.Workers))
		for _, c := range cells {
			ts[col[c.worker]] = c.time
		}
		mb.Iterations = append(mb.Iterations, it)
		mb.Times = append(mb.Times, ts)
	}
	if len(mb.Times) == 0 {
		return MiniBatch{}, &ParseError{File: o.Source, Field: "row", Err: ErrEmpty}
	}
	return mb, nil
}

// ReadMiniBatch reads and decodes the job file at path (gzipped or not)
// with DecodeMiniBatch; o.Source defaults to path.
func ReadMiniBatch(path string, o Options) (MiniBatch, error) {
	return readWith(path, "trace", o, DecodeMiniBatch)
}
