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
// # Learned policies that act on the cluster view: shadow and the gate
//
// A checkpoint of strn-rl or sas-rl (policies/direct) is a whole
// policies.Policy, like a heuristic. Core.LoadVersion reads it through
// the PolicyLoader given by WithPolicyLoader (choosing by the Env its
// meta.json names; the Watcher does the same), and the server builds a
// fresh instance per decision. While it is active, every Place is decided
// twice on the same snapshot view: by the heuristic and, on a goroutine
// of its own within the deadline budget, by the learned policy. One of
// them answers and the other is the shadow decision; both go to the
// decision record (DecisionRecord.Shadow*, declog's shadow columns). The
// shadow policy's failures (deadline, error, panic, infeasible) are
// counted (Status.shadow, drover_shadow_decisions_total) and never touch
// the answer; when the learned policy answers and fails, the heuristic's
// decision, already made, answers instead.
//
// Which one answers is the switch (WithSwitch, SwitchConfig): in the
// default gate mode the heuristic answers ("fallback: shadow") until
// policies/gate passes on evidence from this deployment, and a new version
// starts in shadow again. The evidence is a replay, not the reported
// outcomes: the jobs of the last Window Place requests (each job id once,
// at its arrival offsets, its run time from Report's start and finish, or
// the request's expected duration) are replayed through env/trace on a
// cluster of the requests' nodes, under the per-worker straggler model,
// once per seed under the heuristic and once under the learned policy,
// and the paired costs (avg TTA by default, as seconds trained per target
// reached: env.Summary.TTAPerTarget) go to policies/gate. Reported
// outcomes alone cannot be the gate's evidence: they exist only for the
// policy that answered, so the learned policy's outcomes would be
// compared with the heuristic's from another time and load, unpaired and
// confounded; the replay gives both policies the same jobs, cluster and
// straggler draws. The learned policy's teacher (policies/direct.TeacherOf:
// strn for strn-rl, sas+strn-sync for sas-rl) is replayed on the same
// seeds too, and its comparison is reported beside the verdict
// (gate.Report; SwitchStatus.Report, gate_verdict,
// drover_gate_teacher_mean_gain): it does not decide the switch, but says
// when the learned policy's gain over the heuristic is its teacher's.
// After the switch the same gate, on the arrivals since,
// is the live check: it switches back when the lower confidence bound of
// the gain falls to BackMargin (default 0) or the learned policy's replay
// fails; between BackMargin and Margin the answer stays as it is. The
// evaluation runs off the request path (Core.RunSwitch: after every N new
// arrivals and/or on a timer of the core's Clock; Core.EvaluateSwitch
// runs one now). Status (active_policy, shadow_policy,
// active_since_unix_nanos, switch_reason, gate_verdict) and the metrics
// (drover_learned_answering, drover_answering_since_seconds,
// drover_policy_switches_total, drover_gate_*) say which one answers,
// since when and why. SwitchShadow never switches (the gate is only
// reported); SwitchConverged answers on the checkpoint's own verdict.
//
// # Routing inference requests
//
// Route answers where an arriving LLM inference request runs in a
// disaggregated deployment (issue 34): the client lists its instances
// (role, GPU type, TP, pending tokens, reserved, used and total memory,
// queued and running tasks) and the request's prompt and output tokens;
// the answer names the prefill instance, the decode instance and the KV
// cache's format. WithRouter configures it: HACK's router
// (policies/pdrl.HACK) answers, and a learned pd-rl router decides every
// request beside it in shadow until it is promoted, which RouteConfig.Mode
// decides as SwitchConfig.Mode does for placement: SwitchGate (the
// default when the deployment is given, RouteConfig.Replay) replays the
// recent routed requests on the deployment under both routers, cut into
// paired episodes, and promotes the learned router when gate.Judge says it
// beats HACK by the margin with confidence (and demotes it when the lower
// bound falls to the back margin; EvaluateRoute, run by RunSwitch);
// SwitchConverged (the default without a deployment) takes the
// checkpoint's training verdict (train/pdrl.Judge; RouteConfig.Converged);
// SwitchShadow never promotes. HACK answers too whenever the learned one
// fails. Both decide on the state the request lists, so a trace replayed
// through Route gives the simulation routing it locally gives
// (TestRouteEndToEnd). Every answer goes to the sink as a RouteRecord;
// the Parquet log stores it as a decision (the request as the job, the
// two instances as the workers, the format as the sync column), and a
// LogSink with a route log (WithRoutes, serve/routelog; drover serve
// -log-dir writes DIR/routes.jsonl) stores it in full: the request, the
// instances' states, the answer, who gave it and the shadow decision,
// which `drover eval --log DIR/routes.jsonl` re-scores (TestRouteLogReplay:
// under the logged answers the replay meets every logged state). Route is
// served on both listeners (Serve and ServeFast).
//
// # Multimodal serving
//
// RouteMM and Scale serve a multimodal deployment (issue 35, ModServe;
// WithMM). RouteMM takes an arriving request (images, text and output
// tokens, arrival) and the deployment's image and text (or monolithic)
// instances with their pending work, and answers the image instance of
// each image, the text instance and the request's queue priority, by
// policies/modserve's router on the view env/infer/mm would give it
// (MMConfig.Base: model, GPU, TP, image limit), so a simulated deployment
// routed through the server (RemoteMMRouter) runs as it does routed
// locally (TestRouteMMEndToEnd). A request may list only some of the
// deployment's instances, numbered, with how many it has started
// (deployed): RemoteMMRouter sends the live ones (an autoscaled week
// starts thousands of instances; its pools hold tens), and the answers
// are the ones every instance would get, the round robin counting the
// gone ones by number (TestRouteMMAutoscaled). Scale takes what the deployment saw over
// its last monitoring window or scaling period (policies/mmscale's Window:
// load, SLO attainment, pending work) and its pool sizes, and answers the
// sizes for the next period by ModServe's autoscaler; a learned
// autoscaler (mm-rl, any mmscale.Scaler: MMConfig.Learned; an mm-rl
// checkpoint read by LoadMMRL, which rebuilds it and the rule it was
// judged against) decides beside it in shadow and answers once promoted:
// by its checkpoint's verdict (SwitchConverged), or by the live Scale
// gate (SwitchGate: the requests RouteMM routed over the recent hours
// replayed on the deployment under both autoscalers, cut into paired
// episodes, cost GPU-hours plus a penalty per missed request, gate.Judge
// as for the route gate; EvaluateScale, run by RunSwitch after
// MMConfig.GateEvery period-end calls); SwitchShadow never promotes.
// ModServe's rule answers whenever the learned one fails. One server answers one deployment's Scale
// calls, in order: the autoscalers keep state across calls. A day asked
// of the server every minute and every 5 minutes (RemoteScaler) gives the
// local autoscaler's pool sizes and GPU-hours (TestScaleEndToEnd). Every
// answer goes to the sink as a ScaleRecord or an MMRouteRecord, which a
// LogSink with multimodal logs (WithMM, serve/mmlog) writes to
// DIR/scales.jsonl and DIR/mmroutes.jsonl (docs/format/mm-log.md). Both
// are served on both listeners (TestFastMM).
//
// A Watcher polls a directory of numbered checkpoint versions and swaps a
// validated new version in atomically; corrupt or unconverged versions are
// refused (and logged once, with the reason) while the old one keeps
// serving; at start, the newest converged version answers if there is
// one, else the newest valid one. WithCanary routes a fixed,
// deterministic share of jobs to a candidate version.
//
// # What the server links
//
// The server reaches learned networks only through interfaces it owns:
// Learned for an observation-level checkpoint, and policies.Policy, built
// by the PolicyLoader the caller wires in (serve/daemon passes
// policies/direct.Load), for a view-level one. It judges with
// policies/gate, which imports only the standard library. It links no
// learner and no trainer: go list -deps ./serve names no agents/ppo,
// agents/dqn, train, env/cartpole or gonum.org/v1/plot package
// (internal/importrules checks it). It does link agents/nn, for the
// forward pass alone: checkpoints decodes a checkpoint's weights into an
// nn.MLP and checks its probe with it, and MLPPolicy runs it, bit for bit
// the trained network's forward pass. Dropping it needs checkpoints split
// into its metadata and an nn-bound weight loader, which the caller would
// wire in as it wires the PolicyLoader.
//
// # The live state
//
// WithState makes the core stateful over a serve/state.Store, which the
// Telemetry service (registered by NewServer on a stateful core) fills
// from `drover agent`s and Report fills with jobs' iteration times. A
// node's load in a request is then its agent's latest sample, a stale
// node (its agent silent for the store's StaleAfter) gets no free GPUs,
// STRN profiles each job by probes of a per-worker model whose jitter
// and load response are the job's measured ones (live.go: liveProber;
// probed sensitivities of unmeasured jobs are cached by spec and
// cluster size), and SAS is one policy kept across requests, fed the
// agents' history (its predictor and groups). Status.live and the
// drover_live_* gauges describe the state; TelemetryLog records the
// samples beside the decision log; LiveSource runs env/live over the
// state, so a policy trained in simulation acts on the live cluster.
// `drover serve` is stateful unless -stateless; the stateless core
// answers from each request alone (STRN's fast path, constant
// sensitivities, BSP).
//
// Server wraps a Core in a grpc.Server with the health service, server
// reflection (grpcurl works), Prometheus request metrics (Metrics, served
// on a separate HTTP listener), optional TLS/mTLS (LoadTLS) and bearer
// token (BearerToken on the client), and Shutdown: health NOT_SERVING,
// the agents' telemetry streams ended, GracefulStop, then Core.Close,
// which flushes and closes the sink.
// `drover serve` binds 127.0.0.1:50051 by default, and a port alone
// (":50051") binds loopback for every listener; a bearer token without
// TLS is refused off loopback, on the server and on the client
// (BearerToken sends it in plaintext to loopback only). A malformed
// request is InvalidArgument, never Internal (the codec keeps the decode
// error for the handler).
//
// # One request's work
//
// A request's work grows with its nodes times its job's workers: STRN's
// greedy pass scans every node for each node it picks (4,096 nodes x
// 4,096 workers took 1.5-9 s before its candidate set got a per-node
// mark; issue 32). Limits.MaxWork bounds that product (DefaultMaxWork,
// 2^22: a request at it takes 5-25 ms of CPU), and a request above it is
// refused naming both fields. The request's context reaches the
// heuristic's loops: the fast path polls ctx.Done() once per greedy
// pick, and a policy asked through an env.View gets it as View.Done
// (STRN per pick, env.Delegate and SAS per job); a cancelled or expired
// request stops and Place answers the context's error, recording
// nothing. Requests above SmallWork share a budget of work
// (WithHeavyWork; by default the bound times half the cores) and wait
// for it within their deadline, so eight large requests leave the other
// cores to the small ones (a small Place's mean latency beside eight
// requests at the bound: 35 ms unbounded, under 2 ms bounded, on two
// cores).
//
// # Connection limits
//
// A client that connects and does nothing must not lock the others out
// nor cost goroutines for good (issue 32: 3,000 idle gRPC connections
// held 9,000 goroutines and 50 MiB until shutdown; 1,100 preface-only
// connections held the fast listener's 1,024 slots for 5 minutes).
// Every listener `drover serve` opens has ConnLimits (ServerConfig.Conns
// for the gRPC port, FastConns for the fast one, LimitHTTP for the
// extender's and the metrics' HTTP ports, whose http.Servers bound
// headers, bodies, writes and idle time): at most MaxConns connections
// (gRPC 8,192, fast 1,024, HTTP 128) and MaxConnsPerPeer from one IPv4
// address or IPv6 /64 (256, 64, 32), refused as they are accepted and
// counted in drover_connections_refused_total{listener, reason} (the
// fast listener, when full, first closes the connection that has been
// in its handshake the longest to make room, and the HTTP ones the
// connection the longest without a complete request, counted in
// drover_connections_closed_total{reason="evicted"}); a
// handshake (TLS, preface, settings) within HandshakeTimeout (5 s); an
// idle connection closed with GOAWAY after IdleTimeout (5 min; gRPC: no
// call or stream in progress, grpc-go's MaxConnectionIdle; agents'
// telemetry streams keep theirs open). On the gRPC port a connection
// has at most MaxStreams (256) calls and streams at once, the server
// pings a peer silent for 2 minutes and drops it 20 s later, and a
// client that pings more often than every 20 s is closed
// (too_many_pings). The per-peer limit is what a single hostile or
// broken client meets; one with many addresses meets the evictions
// (fast, extender, metrics) and the timeouts. The
// limiting listener is internal/connlimit; its doc says why it is not
// netutil.LimitListener.
//
// # The fast listener
//
// Server.ServeFast serves the hot unary calls (Place, Report, Status,
// Route and the health check) on a listener of its own (`drover serve
// -place-addr`) with the lean HTTP/2 gRPC endpoint of serve/fast instead
// of grpc-go's server. It shares the Core (through a fast.Backend that
// maps the Core's errors to the same status codes), the health status,
// the token, TLS (ALPN h2), the size limit and the metrics (listener
// label "fast") with the gRPC listener; Shutdown drains both. Both
// listeners decode Place requests with serve/fast's Codec. Package
// serve/fast's doc says what the endpoint costs and how its loop runs.
//
// # Usage
//
// The server's main loop, as serve/daemon.Run runs it for `drover serve`:
//
//	metrics := serve.NewMetrics()
//	core, _ := serve.NewCore(serve.WithSink(sink), serve.WithMetrics(metrics),
//		serve.WithPolicyLoader(direct.Load), serve.WithSwitch(serve.SwitchConfig{Every: 100}))
//	w, _ := serve.NewWatcher(checkpointDir, core, 2*time.Second)
//	go w.Run(ctx)
//	go core.RunSwitch(ctx) // the gate, off the request path
//	srv, _ := serve.NewServer(core, serve.ServerConfig{Metrics: metrics})
//	lis, _ := net.Listen("tcp", "127.0.0.1:50051")
//	go srv.Serve(lis)
//	fast, _ := net.Listen("tcp", "127.0.0.1:50052") // optional: -place-addr
//	go srv.ServeFast(fast)
//	<-sigterm
//	srv.Shutdown(ctx) // GracefulStop and GOAWAY, then flush and close the sink
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
// `drover bench place` is the open-loop load generator (pinned, with
// coordinated omission counted); scripts/bench_place.sh runs it against
// both listeners. With `go install github.com/bojand/ghz/cmd/ghz@v0.120.0` and a server
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
