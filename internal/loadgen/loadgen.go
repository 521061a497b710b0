package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"

	"github.com/drover-sched/drover/internal/cputime"
)

// Config says what Run sends, where and when.
type Config struct {
	// Conns are grpc-go connections; the in-flight slots are spread over
	// them round robin. Conns or H2 must hold at least one.
	Conns []grpc.ClientConnInterface
	// H2, when set, are the lean client's connections (NewH2Conn), used
	// instead of Conns: one goroutine keeps the schedule and sends on them
	// round robin, and each connection's reader records its answers, so
	// the generator costs a few system calls per request instead of a
	// grpc-go client call (Concurrency still bounds the requests in
	// flight). Each call's message must fit the server's stream window
	// (64 KiB for grpc-go servers).
	H2 []*H2Conn
	// Method is the full gRPC method name, e.g. "/drover.v1.Scheduler/Place".
	Method string
	// Payload is the request, already encoded in protobuf wire format: it
	// is sent as it is, with no marshalling per call.
	Payload []byte
	// Rate is the arrival rate in requests per second: request i is due at
	// the start plus i/Rate, whatever happened to the ones before it.
	Rate float64
	// N is the number of requests.
	N int
	// Concurrency is the number of in-flight slots (goroutines). A request
	// due while every slot is busy waits for one, and its wait counts in
	// its latency.
	Concurrency int
	// Timeout is each call's deadline (0: none).
	Timeout time.Duration
}

func (c Config) validate() error {
	switch {
	case len(c.Conns) == 0 && len(c.H2) == 0:
		return errors.New("loadgen: no connections")
	case len(c.Conns) > 0 && len(c.H2) > 0:
		return errors.New("loadgen: both grpc-go and h2 connections")
	case c.Method == "":
		return errors.New("loadgen: no method")
	case !(c.Rate > 0):
		return fmt.Errorf("loadgen: rate %g: want > 0", c.Rate)
	case c.N <= 0:
		return fmt.Errorf("loadgen: %d requests: want > 0", c.N)
	case c.Concurrency <= 0:
		return fmt.Errorf("loadgen: concurrency %d: want > 0", c.Concurrency)
	case c.Timeout < 0:
		return fmt.Errorf("loadgen: timeout %v: want >= 0", c.Timeout)
	}
	return nil
}

// Result is what one Run measured.
type Result struct {
	// Sent is the number of requests sent (N, unless the context ended
	// the run early).
	Sent uint64
	// OK is the number of successful answers.
	OK uint64
	// Errors counts the failed calls by gRPC code name ("Unavailable").
	Errors map[string]uint64
	// Latency holds the successful calls' latencies, each from the time
	// the request was due (not the time it was sent), so a request that
	// waited for a slot or for a late generator counts its wait
	// (coordinated omission).
	Latency *Histogram
	// Lag holds every sent request's lateness: the time it was sent minus
	// the time it was due. Its tail is the part of Latency that the
	// generator (its timer wake-ups and busy slots) adds.
	Lag *Histogram
	// Elapsed is the time from the start of the schedule to the last
	// answer.
	Elapsed time.Duration
	// ClientCPU is this process's CPU time (user plus system, every
	// goroutine's) during the run.
	ClientCPU time.Duration
}

// Achieved returns the achieved rate: answers (successful or not) per
// second of Elapsed.
func (r Result) Achieved() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	var done uint64 = r.OK
	for _, n := range r.Errors {
		done += n
	}
	return float64(done) / r.Elapsed.Seconds()
}

// ClientCPUPerRequest returns the generator's CPU time per sent request.
func (r Result) ClientCPUPerRequest() time.Duration {
	if r.Sent == 0 {
		return 0
	}
	return r.ClientCPU / time.Duration(r.Sent)
}

// answers counts calls' answers: the successful ones' latencies, the
// failed ones by gRPC code. Both clients keep their share in one.
type answers struct {
	latency *Histogram
	ok      uint64
	errors  [17]uint64 // by codes.Code; gRPC's codes are 0-16
}

func newAnswers() answers { return answers{latency: NewHistogram()} }

// record counts one answer: its latency when code is OK, else its code.
func (a *answers) record(code codes.Code, latency time.Duration) {
	if code == codes.OK {
		a.ok++
		a.latency.Record(latency)
		return
	}
	if int(code) >= len(a.errors) {
		code = codes.Unknown
	}
	a.errors[code]++
}

// addTo adds a's counts to res.
func (a *answers) addTo(res *Result) {
	res.Latency.Merge(a.latency)
	res.OK += a.ok
	for c, n := range a.errors {
		if n > 0 {
			res.Errors[codes.Code(c).String()] += n
		}
	}
}

