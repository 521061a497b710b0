package soak

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const exposition = `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 23
process_resident_memory_bytes 4.4580864e+07
go_memstats_heap_inuse_bytes 1.0e+07
process_open_fds 14
process_cpu_seconds_total 12.5
drover_live_jobs{kind="all"} 262
drover_live_jobs{kind="profiled"} 10
drover_live_nodes{state="fresh"} 3
drover_live_nodes{state="stale"} 8
odd{label="a } b"} 7 1700000000000
broken_value abc
`

func TestParseMetrics(t *testing.T) {
	got := ParseMetrics([]byte(exposition))
	want := map[string]float64{
		"go_goroutines": 23, "process_resident_memory_bytes": 44580864, "go_memstats_heap_inuse_bytes": 1e7, "process_open_fds": 14, "process_cpu_seconds_total": 12.5,
		`drover_live_jobs{kind="all"}`: 262, `drover_live_jobs{kind="profiled"}`: 10,
		`drover_live_nodes{state="fresh"}`: 3, `drover_live_nodes{state="stale"}`: 8, `odd{label="a } b"}`: 7,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ParseMetrics (-want,+got):\n%s", d)
	}
	s, err := sampleOf(got)
	if err != nil {
		t.Fatal(err)
	}
	wantS := Sample{Goroutines: 23, RSS: 44580864, Heap: 1e7, FDs: 14, CPU: 12.5, LiveJobs: 262, LiveNodes: 11}
	if d := cmp.Diff(wantS, s); d != "" {
		t.Errorf("sampleOf (-want,+got):\n%s", d)
	}
	delete(got, "go_goroutines")
	if _, err := sampleOf(got); err == nil {
		t.Error("sampleOf without go_goroutines: no error")
	}
}

func TestServedWithin(t *testing.T) {
	m := ParseMetrics([]byte(`drover_grpc_request_duration_seconds_bucket{listener="fast",method="/drover.v1.Scheduler/Place",le="0.0025"} 90
drover_grpc_request_duration_seconds_bucket{listener="fast",method="/drover.v1.Scheduler/Place",le="0.005"} 97
drover_grpc_request_duration_seconds_bucket{listener="grpc",method="/drover.v1.Scheduler/Place",le="0.005"} 5
drover_grpc_request_duration_seconds_bucket{listener="fast",method="/drover.v1.Scheduler/Report",le="0.005"} 40
drover_grpc_request_duration_seconds_count{listener="fast",method="/drover.v1.Scheduler/Place"} 100
drover_grpc_request_duration_seconds_count{listener="grpc",method="/drover.v1.Scheduler/Place"} 6
`))
	tests := []struct {
		listener      string
		bound         time.Duration
		within, total float64
		ok            bool
	}{
		{"fast", 5 * time.Millisecond, 97, 100, true},
		{"fast", 2500 * time.Microsecond, 90, 100, true},
		{"grpc", 5 * time.Millisecond, 5, 6, true},
		{"fast", 3 * time.Millisecond, 0, 0, false}, // no bucket at 3 ms
	}
	for _, tt := range tests {
		w, n, ok := ServedWithin(m, tt.listener, tt.bound)
		if w != tt.within || n != tt.total || ok != tt.ok {
			t.Errorf("ServedWithin(%s, %v) = %v, %v, %v; want %v, %v, %v", tt.listener, tt.bound, w, n, ok, tt.within, tt.total, tt.ok)
		}
	}
}

func TestCountCPUs(t *testing.T) {
	tests := []struct {
		list string
		want int
		ok   bool
	}{
		{"0", 1, true}, {"0,2", 2, true}, {"0-3,6", 5, true}, {"3-1", 0, false}, {"a", 0, false}, {"", 0, false}, {"-1", 0, false},
	}
	for _, tt := range tests {
		got, err := CountCPUs(tt.list)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("CountCPUs(%q) = %d, %v; want %d, ok %v", tt.list, got, err, tt.want, tt.ok)
		}
	}
}
