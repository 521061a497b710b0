package datasets

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/drover-sched/drover/internal/sharedtraces"
)

// sameFloats reports whether a and b are equal element by element, NaN
// matching NaN.
func sameFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool {
		return x == y || (math.IsNaN(x) && math.IsNaN(y))
	})
}

func sameSeries(a, b MachineSeries) bool {
	return a.Machine == b.Machine && sameFloats(a.Time, b.Time) && sameFloats(a.CPU, b.CPU) &&
		sameFloats(a.Mem, b.Mem) && sameFloats(a.MemBW, b.MemBW) &&
		sameFloats(a.NetIn, b.NetIn) && sameFloats(a.NetOut, b.NetOut)
}

func TestDecodeMachineUsage(t *testing.T) {
	nan := math.NaN()
	// Rows out of time order and machines interleaved: the result is per
	// machine in order of first appearance, each sorted by time (stable).
	in := "m_2,60,41,92,,,43.04,33.08,5\n" +
		"m_1,30,50,80,3.5,1,10,20,-1\n" +
		"m_2,0,44,93,0.37,0,43.05,33.09,101\n" +
		"\n" + // blank lines are ignored
		"m_2,60,100,0,0,,0,100,\n"
	want := []MachineSeries{
		{Machine: "m_2", Time: []float64{0, 60, 60}, CPU: []float64{0.44, 0.41, 1},
			Mem: []float64{0.93, 0.92, 0}, MemBW: []float64{0.0037, nan, 0},
			NetIn: []float64{0.4305, 0.4304, 0}, NetOut: []float64{0.3309, 0.3308, 1}},
		{Machine: "m_1", Time: []float64{30}, CPU: []float64{0.5}, Mem: []float64{0.8},
			MemBW: []float64{0.035}, NetIn: []float64{0.1}, NetOut: []float64{0.2}},
	}
	for _, gz := range []bool{false, true} {
		data := []byte(in)
		if gz {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(data)
			zw.Close()
			data = buf.Bytes()
		}
		got, err := DecodeMachineUsage(data, Options{Source: "t"})
		if err != nil {
			t.Fatalf("gzip=%v: %v", gz, err)
		}
		if len(got) != len(want) {
			t.Fatalf("gzip=%v: %d machines, want %d", gz, len(got), len(want))
		}
		for i := range want {
			// Percentages divide by 100 exactly as strconv(x)/100 does.
			if !sameSeries(got[i], want[i]) {
				t.Errorf("gzip=%v: machine %d:\n got %+v\nwant %+v", gz, i, got[i], want[i])
			}
		}
	}
}

func TestDecodeMachineUsageErrors(t *testing.T) {
	good := "m_1,0,1,2,,,3,4,5\n"
	tests := []struct {
		name   string
		row    string
		field  string
		reason string
		err    error // wrapped sentinel, if any
	}{
		{"cpu above 100", "m_1,60,100.5,2,,,3,4,5", "cpu_util_percent", ReasonOutOfRange, ErrOutOfRange},
		{"cpu negative", "m_1,60,-1,2,,,3,4,5", "cpu_util_percent", ReasonOutOfRange, ErrOutOfRange},
		{"cpu NaN", "m_1,60,NaN,2,,,3,4,5", "cpu_util_percent", ReasonOutOfRange, ErrOutOfRange},
		{"cpu empty", "m_1,60,,2,,,3,4,5", "cpu_util_percent", ReasonMalformed, nil},
		{"mem text", "m_1,60,1,x,,,3,4,5", "mem_util_percent", ReasonMalformed, nil},
		{"mem_gps above 100", "m_1,60,1,2,101,,3,4,5", "mem_gps", ReasonOutOfRange, ErrOutOfRange},
		{"net_in Inf", "m_1,60,1,2,,,Inf,4,5", "net_in", ReasonOutOfRange, ErrOutOfRange},
		{"net_out text", "m_1,60,1,2,,,3,four,5", "net_out", ReasonMalformed, nil},
		{"time negative", "m_1,-60,1,2,,,3,4,5", "time_stamp", ReasonOutOfRange, ErrNegative},
		{"time Inf", "m_1,+Inf,1,2,,,3,4,5", "time_stamp", ReasonOutOfRange, ErrNotFinite},
		{"time text", "m_1,t,1,2,,,3,4,5", "time_stamp", ReasonMalformed, nil},
		{"no machine", " ,60,1,2,,,3,4,5", "machine_id", ReasonMalformed, nil},
		{"8 fields", "m_1,60,1,2,,,3,4", "row", ReasonMalformed, nil},
		{"bare quote", "m_1,6\"0,1,2,,,3,4,5", "row", ReasonMalformed, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(good + tt.row + "\n" + good)
			_, err := DecodeMachineUsage(data, Options{Source: "f.csv"})
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *ParseError", err)
			}
			if pe.File != "f.csv" || pe.Line != 2 || pe.Field != tt.field {
				t.Errorf("error at %s:%d field %s, want f.csv:2 field %s (%v)", pe.File, pe.Line, pe.Field, tt.field, err)
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Errorf("err = %v, want it to wrap %v", err, tt.err)
			}
			got, skips, err := DecodeMachineUsageSkips(data, Options{SkipBad: true})
			if err != nil {
				t.Fatalf("SkipBad: %v", err)
			}
			if len(got) != 1 || len(got[0].Time) != 2 {
				t.Errorf("SkipBad kept %+v, want the 2 good rows", got)
			}
			if want := map[string]int{tt.reason: 1}; !maps(skips, want) {
				t.Errorf("SkipBad counts %v, want %v", skips, want)
			}
		})
	}
}

