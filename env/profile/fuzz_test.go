package profile

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func FuzzParsePlacements(f *testing.F) {
	f.Add([]byte("placement,local_bsz,step_time,sync_time\n1,20,0.147,0.0012\n22,28,0.2,0.01\n"))
	f.Add([]byte("placement,local_bsz,step_time,sync_time\n0,20,0.1,0.1\n"))
	f.Add([]byte("placement,local_bsz\n\"1\n"))
	f.Add([]byte(""))
	// Crasher: a bare quote made csv.Reader.FieldPos panic.
	f.Add([]byte("placement,local_bsz,step_time,sync_time\n1\"0000000000000"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ParsePlacements(data)
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.LocalBsz <= 0 || !(r.StepTime >= 0) || !(r.SyncTime >= 0) || r.Placement == "" {
				t.Fatalf("invalid row accepted: %+v", r)
			}
		}
	})
}

func FuzzParseValidation(f *testing.F) {
	f.Add([]byte("progress,iteration,metric,grad_sqr,grad_var\n6405.9,783,0.07,3.78,19.99\n"))
	f.Add([]byte("progress,iteration,metric,grad_sqr,grad_var\n-1,1,1,1,1\n"))
	f.Add([]byte("progress,iteration\n1,2,3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ParseValidation(data)
		if err != nil {
			return
		}
		for _, r := range rows {
			if !(r.Progress >= 0) || !(r.Iteration >= 0) {
				t.Fatalf("invalid row accepted: %+v", r)
			}
		}
	})
}

func FuzzParseScalability(f *testing.F) {
	f.Add([]byte("num_nodes,num_replicas,local_bsz,step_time,sync_time\n6,6,32,0.1409,0.0994\n"))
	f.Add([]byte("num_nodes,num_replicas,local_bsz,step_time,sync_time\n0,6,32,0.1,0.1\n"))
	f.Add([]byte("num_nodes,num_replicas,local_bsz,step_time,sync_time\n1,1,1,NaN,-1\n"))
	f.Add([]byte("num_nodes,num_replicas\n\"1\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ParseScalability(data)
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.NumNodes <= 0 || r.NumReplicas <= 0 || r.LocalBsz <= 0 || !(r.StepTime >= 0) || !(r.SyncTime >= 0) {
				t.Fatalf("invalid row accepted: %+v", r)
			}
		}
	})
}

// FuzzCSVRows checks csvRows's fast path against encoding/csv: where it
// answers, it gives the same rows, line numbers and errors.
func FuzzCSVRows(f *testing.F) {
	f.Add([]byte("placement,local_bsz,step_time,sync_time\n1,20,0.147,0.0012\n22,28,0.2,0.01\n"))
	f.Add([]byte("a,b\n\n1,2\n\n\n3,4"))
	f.Add([]byte("a\n \n\n"))
	f.Add([]byte("a,b\n1,2,3\n"))
	f.Add([]byte("a,b\r\n1,2\r\n"))
	f.Add([]byte("\n\n"))
	f.Add([]byte(" a , b\n1 , 2 \n"))
	f.Add([]byte("a,b,a\n1,2,3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := string(data)
		if !plainShape(s) {
			return
		}
		// Ask for the header's columns in reverse order, and one more
		// that may be missing.
		header, _, _ := strings.Cut(strings.TrimLeft(s, "\n"), "\n")
		var want []string
		for _, f := range slices.Backward(strings.Split(header, ",")) {
			want = append(want, strings.TrimSpace(f))
		}
		if len(data)%3 == 0 {
			want = append(want, "b")
		}
		type row struct {
			Line  int
			Cells []string
		}
		collect := func(rows func(string, []string, func(int, []string) error) error) ([]row, error) {
			var out []row
			err := rows(s, want, func(line int, cells []string) error {
				out = append(out, row{line, slices.Clone(cells)})
				return nil
			})
			return out, err
		}
		fast, ferr := collect(plainRows)
		slow, serr := collect(tableRows)
		if (ferr == nil) != (serr == nil) || ferr != nil && ferr.Error() != serr.Error() {
			t.Fatalf("errors differ: fast %v, encoding/csv %v", ferr, serr)
		}
		if diff := cmp.Diff(slow, fast, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("fast path differs from encoding/csv (-csv +fast):\n%s", diff)
		}
	})
}
