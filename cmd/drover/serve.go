package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/drover-sched/drover/serve/daemon"
)

// runServe is `drover serve`: the gRPC policy server (serve/daemon.Run)
// until SIGTERM or SIGINT.
func runServe(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	c := daemon.Defaults()
	serveFlags(fs, &c)
	gogc := fs.Int("gogc", 100, "the garbage collector's GOGC percentage (Go's default): a Place leaves about 5 KB of garbage, most of it grpc-go's, so at 10k Place/s the collector runs every 50 ms and 100 costs no measurable CPU against 400, and keeps the RSS 12 (log off) to 22 MiB (log on) lower (docs/results/serving.md); when not given, a GOGC environment variable wins")
	memLimit := fs.Int("memlimit-mib", 48, "soft limit of the Go heap and runtime, in MiB (debug.SetMemoryLimit): past it the collector runs more often than -gogc says, so -gogc's headroom does not grow the RSS (95 -> 77 MiB at 10k Place/s with -log-dir, docs/results/serving.md); raised to twice the live heap plus 16 MiB while the live state needs more, since a limit under that keeps the collector running without pause; 0: none; when not given, a GOMEMLIMIT environment variable wins")
	rf := defineRouteFlags(fs)
	mf := defineMMFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := rf.setRoute(&c, stderr); err != nil {
		return err
	}
	if err := mf.setMM(fs, &c, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "drover serve: unexpected arguments %q\n", fs.Args())
		return errUsage
	}
	if err := checkServeFlags(fs, c); err != nil {
		return err
	}
	setGC(fs, *gogc, *memLimit)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	c.Out = stdout
	return daemon.Run(ctx, c)
}

