package serve_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/datasets/telemlog"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// Decisions and outcomes reach the Parquet log and read back after the
// core closes.
func TestLogSink(t *testing.T) {
	dir := t.TempDir()
	w, err := declog.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	k, err := serve.NewCore(serve.WithSink(serve.NewLogSink(w)))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	const submitted = 1_796_000_000_123_456_789 // the third request's Job.submit_unix_nanos
	for i := range 3 {
		req := makeRequest(16, 4, 2)
		if i == 2 {
			req.Job.SubmitUnixNanos = submitted
		}
		resp, err := k.Place(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.DecisionId)
	}
	if _, err := k.Report(context.Background(), &pb.ReportRequest{Outcomes: []*pb.Outcome{
		{JobId: "j", DecisionId: ids[0], Event: &pb.Outcome_Iterations{Iterations: &pb.Iterations{Seconds: []float64{1.5, 2}}}},
		{JobId: "j", DecisionId: ids[0], Event: &pb.Outcome_Finished{Finished: &pb.Finished{Success: true, JctS: 60}}},
	}}); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	log, err := declog.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Records) != 5 {
		t.Fatalf("%d records, want 5", len(log.Records))
	}
	for i, r := range log.Records[:3] {
		d := r.Decision
		if r.Kind != declog.KindDecision || d.RequestID != ids[i] || d.Source != "heuristic:strn" || d.Fallback != serve.FallbackNoModel || len(d.Workers) != 2 || d.Sync == "" {
			t.Errorf("decision %d: %+v", i, r)
		}
		// The job as makeRequest asks for it: imagenet, 2 workers, ring
		// (unspecified), default batch size, 7200 s expected.
		if d.JobModel != "imagenet" || d.JobGPUs != 2 || d.JobArch != "ring" || d.JobBatchSize != 0 || d.JobExpectedDuration != 7200 {
			t.Errorf("decision %d: job %q, %d GPUs, %q, batch %d, %v s; want imagenet, 2, ring, 0, 7200", i, d.JobModel, d.JobGPUs, d.JobArch, d.JobBatchSize, d.JobExpectedDuration)
		}
		// Job.submit_unix_nanos becomes job_submit_unix_nanos; unset, unknown.
		want := time.Time{}
		if i == 2 {
			want = time.Unix(0, submitted)
		}
		if !d.JobSubmitted.Equal(want) {
			t.Errorf("decision %d: submitted %v, want %v", i, d.JobSubmitted, want)
		}
	}
	it, fin := log.Records[3].Outcome, log.Records[4].Outcome
	if it.Kind != declog.Iteration || len(it.IterationTimes) != 2 || it.IterationTimes[1] != 2 || fin.Kind != declog.Finished || fin.JCT != 60 || fin.RequestID != ids[0] {
		t.Errorf("outcomes %+v, %+v", it, fin)
	}
}

// TestLogDroppedMetric: drover_log_dropped_total{log} reports each log's
// Dropped at scrape time, one series per log given.
func TestLogDroppedMetric(t *testing.T) {
	dir := t.TempDir()
	w, err := declog.NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	sink := serve.NewLogSink(w)
	tw, err := telemlog.NewWriter(dir, telemlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := serve.NewMetrics()
	if err := m.RegisterLogs(sink, tw); err != nil {
		t.Fatal(err)
	}
	if err := sink.Record(&serve.DecisionRecord{ID: "d1", JobID: "j", At: time.Unix(1e9, 0)}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "drover_log_dropped_total" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			for _, lp := range mt.GetLabel() {
				if lp.GetName() == "log" {
					got[lp.GetValue()] = mt.GetCounter().GetValue()
				}
			}
		}
	}
	want := map[string]float64{"decisions": float64(sink.Dropped()), "telemetry": float64(tw.Dropped())}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("drover_log_dropped_total (-want,+got):\n%s", diff)
	}
	// A server without a telemetry log registers the decisions' series only.
	if err := serve.NewMetrics().RegisterLogs(sink, nil); err != nil {
		t.Error(err)
	}
}

// BenchmarkPlaceLogged measures Place's latency with the decision log on
// (issue 18: row groups encoded on the caller's goroutine made 0.5% of
// Place calls exceed 10 ms at 1k/s): goroutines call Place at a fixed
// total rate, and it reports the fraction of calls over 1 ms and over
// 10 ms and the slowest call.
//
//	go test ./serve -run '^$' -bench PlaceLogged -benchtime 40000x
func BenchmarkPlaceLogged(b *testing.B) {
	const writers, rate = 4, 4000.0 // calls per second, all goroutines together
	w, err := declog.NewWriter(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	k, err := serve.NewCore(serve.WithSink(serve.NewLogSink(w)))
	if err != nil {
		b.Fatal(err)
	}
	req := makeRequest(64, 8, 4)
	period := time.Duration(float64(time.Second) * writers / rate)
	each := b.N/writers + 1
	var over1ms, over10ms, calls atomic.Int64
	var slowest atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				if d := time.Until(start.Add(time.Duration(i)*period + time.Duration(g)*period/writers)); d > 0 {
					time.Sleep(d)
				}
				t0 := time.Now()
				if _, err := k.Place(context.Background(), req); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(t0)
				calls.Add(1)
				if d > time.Millisecond {
					over1ms.Add(1)
				}
				if d > 10*time.Millisecond {
					over10ms.Add(1)
				}
				for s := slowest.Load(); int64(d) > s && !slowest.CompareAndSwap(s, int64(d)); s = slowest.Load() {
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err := k.Close(); err != nil {
		b.Fatal(err)
	}
	n := float64(calls.Load())
	b.ReportMetric(100*float64(over1ms.Load())/n, "%>1ms")
	b.ReportMetric(100*float64(over10ms.Load())/n, "%>10ms")
	b.ReportMetric(float64(slowest.Load()), "max-ns")
}