func maps(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestDecodeMachineUsageEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n", "m_1,-1,1,2,,,3,4,5\n"} {
		_, err := DecodeMachineUsage([]byte(in), Options{SkipBad: true})
		if !errors.Is(err, ErrEmpty) {
			t.Errorf("%q: err = %v, want ErrEmpty", in, err)
		}
	}
	if _, err := DecodeMachineUsage([]byte{0x1f, 0x8b, 0}, Options{}); err == nil {
		t.Error("truncated gzip: no error")
	}
}

// TestReadMachineUsageTrace checks the decoded v2018 head against the
// figures in shared/traces/README.md section 4 and against per-machine row
// counts taken with awk -F, '{n[$1]++}'.
func TestReadMachineUsageTrace(t *testing.T) {
	path := sharedtraces.Path(t, "alibaba_v2018", "machine_usage.csv.gz")
	ms, err := ReadMachineUsage(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 16 {
		t.Fatalf("%d machines, want 16", len(ms))
	}
	rows, emptyGPS := 0, 0
	minT, maxT := math.Inf(1), math.Inf(-1)
	for i, s := range ms {
		if want := fmt.Sprintf("m_%d", 1932+i); s.Machine != want {
			t.Errorf("machine %d = %s, want %s", i, s.Machine, want)
		}
		if !slices.IsSorted(s.Time) {
			t.Errorf("%s: times not sorted", s.Machine)
		}
		rows += len(s.Time)
		for _, v := range s.MemBW {
			if math.IsNaN(v) {
				emptyGPS++
			}
		}
		minT, maxT = min(minT, s.Time[0]), max(maxT, s.Time[len(s.Time)-1])
	}
	if rows != 100002 {
		t.Errorf("%d rows, want 100002", rows)
	}
	if emptyGPS != 78325 {
		t.Errorf("mem_gps empty in %d rows, want 78325", emptyGPS)
	}
	if minT != 0 || maxT != 691180 {
		t.Errorf("time range [%v, %v], want [0, 691180]", minT, maxT)
	}
	if got := ms[0].Time[0]; got != 386640 {
		t.Errorf("m_1932 starts at %v, want 386640", got)
	}
	if got := ms[15].Time[len(ms[15].Time)-1]; got != 188370 {
		t.Errorf("m_1947 ends at %v, want 188370", got)
	}
	for i, n := range map[int]int{0: 3325, 1: 7193, 15: 1148} {
		if len(ms[i].Time) != n {
			t.Errorf("%s: %d rows, want %d", ms[i].Machine, len(ms[i].Time), n)
		}
	}
	// The first row of the file: m_1932,386640,41,92,,,43.04,33.08,5.
	s := ms[0]
	if s.CPU[0] != 0.41 || s.Mem[0] != 0.92 || !math.IsNaN(s.MemBW[0]) || s.NetIn[0] != 0.4304 || s.NetOut[0] != 0.3308 {
		t.Errorf("first row: cpu %v mem %v membw %v in %v out %v", s.CPU[0], s.Mem[0], s.MemBW[0], s.NetIn[0], s.NetOut[0])
	}
}

func FuzzDecodeMachineUsage(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("m_1932,386640,41,92,,,43.04,33.08,5\nm_1932,553290,59,91,0.37,1,46.55,35.92,8\n"))
	f.Add([]byte("m_1,60,1,2,,,3,4\nm_2,1e309,1,1,1,1,1,1,1\n\"m,3\",0,100,0,0,0,0,100,101\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, skip := range []bool{false, true} {
			ms, err := DecodeMachineUsage(data, Options{Source: "fuzz", SkipBad: skip})
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is not a *ParseError", err)
				}
				continue
			}
			seen := make(map[string]bool)
			for _, s := range ms {
				if s.Machine == "" || seen[s.Machine] {
					t.Fatalf("empty or repeated machine %q", s.Machine)
				}
				seen[s.Machine] = true
				n := len(s.Time)
				if n == 0 || len(s.CPU) != n || len(s.Mem) != n || len(s.MemBW) != n || len(s.NetIn) != n || len(s.NetOut) != n {
					t.Fatalf("%s: ragged series", s.Machine)
				}
				if !slices.IsSorted(s.Time) {
					t.Fatalf("%s: times not sorted", s.Machine)
				}
				for i := range n {
					if !(s.Time[i] >= 0) || math.IsInf(s.Time[i], 0) {
						t.Fatalf("%s: bad time %v", s.Machine, s.Time[i])
					}
					for _, v := range []float64{s.CPU[i], s.Mem[i], s.NetIn[i], s.NetOut[i]} {
						if !(v >= 0 && v <= 1) {
							t.Fatalf("%s: utilisation %v outside [0, 1]", s.Machine, v)
						}
					}
					if v := s.MemBW[i]; !math.IsNaN(v) && !(v >= 0 && v <= 1) {
						t.Fatalf("%s: mem bandwidth %v outside [0, 1]", s.Machine, v)
					}
				}
			}
		}
	})
}
