// Package loadgen is an open-loop load generator for a unary gRPC method,
// and the latency histogram it reports with; `drover bench place` drives
// a drover server's Place with it.
//
// Open loop: request i is due at the start plus i/Rate whatever happened
// to the requests before it, and its latency is measured from the time it
// was due, not the time it was sent. A closed-loop client (send, wait,
// send) sends less while the server stalls and so never measures the
// requests that would have queued behind the stall ("coordinated
// omission"); here a request that finds every in-flight slot busy, or a
// generator that wakes late, waits, and the wait counts. The request is
// encoded once and its bytes sent as they are, and answers are not
// decoded. Result reports the generator's CPU (ClientCPU) beside Lag, the
// lateness of the sends, so a report shows whether the client limited
// the measurement.
//
// Two clients carry the calls. Config.Conns are grpc-go connections, one
// goroutine per in-flight slot (a pass-through codec skips protobuf), so
// the generator's CPU per request is mostly grpc-go's own: 60-90 us on
// the project's 2-core VM, as much as the server it measures. Config.H2
// are the lean client's connections (NewH2Conn): one goroutine keeps the
// schedule and writes each call as one HEADERS frame, whose header block
// is encoded once without HPACK's dynamic table, and the message's DATA
// frames; one reader per connection decodes only the answers' header
// blocks (for grpc-status), answers PING and SETTINGS and returns flow
// control window. It speaks only what a gRPC unary call needs (no
// compression, no retries, messages within the server's 64 KiB window)
// and resets, and counts DeadlineExceeded, calls unanswered a second past
// their deadline. Against the same server its sends are on time (send
// lag p99 0.12-0.17 ms against grpc-go's 1.4-1.7 ms at 10k/s) and the
// floor it measures is half as high; its CPU per request is only 10-20%
// lower, because on that VM most of it is the kernel's (loopback TCP,
// wake-ups, the paravirtualised interrupt enable), which any client pays
// (docs/results/serving.md).
//
// Histogram is HdrHistogram's idea at two significant digits: log-spaced
// buckets with 0.78% relative precision, fixed memory, and Merge, so each
// in-flight slot records into its own and the report merges them.
//
// ProcWatch reads another process's CPU time and RSS from /proc (the
// server, when it runs on the same machine), for its CPU per request.
//
// # Usage
//
//	payload, _ := proto.Marshal(req)
//	res, err := loadgen.Run(ctx, loadgen.Config{
//		Conns:  []grpc.ClientConnInterface{conn1, conn2},
//		Method: pb.Scheduler_Place_FullMethodName, Payload: payload,
//		Rate:   10000, N: 100000, Concurrency: 64, Timeout: 5 * time.Second,
//	})
//	s := res.Latency.Summary() // p50, p90, p99, p99.9, max in ms
//	fmt.Println(res.Achieved(), s.P99, res.ClientCPUPerRequest())
package loadgen
