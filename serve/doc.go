// Package serve is Drover's policy server: a gRPC Scheduler service
// (serve/proto, package drover.v1) that answers placement and
// sync-strategy questions for a cluster scheduler, with a heuristic
// fallback, hot reload of learned policies, metrics and a decision log.
//
// The Core decides; it knows nothing of gRPC. For each Place request it
// validates every field (a *FieldError names the first bad one, e.g.
// "cluster.nodes[3].free_gpus: negative (-1)"; the service answers
// InvalidArgument), builds the cluster snapshot a policy sees (an
// env.View with the job as the only pending one and the nodes' reported
// utilisation as env.Telemetry), and asks:
//
//   - the learned policy (a checkpoint of `drover train --env placement`
//     or `--env sync`, behind the one-method Learned interface), with the
//     observation, mask and action decoding of env/placement's Encoder,
//     when its checkpoint says converged, the cluster has the shape it was
//     trained on, and it answers before the request's deadline minus a
//     margin (WithDeadlineMargin) and within WithModelTimeout;
//   - otherwise the heuristic (policies/strn by default, WithHeuristic),
//     and under overload the cheap first-fit heuristic (WithLoadShedding).
//
// Every answer names the policy ("learned@v3", "heuristic:strn") and why
// ("fallback: deadline", see the Fallback* reasons), and every decision
// and reported outcome goes to the Sink (a Parquet decision log lives in
// its own package; MemorySink is for tests).
//
// A Watcher polls a directory of numbered checkpoint versions and swaps a
// validated new version in atomically; corrupt or unconverged versions are
// refused while the old one keeps serving; WithCanary routes a fixed,
// deterministic share of jobs to a candidate version.
//
// Server wraps a Core in a grpc.Server with the health service, server
// reflection (grpcurl works), Prometheus request metrics (Metrics, served
// on a separate HTTP listener), optional TLS/mTLS (LoadTLS) and bearer
// token (BearerToken on the client), and Shutdown: health NOT_SERVING,
// GracefulStop, then Core.Close, which flushes and closes the sink.
// `drover serve` binds 127.0.0.1:50051 by default.
//
// # Usage
//
// The server's main loop, as cmd/drover/serve.go runs it:
//
//	metrics := serve.NewMetrics()
//	core, _ := serve.NewCore(serve.WithSink(sink), serve.WithMetrics(metrics))
//	w, _ := serve.NewWatcher(checkpointDir, core, 2*time.Second)
//	go w.Run(ctx)
//	srv, _ := serve.NewServer(core, serve.ServerConfig{Metrics: metrics})
//	lis, _ := net.Listen("tcp", "127.0.0.1:50051")
//	go srv.Serve(lis)
//	<-sigterm
//	srv.Shutdown(ctx) // GracefulStop, then flush and close the sink
//
// A client (see Example):
//
//	conn, _ := grpc.NewClient("127.0.0.1:50051", grpc.WithTransportCredentials(insecure.NewCredentials()))
//	c := pb.NewSchedulerClient(conn)
//	ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
//	resp, err := c.Place(ctx, &pb.PlaceRequest{Job: job, Cluster: cluster})
//
// # Load test
//
// With `go install github.com/bojand/ghz/cmd/ghz@v0.120.0` and a server
// started by `drover serve`, 10k Place/s for a 64-node cluster on loopback
// (the request is written by `drover place -nodes 64 -print-request`):
//
//	drover place -nodes 64 -workers 8 -print-request > /tmp/place64.json
//	ghz --insecure --proto serve/proto/drover.proto --call drover.v1.Scheduler.Place \
//		-D /tmp/place64.json --rps 10000 -c 50 -n 200000 127.0.0.1:50051
//
// and 10x overload with --rps 100000 -n 1000000. Measured numbers are in
// docs/results/serving.md.
package serve