// serveFlags defines drover serve's flags over c, whose values are their
// defaults.
func serveFlags(fs *flag.FlagSet, c *daemon.Config) {
	fs.StringVar(&c.Addr, "addr", c.Addr, "gRPC listen address; a port alone (:50051) binds 127.0.0.1, as for every listen address here: name the host (0.0.0.0:50051) to serve other hosts")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", c.MetricsAddr, "Prometheus /metrics listen address (empty: none): plain HTTP with no authentication and no TLS (-token-file and -tls-* do not apply), so keep it on loopback or a network only the scraper reaches")
	fs.StringVar(&c.PlaceAddr, "place-addr", c.PlaceAddr, "fast listen address for the hot unary calls (Place, Report, Status, Route, RouteMM, Scale, the health check): a lean HTTP/2 gRPC endpoint that costs less CPU per call and has a shorter latency tail than -addr's, with the same TLS, token, size limit and metrics; it answers each connection's calls one at a time (open more connections for parallel calls) and serves no streams; a port alone binds 127.0.0.1 (empty: none; see docs/results/serving.md)")
	fs.StringVar(&c.ExtenderAddr, "extender-addr", c.ExtenderAddr, "kube-scheduler extender (POST /filter, /prioritize) listen address; a port alone binds 127.0.0.1 (empty: none; see docs/kube-scheduler-extender.md)")
	fs.StringVar(&c.TLSCert, "tls-cert", c.TLSCert, "TLS certificate (PEM); with -tls-key serves TLS (gRPC and the extender)")
	fs.StringVar(&c.TLSKey, "tls-key", c.TLSKey, "TLS private key (PEM)")
	fs.StringVar(&c.TLSClientCA, "tls-client-ca", c.TLSClientCA, "CA (PEM) that client certificates must be signed by (mTLS, gRPC and the extender)")
	fs.StringVar(&c.TokenFile, "token-file", c.TokenFile, "file holding the bearer token every gRPC call must carry; without -tls-cert the token travels in plaintext, so it is refused unless -addr is a loopback address (127.0.0.1, ::1, localhost), where it is accepted with a warning")
	fs.StringVar(&c.Checkpoints, "checkpoints", c.Checkpoints, "checkpoint directory: numbered versions (0001, 0002, ...) watched for hot reload, or one checkpoint; a placement/sync checkpoint answers when it says converged, a strn-rl/sas-rl one (policies/direct) runs in shadow beside the heuristic and answers as -switch says (default: the embedded pretrained placement policy, not converged, so the heuristic answers)")
	fs.StringVar(&c.Heuristic, "heuristic", c.Heuristic, "fallback heuristic (a policies/builtin name)")
	fs.Float64Var(&c.Canary, "canary", c.Canary, "share of jobs routed to a new converged version before it is promoted, in [0, 1)")
	fs.IntVar(&c.PromoteAfter, "promote-after", c.PromoteAfter, "learned canary answers before the candidate is promoted (0: never)")
	fs.DurationVar(&c.Margin, "deadline-margin", c.Margin, "time before a request's deadline by which the learned policy must answer")
	fs.DurationVar(&c.ModelTimeout, "model-timeout", c.ModelTimeout, "the learned policy's time limit without a request deadline")
	fs.DurationVar(&c.Poll, "poll", c.Poll, "checkpoint directory polling interval")
	fs.IntVar(&c.MaxRequestBytes, "max-request-bytes", c.MaxRequestBytes, "largest request accepted, in bytes")
	fs.IntVar(&c.MaxConnsPerPeer, "max-conns-per-peer", c.MaxConnsPerPeer, "most connections one client address (IPv4, or IPv6 /64) may hold on each listener; more are refused and counted in drover_connections_refused_total (0: 256 on -addr, 64 on -place-addr, 32 on -extender-addr and -metrics-addr; negative: no per-peer limit, for clients behind one proxy or NAT address)")
	fs.IntVar(&c.ShedAbove, "shed-above", c.ShedAbove, "concurrent Place requests above which the cheap first-fit heuristic answers (0: off)")
	fs.IntVar(&c.MaxInFlight, "max-inflight", c.MaxInFlight, "concurrent Place requests above which Place answers ResourceExhausted (0: off)")
	fs.StringVar(&c.LogDir, "log-dir", c.LogDir, "append every decision and reported outcome to Parquet files in this directory (datasets/declog), and the agents' telemetry (datasets/telemlog); read with drover eval --log DIR")
	fs.DurationVar(&c.LogSeal, "log-seal", c.LogSeal, "with -log-dir: seal the current log file this often (a crash loses at most this much)")
	fs.StringVar(&c.Switch.Mode, "switch", c.Switch.Mode, "how a strn-rl/sas-rl checkpoint is served: gate (in shadow until the gate passes on a replay of the served arrivals, then answering until the live gate fails), shadow (never answers; the gate is only reported) or converged (answers when the checkpoint says converged)")
	fs.IntVar(&c.Switch.Every, "gate-every", c.Switch.Every, "evaluate the gate after this many new arrivals (distinct job ids; negative: never by count)")
	fs.DurationVar(&c.Switch.Interval, "gate-interval", c.Switch.Interval, "also evaluate the gate when this long has passed without an evaluation (0: never by time)")
	fs.IntVar(&c.Switch.MinArrivals, "gate-min-arrivals", c.Switch.MinArrivals, "arrivals needed before the gate is evaluated")
	fs.IntVar(&c.Switch.Window, "gate-window", c.Switch.Window, "the gate replays this many most recent arrivals")
	fs.IntVar(&c.Switch.Seeds, "gate-seeds", c.Switch.Seeds, "replay seeds, one paired episode each (>= 2)")
	fs.Float64Var(&c.Switch.Margin, "gate-margin", c.Switch.Margin, "relative gain (TTA per target reached: the avg TTA when every job reaches its target; or JCT with -gate-metric jct) the learned policy must show at 95% confidence to answer")
	fs.Float64Var(&c.Switch.BackMargin, "gate-back-margin", c.Switch.BackMargin, "switch back to the heuristic when the gain's lower confidence bound falls to this or below (must be below -gate-margin)")
	fs.StringVar(&c.Switch.Metric, "gate-metric", c.Switch.Metric, "replay cost the gate compares: tta or jct")
	fs.BoolVar(&c.Stateless, "stateless", c.Stateless, "answer from each request alone: no telemetry service, no live state, STRN with constant sensitivities and BSP (the fast path)")
	fs.StringVar(&c.StateDir, "state-dir", c.StateDir, "keep the live state (node telemetry history, jobs' measured iterations and profiles) in DIR/state.json: restored at start, saved atomically every -state-every and at shutdown (empty: in memory only)")
	fs.DurationVar(&c.StateEvery, "state-every", c.StateEvery, "with -state-dir: save the live state this often")
	fs.DurationVar(&c.StaleAfter, "stale-after", c.StaleAfter, "a node whose agent sent nothing for this long is stale and avoided")
	fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", c.ShutdownGrace, "time to finish calls in progress on SIGTERM")
	fs.IntVar(&c.MaxWork, "max-work", c.MaxWork, "largest Place request's work, its nodes times its job's workers: the heuristic's time grows with it (a request at the default takes 5-25 ms of CPU), and a larger one is refused with InvalidArgument")
	fs.IntVar(&c.Live.MaxNodes, "live-max-nodes", c.Live.MaxNodes, "most nodes the live state tracks: a new node's agent beyond it takes the place of the node silent the longest, if that one is stale, else it is refused")
	fs.IntVar(&c.Live.MaxJobs, "live-max-jobs", c.Live.MaxJobs, "most jobs the live state tracks; the least recently reported (finished ones first) makes room for a new one")
	fs.IntVar(&c.Live.MaxJobsPerNode, "live-max-jobs-per-node", c.Live.MaxJobsPerNode, "most jobs the iteration reports through one node's agent may create; that node's least recently reported makes room for a new one")
	fs.IntVar(&c.Live.MaxJobWorkers, "live-max-job-workers", c.Live.MaxJobWorkers, "most workers of one job whose iteration times the live state keeps")
	fs.IntVar(&c.Live.MaxIterationTimes, "live-max-iteration-times", c.Live.MaxIterationTimes, "most iteration times the live state keeps over all jobs (8 bytes each); the least recently reported jobs make room")
}

