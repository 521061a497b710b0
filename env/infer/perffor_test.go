package infer

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/internal/sharedtraces"
)

// TestParsePerfTableFor checks that the rows ParsePerfTableFor keeps give
// every instance of both Splitwise deployments the curve the whole table
// gives it (the same knots, bit for bit), from fewer curves; that it
// reads the whole table when it cannot tell which rows are used; and that
// a bad used row is the whole table's error, at its line there.
func TestParsePerfTableFor(t *testing.T) {
	data, err := os.ReadFile(sharedtraces.Path(t, "llm", "calibration", "splitwise_perf_model.csv"))
	if err != nil {
		t.Skipf("no latency table: %v", err)
	}
	whole, err := ParsePerfTable(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		cfg  Config
	}{
		{"baseline", SplitwiseBaseline(nil, 2)},
		{"splitwise-ha", SplitwiseHA(nil, 1, 1)},
		{"bloom-176b", func() Config { c := SplitwiseHA(nil, 1, 1); c.Model.Name = "bloom-176b"; return c }()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			used := usedPerfRows(data, tt.cfg)
			if len(used) >= len(data) {
				t.Fatalf("kept %d of %d bytes, want fewer", len(used), len(data))
			}
			p, err := ParsePerfTableFor(data, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.curves) >= len(whole.curves) {
				t.Errorf("%d curves of the whole table's %d, want fewer", len(p.curves), len(whole.curves))
			}
			for _, ic := range tt.cfg.Instances {
				k := perfKey{tt.cfg.Model.Name, ic.GPU, ic.TP}
				want, got := whole.curves[k], p.curves[k]
				if want == nil || got == nil {
					t.Fatalf("%v: curve %v of the whole table, %v of the used rows", k, want, got)
				}
				if diff := cmp.Diff(*want, *got, cmp.AllowUnexported(perfCurve{})); diff != "" {
					t.Errorf("%v: the used rows' curve differs from the whole table's (-want,+got):\n%s", k, diff)
				}
			}
		})
	}
	// Tables whose used rows it cannot tell: read whole.
	cfg := SplitwiseBaseline(nil, 1)
	for _, table := range []string{
		"model,hardware,tensor_parallel,x\nllama2-70b,a100-80gb,8,1\n",                           // no H100 rows
		"model,hardware,tensor_parallel,x\n\"llama2-70b\",h100-80gb,8,1\n",                       // a quote
		"model,hardware,tensor_parallel,x\nllama2-70b,h100-80gb,8,1\nllama2-70b,h100-80gb\n",     // a short row
		"model,hardware,x\nllama2-70b,h100-80gb,1\n",                                             // no TP column
		"model,hardware,tensor_parallel,x\nllama2-70b,h100-80gb,8,1\nllama2-70b,h100-80gb,x,1\n", // a TP that is no integer
	} {
		if got := usedPerfRows([]byte(table), cfg); string(got) != table {
			t.Errorf("usedPerfRows(%q) = %q, want the whole table", table, got)
		}
	}
	want := "model,hardware,tensor_parallel,x\nllama2-70b,h100-80gb,8,1\n"
	if got := usedPerfRows([]byte("model,hardware,tensor_parallel,x\nbloom-176b,h100-80gb,8,2\nllama2-70b,h100-80gb,8,1\nllama2-70b,h100-80gb,4,3\n"), cfg); string(got) != want {
		t.Errorf("usedPerfRows kept %q, want %q", got, want)
	}
	// A bad used row: the whole table's error, naming its line there.
	lines := strings.SplitAfter(string(data), "\n")
	for i, l := range lines {
		if f := strings.Split(l, ","); i > 100 && f[0] == "llama2-70b" && f[1] == "h100-80gb" && f[len(f)-1] == "8\n" {
			f[2] = "-" + f[2] // prompt_size
			lines[i] = strings.Join(f, ",")
			break
		}
	}
	bad := []byte(strings.Join(lines, ""))
	_, wantErr := ParsePerfTable(bad)
	_, gotErr := ParsePerfTableFor(bad, cfg)
	if wantErr == nil || gotErr == nil || gotErr.Error() != wantErr.Error() || !errors.Is(gotErr, ErrBadPerfTable) {
		t.Errorf("a bad used row: error %v, want the whole table's %v", gotErr, wantErr)
	}
}
