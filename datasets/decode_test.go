package datasets

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestRealTraces decodes every public trace with the row counts that
// shared/traces/README.md documents.
func TestRealTraces(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		format  Format
		jobs    int
		skipped map[string]int
	}{
		// README: 82,247 jobs, no empty fields.
		{name: "philly", path: "philly/pollux_philly.csv.gz", format: FormatPhilly, jobs: 82247},
		// README: 1,867 jobs.
		{name: "helios", path: "helios/helios_venus_2vc_sept.csv", format: FormatHelios, jobs: 1867},
		// README: 8,152 pods, 897 Pending, num_gpu 0 for 1,088 of which 36 are
		// Pending (counted by awk over the file), so 1,052 CPU-only pods.
		{name: "alibaba", path: "alibaba_pai_v2023/openb_pod_list_default.csv", format: FormatAlibaba,
			jobs: 8152 - 897 - 1052, skipped: map[string]int{ReasonPending: 897, ReasonCPUOnly: 1052}},
	}
	for i := 1; i <= 8; i++ {
		tests = append(tests, struct {
			name    string
			path    string
			format  Format
			jobs    int
			skipped map[string]int
		}{name: fmt.Sprintf("pollux-%d", i), path: fmt.Sprintf("philly/pollux_workloads/workload-%d.csv", i), format: FormatPollux, jobs: 160})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range []Format{tt.format, FormatAuto} {
				w, err := ReadFile(trace(t, tt.path), f, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if w.Format != tt.format {
					t.Errorf("format %q, want %q", w.Format, tt.format)
				}
				if len(w.Jobs) != tt.jobs {
					t.Errorf("%d jobs, want %d", len(w.Jobs), tt.jobs)
				}
				if !reflect.DeepEqual(w.SkipReasons, tt.skipped) {
					t.Errorf("skip reasons %v, want %v", w.SkipReasons, tt.skipped)
				}
				checkInvariants(t, w)
				if tt.format != FormatPollux && w.Jobs[0].Submit != 0 {
					t.Errorf("first submit %v, want 0 after rebasing", w.Jobs[0].Submit)
				}
			}
		})
	}
}

// TestPhillyDetails checks values read from the first rows of the trace
// (see its first lines) and the time-of-day origin.
func TestPhillyDetails(t *testing.T) {
	w, err := ReadFile(trace(t, "philly/pollux_philly.csv.gz"), FormatPhilly, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// README: the earliest timestamp is 2017-09-04 10:30:41, the latest
	// 2017-12-22 08:02:11.
	origin := time.Date(2017, 9, 4, 10, 30, 41, 0, time.UTC).Unix()
	last := time.Date(2017, 12, 22, 8, 2, 11, 0, time.UTC).Unix()
	if w.Origin != origin {
		t.Errorf("Origin %d, want %d", w.Origin, origin)
	}
	if got := w.Jobs[len(w.Jobs)-1].Submit; got != float64(last-origin) {
		t.Errorf("last submit %v, want %v", got, last-origin)
	}
	byName := map[string]Job{}
	for _, j := range w.Jobs {
		byName[j.Name] = j
	}
	// Row 1: 2017-10-09 07:01:55,66.0,1,66.0,11cb48.
	want := Job{Name: "philly-1", Submit: float64(time.Date(2017, 10, 9, 7, 1, 55, 0, time.UTC).Unix() - origin),
		GPUs: 1, Duration: 66, Model: AssignModel("philly-1", 66), Cluster: "11cb48"}
	if got := byName["philly-1"]; got != want {
		t.Errorf("philly-1 = %+v, want %+v", got, want)
	}
	// Decoding is stable with respect to ties: equal submits keep row order.
	for i := 1; i < len(w.Jobs); i++ {
		a, b := w.Jobs[i-1], w.Jobs[i]
		if a.Submit == b.Submit && rowNum(a.Name) > rowNum(b.Name) {
			t.Fatalf("unstable sort: %s before %s", a.Name, b.Name)
		}
	}
}

func rowNum(name string) int {
	var n int
	fmt.Sscanf(strings.TrimPrefix(name, "philly-"), "%d", &n)
	return n
}

func TestPolluxFilter(t *testing.T) {
	w, err := ReadFile(trace(t, "philly/pollux_philly.csv.gz"), FormatPhilly, Options{}.WithPolluxFilter())
	if err != nil {
		t.Fatal(err)
	}
	// Counted with awk over the file: 74,428 rows have duration >= 60 and
	// gpu_time < 3.6e6.
	if len(w.Jobs) != 74428 || w.Skipped != 82247-74428 {
		t.Errorf("%d jobs, %d skipped; want 74428, %d", len(w.Jobs), w.Skipped, 82247-74428)
	}
}

func TestPAINodes(t *testing.T) {
	tests := []struct {
		file         string
		nodes, gpus  int
		gpuNodes     int
		firstGPUType string
	}{
		{"openb_node_list_gpu_node.csv", 1213, 6212, 1213, "P100"},
		{"openb_node_list_all_node.csv", 1523, 6212, 1213, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			nodes, err := ReadPAINodes(trace(t, "alibaba_pai_v2023/"+tt.file))
			if err != nil {
				t.Fatal(err)
			}
			gpus, gpuNodes := 0, 0
			for _, n := range nodes {
				gpus += n.GPUs
				if n.GPUs > 0 {
					gpuNodes++
				}
			}
			if len(nodes) != tt.nodes || gpus != tt.gpus || gpuNodes != tt.gpuNodes {
				t.Errorf("%d nodes, %d GPU nodes, %d GPUs; want %d, %d, %d", len(nodes), gpuNodes, gpus, tt.nodes, tt.gpuNodes, tt.gpus)
			}
			if nodes[0].GPUModel != tt.firstGPUType {
				t.Errorf("first node GPU model %q, want %q", nodes[0].GPUModel, tt.firstGPUType)
			}
		})
	}
}

