package converge

import (
	"errors"
	"math"
	"strings"
	"testing"
)

const header = "source,family,sync,workers,batch,run,kind,progress,unit,value,ref\n"

func TestParseMeasurementsErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"empty", ""},
		{"wrong header", strings.Replace(header, "value", "val", 1)},
		{"short row", header + "tsm,x,bsp,0,64,1,acc,1,epoch,50\n"},
		{"negative workers", header + "tsm,x,bsp,-1,64,1,acc,1,epoch,50,r\n"},
		{"bad progress", header + "tsm,x,bsp,0,64,1,acc,NaN,epoch,50,r\n"},
		{"infinite value", header + "tsm,x,bsp,0,64,1,acc,1,epoch,+Inf,r\n"},
		{"NaN accuracy", header + "tsm,x,bsp,0,64,1,acc,1,epoch,NaN,r\n"},
		{"unknown kind", header + "tsm,x,bsp,0,64,1,loss,1,epoch,1.5,r\n"},
		{"no ref", header + "tsm,x,bsp,0,64,1,acc,1,epoch,50,\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseMeasurements([]byte(tt.data)); !errors.Is(err, ErrBadTable) {
				t.Errorf("err = %v, want ErrBadTable", err)
			}
		})
	}
}

// Every embedded row parses and names a commit-pinned source file.
func TestEmbeddedTable(t *testing.T) {
	ms := Measurements()
	if len(ms) < 150 || len(ms) > 600 {
		t.Errorf("%d rows; the table is meant to stay a small digitised extract", len(ms))
	}
	for i, m := range ms {
		paper := strings.HasPrefix(m.Ref, "paper:") && strings.Contains(m.Ref, "Table ")
		if !paper && (!strings.Contains(m.Ref, "@") || !strings.Contains(m.Ref, ":")) {
			t.Errorf("row %d: ref %q names no repository@commit:path nor a paper's table", i+2, m.Ref)
		}
		if m.Kind == KindDiverged != math.IsNaN(m.Value) {
			t.Errorf("row %d: kind %s with value %v", i+2, m.Kind, m.Value)
		}
	}
}

// The crossing interpolates between the bracketing evaluations.
func TestCrossing(t *testing.T) {
	tests := []struct {
		name   string
		p, v   []float64
		target float64
		at     float64
		ok     bool
	}{
		{"between", []float64{1, 2, 3}, []float64{40, 50, 60}, 55, 2.5, true},
		{"at a point", []float64{1, 2, 3}, []float64{40, 50, 60}, 50, 2, true},
		{"first point", []float64{1, 2}, []float64{70, 80}, 60, 1, true},
		{"never", []float64{1, 2}, []float64{40, 50}, 60, 0, false},
		{"first crossing wins", []float64{1, 2, 3, 4}, []float64{40, 60, 50, 70}, 55, 1.75, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, ok := crossing(tt.p, tt.v, tt.target)
			if ok != tt.ok || math.Abs(at-tt.at) > 1e-12 {
				t.Errorf("crossing = %v, %v; want %v, %v", at, ok, tt.at, tt.ok)
			}
		})
	}
}

func FuzzParseMeasurements(f *testing.F) {
	f.Add([]byte(header + "tsm,x,bsp,0,64,1,acc,1,epoch,50,r@c:p\n"))
	f.Add([]byte(header + "syncswitch,y,asp,16,0,0,diverged,0,worker-batch,NaN,r@c:p\n"))
	f.Add(measurementsCSV)
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := ParseMeasurements(data)
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.Workers < 0 || m.Batch < 0 || m.Progress < 0 || math.IsInf(m.Value, 0) {
				t.Fatalf("accepted a bad row: %+v", m)
			}
		}
		// Fitting whatever parsed must not panic.
		_, _ = Fit(ms)
	})
}