// setGC applies -gogc and -memlimit-mib: given, or when the GOGC and
// GOMEMLIMIT environment variables are not set.
func setGC(fs *flag.FlagSet, gogc, memLimit int) {
	gogcSet, memSet := false, false
	fs.Visit(func(f *flag.Flag) {
		gogcSet = gogcSet || f.Name == "gogc"
		memSet = memSet || f.Name == "memlimit-mib"
	})
	if gogcSet || os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gogc)
	}
	if (memSet || os.Getenv("GOMEMLIMIT") == "") && memLimit > 0 {
		debug.SetMemoryLimit(int64(memLimit) << 20)
	}
}

// checkServeFlags checks what relates two of drover serve's flags (each
// flag's own range is its rule in numRules, checked by parse), naming
// the flag the user gave: the library's message names its config fields,
// and named -gate-back-margin when only -gate-margin was given.
func checkServeFlags(fs *flag.FlagSet, c daemon.Config) error {
	sw := c.Switch
	switch {
	case sw.Window < sw.MinArrivals && isSet(fs, "gate-window"):
		return fmt.Errorf("-gate-window %d: want at least -gate-min-arrivals (%d)", sw.Window, sw.MinArrivals)
	case sw.Window < sw.MinArrivals:
		return fmt.Errorf("-gate-min-arrivals %d: want at most -gate-window (%d)", sw.MinArrivals, sw.Window)
	case !(sw.BackMargin < sw.Margin) && isSet(fs, "gate-back-margin"):
		return fmt.Errorf("-gate-back-margin %v: want below -gate-margin (%v)", sw.BackMargin, sw.Margin)
	case !(sw.BackMargin < sw.Margin):
		return fmt.Errorf("-gate-margin %v: want above -gate-back-margin (%v)", sw.Margin, sw.BackMargin)
	}
	return nil
}