// waitUntil sleeps on w until t; stopped reports that ctx ended first.
// It wakes at least every 50 ms to notice ctx's end.
func waitUntil(ctx context.Context, w *waiter, t time.Time) (stopped bool, err error) {
	for {
		if ctx.Err() != nil {
			return true, nil
		}
		d := time.Until(t)
		if d <= 0 {
			return false, nil
		}
		if err := w.wait(min(d, 50*time.Millisecond)); err != nil {
			return false, fmt.Errorf("loadgen: wait: %w", err)
		}
	}
}

// slot is one in-flight goroutine's share of the result.
type slot struct {
	answers
	lag  *Histogram
	sent uint64
	last time.Time
	err  error
}

// Run sends cfg.N requests on the open-loop schedule of cfg.Rate and
// measures each one's latency from the time it was due. It returns early,
// with what it measured, when ctx ends; the error is a configuration
// error, or one of the generator itself (a failed call is counted, not
// returned).
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	if len(cfg.H2) > 0 {
		return runH2(ctx, cfg)
	}
	slots := make([]*slot, cfg.Concurrency)
	waiters := make([]*waiter, cfg.Concurrency)
	for i := range slots {
		w, err := newWaiter()
		if err != nil {
			for _, w := range waiters[:i] {
				w.close()
			}
			return Result{}, err
		}
		waiters[i] = w
		slots[i] = &slot{answers: newAnswers(), lag: NewHistogram()}
	}
	var next atomic.Int64
	interval := 1e9 / cfg.Rate // nanoseconds
	cpu0 := cputime.Seconds()
	start := time.Now()
	var wg sync.WaitGroup
	for i, s := range slots {
		wg.Go(func() {
			defer waiters[i].close()
			s.err = s.run(ctx, cfg, cfg.Conns[i%len(cfg.Conns)], waiters[i], &next, start, interval)
		})
	}
	wg.Wait()
	cpu1 := cputime.Seconds()

	res := Result{Latency: NewHistogram(), Lag: NewHistogram(), Errors: map[string]uint64{},
		ClientCPU: time.Duration((cpu1 - cpu0) * 1e9)}
	var last time.Time
	var errs []error
	for _, s := range slots {
		s.addTo(&res)
		res.Lag.Merge(s.lag)
		res.Sent += s.sent
		if s.last.After(last) {
			last = s.last
		}
		errs = append(errs, s.err)
	}
	if !last.IsZero() {
		res.Elapsed = last.Sub(start)
	}
	return res, errors.Join(errs...)
}

// run is one in-flight slot: it takes the next request of the schedule,
// waits until it is due, sends it and records it, until the schedule or
// ctx ends.
func (s *slot) run(ctx context.Context, cfg Config, conn grpc.ClientConnInterface, w *waiter, next *atomic.Int64, start time.Time, interval float64) error {
	opts := []grpc.CallOption{grpc.ForceCodecV2(rawCodec{})}
	req := rawRequest(cfg.Payload)
	var reply rawReply
	for {
		i := next.Add(1) - 1
		if i >= int64(cfg.N) {
			return nil
		}
		due := start.Add(time.Duration(float64(i) * interval))
		if stopped, err := waitUntil(ctx, w, due); stopped || err != nil {
			return err
		}
		sent := time.Now()
		s.lag.Record(sent.Sub(due))
		s.sent++
		callCtx, cancel := ctx, context.CancelFunc(nil)
		if cfg.Timeout > 0 {
			callCtx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		}
		err := conn.Invoke(callCtx, cfg.Method, &req, &reply, opts...)
		end := time.Now()
		if cancel != nil {
			cancel()
		}
		s.last = end
		s.record(status.Code(err), end.Sub(due))
	}
}

// rawRequest is a request already in wire format.
type rawRequest []byte

// rawReply is an answer left undecoded; Bytes is its size.
type rawReply struct{ Bytes int }

// rawCodec sends a rawRequest's bytes as they are and leaves the answer
// undecoded, so the generator spends no CPU on protobuf. It calls itself
// "proto" so that the server decodes with its protobuf codec.
type rawCodec struct{}

var _ encoding.CodecV2 = rawCodec{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	r, ok := v.(*rawRequest)
	if !ok {
		return nil, fmt.Errorf("loadgen: cannot send %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(*r)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*rawReply)
	if !ok {
		return fmt.Errorf("loadgen: cannot decode into %T", v)
	}
	r.Bytes = data.Len()
	return nil
}