// TestBadRows checks that every kind of bad row is reported with the file,
// line and field, and that SkipBad skips and counts it instead.
func TestBadRows(t *testing.T) {
	const jobsHead = "name,submit,gpus,duration,model,batch_size,cluster,status,cpu_milli,memory_mib\n"
	const ok = "a,0,1,10,bert,0,,,0,0\n"
	tests := []struct {
		name   string
		format Format
		data   string
		line   int
		field  string
		is     error
		reason string
	}{
		{"jobs negative duration", FormatJobs, jobsHead + ok + "b,1,1,-5,bert,0,,,0,0\n", 3, "duration", ErrNegative, ReasonBadDuration},
		{"jobs NaN duration", FormatJobs, jobsHead + ok + "b,1,1,NaN,bert,0,,,0,0\n", 3, "duration", ErrNotFinite, ReasonBadDuration},
		{"jobs Inf submit", FormatJobs, jobsHead + ok + "b,+Inf,1,1,bert,0,,,0,0\n", 3, "submit", ErrNotFinite, ReasonBadSubmit},
		{"jobs negative submit", FormatJobs, jobsHead + ok + "b,-1,1,1,bert,0,,,0,0\n", 3, "submit", ErrNegative, ReasonBadSubmit},
		{"jobs zero gpus", FormatJobs, jobsHead + ok + "b,1,0,1,bert,0,,,0,0\n", 3, "gpus", ErrBadGPUs, ReasonBadGPUs},
		{"jobs unknown model", FormatJobs, jobsHead + ok + "b,1,1,1,gpt5,0,,,0,0\n", 3, "model", ErrUnknownModel, ReasonUnknownModel},
		{"jobs duplicate", FormatJobs, jobsHead + ok + ok, 3, "name", ErrDuplicateName, ReasonDuplicate},
		{"jobs unparsable gpus", FormatJobs, jobsHead + ok + "b,1,x,1,bert,0,,,0,0\n", 3, "gpus", nil, ReasonMalformed},
		{"jobs short row", FormatJobs, jobsHead + ok + "b,1,1\n", 3, "row", nil, ReasonMalformed},
		{"pollux unknown app", FormatPollux, "name,time,application,num_replicas,batch_size\nx-0,1,cifar10,1,128\nx-1,2,resnet,1,128\n", 3, "application", ErrUnknownModel, ReasonUnknownModel},
		{"philly bad timestamp", FormatPhilly, "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,66.0,c\n2017-13-09 07:01:55,66.0,1,66.0,c\n", 3, "timestamp", nil, ReasonMalformed},
		{"philly zero gpus", FormatPhilly, "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,66.0,c\n2017-10-09 07:01:55,66.0,0,0,c\n", 3, "num_gpus", ErrBadGPUs, ReasonBadGPUs},
		{"helios negative duration", FormatHelios, "# c\njob_id,tenant,submit_time,num_chips,duration_s,final_status\n1,v,0,8,10,COMPLETED\n2,v,5,8,-1,FAILED\n", 4, "duration_s", ErrNegative, ReasonBadDuration},
		{"alibaba deleted before scheduled", FormatAlibaba, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np0,1000,10,1,1000,,LS,Running,0,10,0\np1,1000,10,1,1000,,LS,Running,5,3,6\n", 3, "deletion_time", ErrNegative, ReasonBadDuration},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.format, []byte(tt.data), Options{Source: "in.csv"})
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if pe.File != "in.csv" || pe.Line != tt.line || pe.Field != tt.field {
				t.Errorf("error at %s:%d field %s, want in.csv:%d field %s (%v)", pe.File, pe.Line, pe.Field, tt.line, tt.field, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tt.is)
			}
			prefix := fmt.Sprintf("in.csv:%d: field %s: ", tt.line, tt.field)
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("message %q, want prefix %q", err, prefix)
			}
			w, err := Decode(tt.format, []byte(tt.data), Options{Source: "in.csv", SkipBad: true})
			if err != nil {
				t.Fatalf("SkipBad: %v", err)
			}
			if want := map[string]int{tt.reason: 1}; len(w.Jobs) != 1 || w.Skipped != 1 || !reflect.DeepEqual(w.SkipReasons, want) {
				t.Errorf("SkipBad: %d jobs, skipped %d %v; want 1 job, skipped 1 %v", len(w.Jobs), w.Skipped, w.SkipReasons, want)
			}
		})
	}
}

