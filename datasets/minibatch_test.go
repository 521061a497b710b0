package datasets

import (
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"testing"

	"github.com/drover-sched/drover/internal/sharedtraces"
)

func TestDecodeCoV(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		skip    bool
		want    CoVTable
		line    int
		field   string
		wantErr error
	}{
		{
			name: "trailing blanks dropped",
			in:   ",0,1,2\njob_00,0.5,0.25,\njob_01,1,2,3\n",
			want: CoVTable{Jobs: []CoVSeries{{"job_00", []float64{0.5, 0.25}}, {"job_01", []float64{1, 2, 3}}}},
		},
		{name: "blank in the middle", in: ",0,1,2\njob_00,0.5,,1\n", line: 2, field: "1", wantErr: ErrBlank},
		{name: "negative", in: ",0,1\njob_00,0.5,-1\n", line: 2, field: "1", wantErr: ErrNegative},
		{name: "NaN", in: ",0,1\njob_00,NaN,1\n", line: 2, field: "0", wantErr: ErrNotFinite},
		{name: "all blank", in: ",0,1\njob_00,,\n", line: 2, field: "row", wantErr: ErrBlank},
		{name: "empty", in: ",0,1\n", field: "row", wantErr: ErrEmpty},
		{name: "CoV 1e308", in: ",0,1\njob_00,0.5,1e308\n", line: 2, field: "1", wantErr: ErrOutOfRange},
		{
			name: "skip bad rows",
			in:   ",0,1,2\njob_00,0.5,,1\njob_01,x,1,1\njob_02,1,1,1\n",
			skip: true,
			want: CoVTable{Jobs: []CoVSeries{{"job_02", []float64{1, 1, 1}}}, Skipped: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeCoV([]byte(tt.in), Options{Source: "cov", SkipBad: tt.skip})
			if tt.wantErr != nil {
				var pe *ParseError
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &pe) {
					t.Fatalf("err = %v, want a *ParseError wrapping %v", err, tt.wantErr)
				}
				if pe.Line != tt.line || pe.Field != tt.field || pe.File != "cov" {
					t.Fatalf("err at %s:%d field %q, want cov:%d field %q", pe.File, pe.Line, pe.Field, tt.line, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeMiniBatch(t *testing.T) {
	const head = ",worker,gpu,time,batch_time_norm\n"
	tests := []struct {
		name    string
		in      string
		skip    bool
		want    MiniBatch
		line    int
		wantErr error
	}{
		{
			name: "two workers, rows out of order",
			in:   head + "0,1,25,1,476\n1,0,25,1,509\n2,0,25,11,400\n3,1,25,11,1000\n",
			want: MiniBatch{Workers: []int{0, 1}, GPU: []float64{25, 25}, Iterations: []int{1, 11},
				Times: [][]float64{{509, 476}, {400, 1000}}},
		},
		{name: "incomplete iteration", in: head + "0,0,25,1,1\n1,1,25,1,2\n2,0,25,2,3\n", line: 4, wantErr: ErrIncomplete},
		{name: "duplicate", in: head + "0,0,25,1,1\n1,0,25,1,2\n", line: 3, wantErr: ErrDuplicateRow},
		{name: "negative time", in: head + "0,0,25,1,-1\n", line: 2, wantErr: ErrNegative},
		{name: "missing column", in: ",worker,gpu,time\n0,0,25,1\n", line: 1, wantErr: ErrMissingColumn},
		{
			name: "skip incomplete and bad",
			in:   head + "0,0,25,1,1\n1,1,25,1,2\n2,0,25,2,3\n3,1,25,3,x\n",
			skip: true,
			want: MiniBatch{Workers: []int{0, 1}, GPU: []float64{25, 25}, Iterations: []int{1},
				Times: [][]float64{{1, 2}}, Skipped: 2, Incomplete: 1, Bad: 1,
				FirstBad: &ParseError{File: "mb", Line: 5, Field: "batch_time_norm", Err: fmt.Errorf("parse %q as number", "x")}},
		},
		{
			name: "skip an exact repeat apart",
			in:   head + "0,0,25,1,1\n1,1,25,1,2\n2,1,25,1,2\n3,1,25,1,5\n",
			skip: true,
			want: MiniBatch{Workers: []int{0, 1}, GPU: []float64{25, 25}, Iterations: []int{1},
				Times: [][]float64{{1, 2}}, Skipped: 2, Repeated: 1, Bad: 1,
				FirstBad: &ParseError{File: "mb", Line: 5, Field: "worker", Err: ErrDuplicateRow}},
		},
		// Issue 18: absurd values are refused, not averaged in.
		{name: "time above 1000", in: head + "0,0,25,1,1e308\n", line: 2, wantErr: ErrOutOfRange},
		{name: "gpu share absurd", in: head + "0,0,1e308,1,5\n", line: 2, wantErr: ErrOutOfRange},
		{name: "NaN time", in: head + "0,0,25,1,1\n1,0,25,2,NaN\n", line: 3, wantErr: ErrNotFinite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeMiniBatch([]byte(tt.in), Options{Source: "mb", SkipBad: tt.skip})
			if tt.wantErr != nil {
				var pe *ParseError
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &pe) {
					t.Fatalf("err = %v, want a *ParseError wrapping %v", err, tt.wantErr)
				}
				if pe.Line != tt.line {
					t.Fatalf("err on line %d, want %d: %v", pe.Line, tt.line, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func minibatchPath(t *testing.T, name string) string {
	return sharedtraces.Path(t, "alibaba_v2020_minibatch", name)
}

// TestReadCoVReal checks the PAI v2020 table against its README: 100 jobs
// of at most 2000 iterations, every CoV finite and >= 0. The largest value
// is at most sqrt(10), the largest sample-std CoV of 10 non-negative values.
func TestReadCoVReal(t *testing.T) {
	tab, err := ReadCoV(minibatchPath(t, "coefficient_variation.csv.gz"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Jobs) != 100 || tab.Skipped != 0 {
		t.Fatalf("%d jobs, %d skipped; want 100, 0", len(tab.Jobs), tab.Skipped)
	}
	// Counted with awk on the file: 82739 values, job lengths 203 to 2000.
	if n := tab.Len(); n != 82739 {
		t.Errorf("%d values, want 82739", n)
	}
	top := 0.0
	for _, j := range tab.Jobs {
		if len(j.CoV) < 203 || len(j.CoV) > 2000 {
			t.Errorf("%s: %d iterations, want 203..2000", j.Name, len(j.CoV))
		}
		for _, v := range j.CoV {
			top = math.Max(top, v)
		}
	}
	if top <= 3 || top > math.Sqrt(10) {
		t.Errorf("largest CoV %v, want in (3, sqrt(10)]", top)
	}
}

// TestReadMiniBatchReal checks the four job files: 10 workers each with the
// README's GPU share; iteration counts and the incomplete iterations (at the
// ends of jobs 2, 3 and 4) counted in the files with awk. Job 2 also
// repeats one row (iteration 2381, worker 3, on lines 2391 and 2392), so a
// strict read fails there first.
func TestReadMiniBatchReal(t *testing.T) {
	tests := []struct {
		file             string
		gpu              float64
		iters, incomplet int
		strict           error
	}{
		{"job_1_norm.csv", 25, 300, 0, nil},
		{"job_2_norm.csv", 20, 238, 16, ErrDuplicateRow},
		{"job_3_norm.csv", 25, 248, 1, ErrIncomplete},
		{"job_4_norm.csv.gz", 50, 2182, 1, ErrIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p := minibatchPath(t, tt.file)
			if _, err := os.Stat(p); err != nil {
				t.Skip(err)
			}
			if _, err := ReadMiniBatch(p, Options{}); (err == nil) != (tt.strict == nil) || !errors.Is(err, tt.strict) {
				t.Errorf("strict read: err = %v, want %v", err, tt.strict)
			}
			mb, err := ReadMiniBatch(p, Options{SkipBad: true})
			if err != nil {
				t.Fatal(err)
			}
			if want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}; !reflect.DeepEqual(mb.Workers, want) {
				t.Errorf("workers %v, want %v", mb.Workers, want)
			}
			for _, g := range mb.GPU {
				if g != tt.gpu {
					t.Errorf("gpu %v, want %v", g, tt.gpu)
				}
			}
			if len(mb.Times) != tt.iters || mb.Incomplete != tt.incomplet {
				t.Errorf("%d iterations, %d incomplete; want %d, %d", len(mb.Times), mb.Incomplete, tt.iters, tt.incomplet)
			}
			for _, row := range mb.Times {
				for _, v := range row {
					if v < 0 || v > 1000 {
						t.Fatalf("time %v outside 0..1000", v)
					}
				}
			}
		})
	}
}

// checkCoVTable checks what DecodeCoV promises of a table it returns.
func checkCoVTable(t *testing.T, tab CoVTable) {
	t.Helper()
	if len(tab.Jobs) == 0 {
		t.Fatal("no jobs without an error")
	}
	for _, j := range tab.Jobs {
		if len(j.CoV) == 0 {
			t.Fatalf("job %q without values", j.Name)
		}
		for _, v := range j.CoV {
			if !(v >= 0) || math.IsInf(v, 0) || v > MaxCoV {
				t.Fatalf("job %q: value %v", j.Name, v)
			}
		}
	}
}

func FuzzDecodeCoV(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte(",0,1,2\njob_00,0.5,0.25,\njob_01,1,2,3\n"))
	f.Add([]byte(",0,1\njob_00,,1\njob_01,-1,NaN\n"))
	f.Add([]byte(",0,1\njob_00,0.5,1e308\n")) // issue 18: accepted before MaxCoV
	f.Add([]byte{0x1f, 0x8b, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, skip := range []bool{false, true} {
			tab, err := DecodeCoV(data, Options{Source: "fuzz", SkipBad: skip})
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is not a *ParseError", err)
				}
				continue
			}
			checkCoVTable(t, tab)
		}
	})
}

func FuzzDecodeMiniBatch(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte(",worker,gpu,time,batch_time_norm\n0,0,25,1,476\n1,1,25,1,509\n2,0,25,11,400\n3,1,25,11,1000\n"))
	f.Add([]byte(",worker,gpu,time,batch_time_norm\n0,0,25,1,1\n1,0,25,1,2\n2,1,25,2,-3\n3,99999999999,1,1,1\n"))
	f.Add([]byte("worker,time,batch_time_norm\n1,1.0,1e308\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, skip := range []bool{false, true} {
			mb, err := DecodeMiniBatch(data, Options{Source: "fuzz", SkipBad: skip})
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is not a *ParseError", err)
				}
				continue
			}
			if len(mb.Times) == 0 || len(mb.Times) != len(mb.Iterations) || len(mb.GPU) != len(mb.Workers) {
				t.Fatalf("shape: %d rows, %d iterations, %d gpus, %d workers", len(mb.Times), len(mb.Iterations), len(mb.GPU), len(mb.Workers))
			}
			for i, row := range mb.Times {
				if len(row) != len(mb.Workers) {
					t.Fatalf("row %d has %d workers, want %d", i, len(row), len(mb.Workers))
				}
				if i > 0 && mb.Iterations[i] <= mb.Iterations[i-1] {
					t.Fatalf("iterations not ascending: %v", mb.Iterations)
				}
				for _, v := range row {
					if !(v >= 0) || math.IsInf(v, 0) || v > MaxBatchTimeNorm {
						t.Fatalf("time %v", v)
					}
				}
			}
			if mb.Bad+mb.Repeated > mb.Skipped || (mb.FirstBad != nil) != (mb.Bad > 0) {
				t.Fatalf("skipped %d, bad %d (first %v), repeated %d", mb.Skipped, mb.Bad, mb.FirstBad, mb.Repeated)
			}
		}
	})
}
