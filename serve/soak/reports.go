package soak

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	pb "github.com/drover-sched/drover/serve/proto"
)

// reporter sends the Reports of jobs distinct jobs (ids prefix-0,
// prefix-1, ...) spread evenly over span, job i due at i·span/jobs: a
// Report of its start on workers nodes and workers x iterations
// iteration times, then (for three jobs in four; the fourth never
// finishes, as a scheduler that loses track of a job) a Report of its
// end. At most slots jobs are reported at once; a job whose Reports all
// were accepted counts in reported.
type reporter struct {
	conn        grpc.ClientConnInterface
	prefix      string
	jobs        int
	span        time.Duration
	workers     int
	iterations  int
	nodes       int
	slots       int
	reported    atomic.Uint64
	errors      atomic.Uint64
	lastErrorMu sync.Mutex
	lastError   string
}

// run reports the jobs until they are done or ctx ends, then waits for
// the Reports in flight.
func (r *reporter) run(ctx context.Context) {
	client := pb.NewSchedulerClient(r.conn)
	sem := make(chan struct{}, r.slots)
	var wg sync.WaitGroup
	defer wg.Wait()
	start := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for i := range r.jobs {
		timer.Reset(time.Until(start.Add(time.Duration(int64(r.span) * int64(i) / int64(r.jobs)))))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		select {
		case <-ctx.Done():
			return
		case sem <- struct{}{}:
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := r.job(client, i); err != nil {
				r.errors.Add(1)
				r.lastErrorMu.Lock()
				r.lastError = err.Error()
				r.lastErrorMu.Unlock()
				return
			}
			r.reported.Add(1)
		})
	}
}

// job sends job i's Reports.
func (r *reporter) job(client pb.SchedulerClient, i int) error {
	for _, req := range jobReports(fmt.Sprintf("%s-%d", r.prefix, i), i, r.workers, r.iterations, r.nodes) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := client.Report(ctx, req)
		cancel()
		if err != nil {
			return err
		}
		if int(resp.GetAccepted()) != len(req.GetOutcomes()) {
			return fmt.Errorf("Report: %d of %d outcomes accepted", resp.GetAccepted(), len(req.GetOutcomes()))
		}
	}
	return nil
}

// jobReports returns job i's Reports: its start and iteration times
// (times 0.100-0.106 s, a pattern of i, the worker and the iteration,
// no randomness), then its end unless i%4 == 3.
func jobReports(id string, i, workers, iterations, nodes int) []*pb.ReportRequest {
	started := &pb.Started{}
	for w := range workers {
		started.NodeIds = append(started.NodeIds, nodeID((i+w)%nodes))
	}
	first := &pb.ReportRequest{Outcomes: []*pb.Outcome{{JobId: id, Event: &pb.Outcome_Started{Started: started}}}}
	for w := range workers {
		secs := make([]float64, iterations)
		for k := range secs {
			secs[k] = 0.1 + 0.001*float64((i+w+k)%7)
		}
		first.Outcomes = append(first.Outcomes, &pb.Outcome{JobId: id,
			Event: &pb.Outcome_Iterations{Iterations: &pb.Iterations{Worker: int32(w), Seconds: secs}}})
	}
	if i%4 == 3 {
		return []*pb.ReportRequest{first}
	}
	done := &pb.ReportRequest{Outcomes: []*pb.Outcome{{JobId: id,
		Event: &pb.Outcome_Finished{Finished: &pb.Finished{Success: true, JctS: 600}}}}}
	return []*pb.ReportRequest{first, done}
}