func TestStructuralErrors(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		data   string
		is     error
	}{
		{"empty input", FormatJobs, "", ErrEmpty},
		{"header only", FormatJobs, "name,submit,gpus,duration,model,batch_size,cluster,status,cpu_milli,memory_mib\n", ErrEmpty},
		{"all rows skipped", FormatAlibaba, "name,num_gpu,creation_time,deletion_time,scheduled_time\np,1,0,1,\n", ErrEmpty},
		{"missing column", FormatPhilly, "timestamp,duration\n2017-10-09 07:01:55,1\n", ErrMissingColumn},
		{"unknown header", FormatAuto, "a,b,c\n1,2,3\n", ErrUnknownFormat},
		{"unknown format", Format("xml"), "a\n", ErrUnknownFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.format, []byte(tt.data), Options{Source: "x", SkipBad: true})
			if !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
		})
	}
}

// TestAlibabaRules checks the documented special cases: Pending and
// CPU-only pods are skipped even without SkipBad, GPU-sharing pods count as
// one GPU, and times are rebased to the earliest kept creation time.
func TestAlibabaRules(t *testing.T) {
	data := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"pend,1000,10,1,1000,,LS,Pending,10,20,\n" +
		"cpu,1000,10,0,0,,BE,Running,15,30,16\n" +
		"share,6000,12288,1,460,,LS,Running,100,700,160\n" +
		"full,12000,16384,2,1000,,LS,Failed,50,80,60\n"
	w, err := Decode(FormatAlibaba, []byte(data), Options{Source: "pods.csv"})
	if err != nil {
		t.Fatal(err)
	}
	// PAI's default PS share (0.5) on the 2-GPU pod: its draw is 0.1783
	// (see TestPSRuleDraw), below the share, so it is PS with a server per
	// worker.
	want := []Job{
		{Name: "full", Submit: 0, GPUs: 2, Duration: 20, Model: AssignModel("full", 40), Status: "Failed", CPUMilli: 12000, MemoryMiB: 16384, Arch: ArchPS, PSShards: 2},
		{Name: "share", Submit: 50, GPUs: 1, Duration: 540, Model: AssignModel("share", 540), Status: "Running", CPUMilli: 6000, MemoryMiB: 12288},
	}
	if !reflect.DeepEqual(w.Jobs, want) {
		t.Errorf("jobs:\n got %+v\nwant %+v", w.Jobs, want)
	}
	if want := map[string]int{ReasonPending: 1, ReasonCPUOnly: 1}; !reflect.DeepEqual(w.SkipReasons, want) || w.Skipped != 2 {
		t.Errorf("skipped %d %v, want 2 %v", w.Skipped, w.SkipReasons, want)
	}
}

func TestAssignModel(t *testing.T) {
	// FNV-1a 64 of "" is the offset basis 0xcbf29ce484222325 (odd); of "a"
	// it is 0xaf63dc4c8601ec8c (even): reference values from the FNV spec.
	tests := []struct {
		name    string
		gpuTime float64
		want    string
	}{
		{"", 0, "ncf"},
		{"a", 0, "cifar10"},
		{"a", 3599, "cifar10"},
		{"a", 3600, "deepspeech2"},
		{"", 3600, "bert"},
		{"a", 35999, "deepspeech2"},
		{"a", 36000, "yolov3"},
		{"a", 359999, "yolov3"},
		{"a", 360000, "imagenet"},
	}
	for _, tt := range tests {
		if got := AssignModel(tt.name, tt.gpuTime); got != tt.want {
			t.Errorf("AssignModel(%q, %v) = %q, want %q", tt.name, tt.gpuTime, got, tt.want)
		}
	}
}

func TestJobsRoundTrip(t *testing.T) {
	w := &Workload{Name: "rt", Format: FormatJobs, Jobs: []Job{
		{Name: "a", Submit: 0, GPUs: 1, Duration: 0.1, Model: "bert", BatchSize: 32, Cluster: "vc,1", Status: `say "hi"`, CPUMilli: 1000, MemoryMiB: 2048},
		{Name: " b", Submit: 1e-7, GPUs: 64, Duration: MaxSeconds, Model: "yolov3"}, // the largest duration a reader accepts
		{Name: "c\nd", Submit: 12345.678, GPUs: 3, Duration: 0, Model: "ncf"},
	}}
	got, err := Decode(FormatAuto, Encode(w, nil), Options{Source: "rt"})
	if err != nil {
		t.Fatal(err)
	}
	got.Name = "rt"
	if !reflect.DeepEqual(got, w) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, w)
	}
}

func TestInspect(t *testing.T) {
	w := &Workload{Name: "s", Format: FormatJobs, Jobs: []Job{
		{Name: "a", Submit: 10, GPUs: 1, Duration: 3600, Model: "bert"},
		{Name: "b", Submit: 20, GPUs: 4, Duration: 1800, Model: "ncf"},
		{Name: "c", Submit: 70, GPUs: 1, Duration: 60, Model: "bert"},
	}}
	got := Inspect(w)
	want := Stats{Name: "s", Format: FormatJobs, Jobs: 3, FirstSubmit: 10, LastSubmit: 70, Span: 60,
		GPUHist: []GPUCount{{1, 2}, {4, 1}}, HasDurations: true,
		// Nearest rank over {60, 1800, 3600}: p50 = 2nd, p90 = p99 = max.
		P50: 1800, P90: 3600, P99: 3600, MaxDuration: 3600,
		GPUHours: 1 + 2 + 60.0/3600, Models: []ModelCount{{"bert", 2}, {"ncf", 1}}, MultiGPUJobs: 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Inspect:\n got %+v\nwant %+v", got, want)
	}
	var sb strings.Builder
	if err := got.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"jobs", "gpu-hours", "duration p50", "bert", "0 of 1 multi-GPU (0.0%)"} {
		if !strings.Contains(sb.String(), s) {
			t.Errorf("WriteText output lacks %q:\n%s", s, sb.String())
		}
	}
	p := Inspect(&Workload{Jobs: []Job{{Name: "x", GPUs: 1, Model: "ncf"}}})
	if p.HasDurations {
		t.Error("HasDurations with no durations")
	}
}

// BenchmarkDecodePhilly measures decoding the 82k-row Philly trace
// (compare runs with benchstat).
func BenchmarkDecodePhilly(b *testing.B) {
	data := readTrace(b, "philly/pollux_philly.csv.gz")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(FormatPhilly, data, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(82247, "jobs/op")
}
