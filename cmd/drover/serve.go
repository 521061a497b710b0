package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/datasets/telemlog"
	"github.com/drover-sched/drover/internal/pqlog"
	"github.com/drover-sched/drover/policies/direct"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/extender"
	"github.com/drover-sched/drover/serve/state"
)

// serveConfig is drover serve's configuration, from its flags.
type serveConfig struct {
	addr, metricsAddr            string
	placeAddr                    string
	extenderAddr                 string
	tlsCert, tlsKey, tlsClientCA string
	tokenFile                    string
	checkpoints                  string
	heuristic                    string
	canary                       float64
	promoteAfter                 int
	margin, modelTimeout, poll   time.Duration
	maxRequestBytes              int
	shedAbove, maxInFlight       int
	shutdownGrace                time.Duration
	logDir                       string
	logSeal                      time.Duration
	// The live state (serve/state): stateless answers from requests
	// alone; stateDir, when set, holds its snapshot, saved every
	// stateEvery and at shutdown.
	stateless  bool
	stateDir   string
	stateEvery time.Duration
	staleAfter time.Duration
	// sw is how a view-level learned checkpoint (strn-rl, sas-rl) is
	// served, and loader reads one (nil: policies/direct's Load).
	sw     serve.SwitchConfig
	loader serve.PolicyLoader
}

// runServe is `drover serve`: the gRPC policy server until SIGTERM or
// SIGINT.
func runServe(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	var c serveConfig
	fs.StringVar(&c.addr, "addr", "127.0.0.1:50051", "gRPC listen address; a port alone (:50051) binds 127.0.0.1, as for every listen address here: name the host (0.0.0.0:50051) to serve other hosts")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "127.0.0.1:9464", "Prometheus /metrics listen address (empty: none): plain HTTP with no authentication and no TLS (-token-file and -tls-* do not apply), so keep it on loopback or a network only the scraper reaches")
	fs.StringVar(&c.placeAddr, "place-addr", "", "fast listen address for the hot unary calls (Place, Report, Status, the health check): a lean HTTP/2 gRPC endpoint that costs less CPU per call and has a shorter latency tail than -addr's, with the same TLS, token, size limit and metrics; it answers each connection's calls one at a time (open more connections for parallel calls) and serves no streams; a port alone binds 127.0.0.1 (empty: none; see docs/results/serving.md)")
	fs.StringVar(&c.extenderAddr, "extender-addr", "", "kube-scheduler extender (POST /filter, /prioritize) listen address; a port alone binds 127.0.0.1 (empty: none; see docs/kube-scheduler-extender.md)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "TLS certificate (PEM); with -tls-key serves TLS (gRPC and the extender)")
	fs.StringVar(&c.tlsKey, "tls-key", "", "TLS private key (PEM)")
	fs.StringVar(&c.tlsClientCA, "tls-client-ca", "", "CA (PEM) that client certificates must be signed by (mTLS, gRPC and the extender)")
	fs.StringVar(&c.tokenFile, "token-file", "", "file holding the bearer token every gRPC call must carry; without -tls-cert the token travels in plaintext, so it is refused unless -addr is a loopback address (127.0.0.1, ::1, localhost), where it is accepted with a warning")
	fs.StringVar(&c.checkpoints, "checkpoints", "", "checkpoint directory: numbered versions (0001, 0002, ...) watched for hot reload, or one checkpoint; a placement/sync checkpoint answers when it says converged, a strn-rl/sas-rl one (policies/direct) runs in shadow beside the heuristic and answers as -switch says (default: the embedded pretrained placement policy, not converged, so the heuristic answers)")
	fs.StringVar(&c.heuristic, "heuristic", "strn", "fallback heuristic (a policies/builtin name)")
	fs.Float64Var(&c.canary, "canary", 0, "share of jobs routed to a new converged version before it is promoted, in [0, 1)")
	fs.IntVar(&c.promoteAfter, "promote-after", 1000, "learned canary answers before the candidate is promoted (0: never)")
	fs.DurationVar(&c.margin, "deadline-margin", 2*time.Millisecond, "time before a request's deadline by which the learned policy must answer")
	fs.DurationVar(&c.modelTimeout, "model-timeout", 50*time.Millisecond, "the learned policy's time limit without a request deadline")
	fs.DurationVar(&c.poll, "poll", 2*time.Second, "checkpoint directory polling interval")
	fs.IntVar(&c.maxRequestBytes, "max-request-bytes", 4<<20, "largest request accepted, in bytes")
	fs.IntVar(&c.shedAbove, "shed-above", 64, "concurrent Place requests above which the cheap first-fit heuristic answers (0: off)")
	fs.IntVar(&c.maxInFlight, "max-inflight", 1024, "concurrent Place requests above which Place answers ResourceExhausted (0: off)")
	fs.StringVar(&c.logDir, "log-dir", "", "append every decision and reported outcome to Parquet files in this directory (datasets/declog), and the agents' telemetry (datasets/telemlog); read with drover eval --log DIR")
	fs.DurationVar(&c.logSeal, "log-seal", time.Minute, "with -log-dir: seal the current log file this often (a crash loses at most this much)")
	fs.StringVar(&c.sw.Mode, "switch", serve.SwitchGate, "how a strn-rl/sas-rl checkpoint is served: gate (in shadow until the gate passes on a replay of the served arrivals, then answering until the live gate fails), shadow (never answers; the gate is only reported) or converged (answers when the checkpoint says converged)")
	fs.IntVar(&c.sw.Every, "gate-every", 100, "evaluate the gate after this many new arrivals (distinct job ids; negative: never by count)")
	fs.DurationVar(&c.sw.Interval, "gate-interval", 0, "also evaluate the gate when this long has passed without an evaluation (0: never by time)")
	fs.IntVar(&c.sw.MinArrivals, "gate-min-arrivals", 30, "arrivals needed before the gate is evaluated")
	fs.IntVar(&c.sw.Window, "gate-window", 200, "the gate replays this many most recent arrivals")
	fs.IntVar(&c.sw.Seeds, "gate-seeds", 8, "replay seeds, one paired episode each (>= 2)")
	fs.Float64Var(&c.sw.Margin, "gate-margin", 0.02, "relative gain (avg TTA, or JCT with -gate-metric jct) the learned policy must show at 95% confidence to answer")
	fs.Float64Var(&c.sw.BackMargin, "gate-back-margin", 0, "switch back to the heuristic when the gain's lower confidence bound falls to this or below (must be below -gate-margin)")
	fs.StringVar(&c.sw.Metric, "gate-metric", serve.MetricTTA, "replay cost the gate compares: tta or jct")
	fs.BoolVar(&c.stateless, "stateless", false, "answer from each request alone: no telemetry service, no live state, STRN with constant sensitivities and BSP (the fast path)")
	fs.StringVar(&c.stateDir, "state-dir", "", "keep the live state (node telemetry history, jobs' measured iterations and profiles) in DIR/state.json: restored at start, saved atomically every -state-every and at shutdown (empty: in memory only)")
	fs.DurationVar(&c.stateEvery, "state-every", 30*time.Second, "with -state-dir: save the live state this often")
	fs.DurationVar(&c.staleAfter, "stale-after", 15*time.Second, "a node whose agent sent nothing for this long is stale and avoided")
	fs.DurationVar(&c.shutdownGrace, "shutdown-grace", 10*time.Second, "time to finish calls in progress on SIGTERM")
	gogc := fs.Int("gogc", 100, "the garbage collector's GOGC percentage (Go's default): a Place leaves about 5 KB of garbage, most of it grpc-go's, so at 10k Place/s the collector runs every 50 ms and 100 costs no measurable CPU against 400, and keeps the RSS 12 (log off) to 22 MiB (log on) lower (docs/results/serving.md); when not given, a GOGC environment variable wins")
	memLimit := fs.Int("memlimit-mib", 48, "soft limit of the Go heap and runtime, in MiB (debug.SetMemoryLimit): past it the collector runs more often than -gogc says, so -gogc's headroom does not grow the RSS (95 -> 77 MiB at 10k Place/s with -log-dir, docs/results/serving.md); 0: none; when not given, a GOMEMLIMIT environment variable wins")
	if err := parse(fs, args); err != nil {
		return err
	}
	gogcSet, memSet := false, false
	fs.Visit(func(f *flag.Flag) {
		gogcSet = gogcSet || f.Name == "gogc"
		memSet = memSet || f.Name == "memlimit-mib"
	})
	if gogcSet || os.Getenv("GOGC") == "" {
		debug.SetGCPercent(*gogc)
	}
	if *memLimit < 0 {
		return fmt.Errorf("-memlimit-mib %d: want >= 0 (0: no limit)", *memLimit)
	}
	if (memSet || os.Getenv("GOMEMLIMIT") == "") && *memLimit > 0 {
		debug.SetMemoryLimit(int64(*memLimit) << 20)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "drover serve: unexpected arguments %q\n", fs.Args())
		return errUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return serveUntil(ctx, c, nil, stdout)
}

// serveUntil runs the server until ctx ends; ready, when set, receives
// the gRPC and metrics addresses once both listen.
func serveUntil(ctx context.Context, c serveConfig, ready chan<- [2]string, stdout io.Writer) error {
	if c.loader == nil {
		c.loader = direct.Load
	}
	metrics := serve.NewMetrics()
	opts := []serve.Option{serve.WithHeuristic(c.heuristic), serve.WithMetrics(metrics), serve.WithDeadlineMargin(c.margin),
		serve.WithModelTimeout(c.modelTimeout), serve.WithCanary(c.canary, c.promoteAfter), serve.WithLoadShedding(c.shedAbove, c.maxInFlight),
		serve.WithPolicyLoader(c.loader), serve.WithSwitch(c.sw)}
	var sink *serve.LogSink
	var tlog *telemlog.Writer
	if c.logDir != "" {
		w, err := declog.NewWriter(c.logDir)
		if err != nil {
			return err
		}
		printRecovered(stdout, "decision log", w.Recovered())
		sink = serve.NewLogSink(w)
		opts = append(opts, serve.WithSink(sink))
		if !c.stateless {
			// The server's samples arrive from many streams: queued, so a
			// slow disk never holds an agent's stream (drops are counted).
			if tlog, err = telemlog.NewWriter(c.logDir, telemlog.Options{SealInterval: c.logSeal, Queue: telemlog.DefaultQueue}); err != nil {
				sink.Close()
				return err
			}
			printRecovered(stdout, "telemetry log", tlog.Recovered())
			defer func() {
				if err := tlog.Close(); err != nil {
					fmt.Fprintf(stdout, "drover serve: telemetry log: %v\n", err)
				}
			}()
		}
		if err := metrics.RegisterLogs(sink, tlog); err != nil {
			sink.Close()
			return err
		}
	}
	var live *state.Store
	statePath := ""
	if !c.stateless {
		cfg := state.Config{StaleAfter: c.staleAfter}
		if tlog != nil {
			cfg.Recorder = serve.TelemetryLog{W: tlog}
		}
		var err error
		if c.stateDir != "" {
			if err := os.MkdirAll(c.stateDir, 0o755); err != nil {
				return err
			}
			statePath = filepath.Join(c.stateDir, "state.json")
			live, err = state.LoadOrEmpty(statePath, cfg)
			if err == nil {
				// The server's downtime is not the agents' silence.
				live.Resume(time.Now())
			}
		} else {
			live, err = state.New(cfg)
		}
		if err != nil {
			if sink != nil {
				sink.Close()
			}
			return err
		}
		opts = append(opts, serve.WithState(live, nil))
	}
	core, err := serve.NewCore(opts...)
	if err != nil {
		if sink != nil {
			sink.Close()
		}
		return err
	}
	if statePath != "" {
		fmt.Fprintf(stdout, "drover serve: live state %s (%d nodes, %d jobs restored)\n", statePath, len(live.Nodes(time.Now())), live.Jobs())
		saveDone := make(chan struct{})
		saveCtx, cancelSave := context.WithCancel(context.Background())
		go func() {
			defer close(saveDone)
			t := time.NewTicker(c.stateEvery)
			defer t.Stop()
			for {
				select {
				case <-saveCtx.Done():
					return
				case <-t.C:
					if err := live.Save(statePath, time.Now()); err != nil {
						fmt.Fprintf(stdout, "drover serve: %v\n", err)
					}
				}
			}
		}()
		defer func() {
			cancelSave()
			<-saveDone
			if err := live.Save(statePath, time.Now()); err != nil {
				fmt.Fprintf(stdout, "drover serve: %v\n", err)
			} else {
				fmt.Fprintf(stdout, "drover serve: live state saved to %s\n", statePath)
			}
		}()
	}
	// On every early return (a bad flag, a busy port) the core still
	// closes, which flushes and closes the decision log; the normal
	// shutdown closes it through the server.
	closed := false
	defer func() {
		if !closed {
			core.Close()
		}
	}()
	if sink != nil && c.logSeal > 0 {
		// Seal the log's current file now and then; the core flushes and
		// closes the sink after the last request on shutdown.
		sealCtx, stopSeal := context.WithCancel(ctx)
		defer stopSeal()
		go func() {
			t := time.NewTicker(c.logSeal)
			defer t.Stop()
			for {
				select {
				case <-sealCtx.Done():
					return
				case <-t.C:
					sink.Flush()
				}
			}
		}()
	}
	scfg := serve.ServerConfig{Metrics: metrics, MaxRecvMsgSize: c.maxRequestBytes}
	if (c.tlsCert == "") != (c.tlsKey == "") || (c.tlsClientCA != "" && c.tlsCert == "") {
		return errors.New("-tls-cert and -tls-key go together, and -tls-client-ca needs them")
	}
	if c.tlsCert != "" {
		if scfg.TLS, err = serve.LoadTLS(c.tlsCert, c.tlsKey, c.tlsClientCA); err != nil {
			return err
		}
	}
	addr, metricsAddr := loopbackDefault(c.addr), c.metricsAddr
	if metricsAddr != "" {
		metricsAddr = loopbackDefault(metricsAddr)
	}
	if c.tokenFile != "" {
		if scfg.TLS == nil && !isLoopback(addr) {
			return fmt.Errorf("-token-file without -tls-cert would take the bearer token in plaintext on %s: add -tls-cert and -tls-key, or listen on loopback (-addr 127.0.0.1:PORT)", addr)
		}
		if pa := loopbackDefault(c.placeAddr); c.placeAddr != "" && scfg.TLS == nil && !isLoopback(pa) {
			return fmt.Errorf("-token-file without -tls-cert would take the bearer token in plaintext on -place-addr %s: add -tls-cert and -tls-key, or listen on loopback (-place-addr 127.0.0.1:PORT)", pa)
		}
		b, err := os.ReadFile(c.tokenFile)
		if err != nil {
			return err
		}
		if scfg.Token = strings.TrimSpace(string(b)); scfg.Token == "" {
			return fmt.Errorf("token file %s is empty", c.tokenFile)
		}
		if scfg.TLS == nil {
			fmt.Fprintf(stdout, "drover serve: warning: -token-file without TLS: the token travels in plaintext (accepted on loopback %s only)\n", addr)
		}
	}
	wctx, cancelWatch := context.WithCancel(ctx)
	defer cancelWatch()
	watchDone := make(chan struct{})
	close(watchDone)
	if c.checkpoints == "" {
		// No checkpoints given: the embedded pretrained default, which
		// is not converged, so the heuristic answers (and says why).
		v, err := serve.DefaultVersion()
		if err != nil {
			return err
		}
		core.Swap(v)
	} else {
		if _, err := os.Stat(filepath.Join(c.checkpoints, checkpoints.MetaFile)); err == nil {
			// One checkpoint, as drover train --out writes it: version 1.
			v, err := core.LoadVersion(c.checkpoints, 1)
			if err != nil {
				return err
			}
			core.Swap(v)
		} else {
			w, err := serve.NewWatcher(c.checkpoints, core, c.poll)
			if err != nil {
				return err
			}
			w.SetLog(stdout)
			if err := w.Poll(); err != nil {
				return err
			}
			watchDone = make(chan struct{})
			go func() {
				defer close(watchDone)
				w.Run(wctx)
			}()
		}
	}
	// The gate's evaluations, off the request path.
	switchDone := make(chan struct{})
	go func() {
		defer close(switchDone)
		core.RunSwitch(wctx)
	}()
	defer func() { cancelWatch(); <-switchDone }()
	srv, err := serve.NewServer(core, scfg)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	// What is opened from here on is closed when serveUntil returns: on an
	// error before serving, what was opened so far; after a shutdown, what
	// is already shut down (closing again does nothing).
	opened := []io.Closer{lis}
	defer func() {
		for _, o := range opened {
			o.Close()
		}
	}()
	var hs *http.Server
	var stopping atomic.Bool
	maddr := ""
	if c.metricsAddr != "" {
		mlis, err := net.Listen("tcp", metricsAddr)
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", metrics.Handler())
		// /healthz is the probe for deployments whose gRPC port needs TLS
		// (the kubelet's gRPC probe speaks plaintext only): 200 while the
		// server serves, 503 once it is shutting down.
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
			if stopping.Load() {
				http.Error(w, "shutting down", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ok")
		})
		hs = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
		maddr = mlis.Addr().String()
		opened = append(opened, hs)
		go hs.Serve(mlis)
	}
	// The kube-scheduler extender: HTTP over the same core.
	var es *http.Server
	eaddr := ""
	if c.extenderAddr != "" {
		ext, err := extender.New(core, extender.Config{})
		if err != nil {
			return err
		}
		elis, err := net.Listen("tcp", loopbackDefault(c.extenderAddr))
		if err != nil {
			return err
		}
		if scfg.TLS != nil {
			// The gRPC server's certificate (and client CA: kube-scheduler
			// presents its extender tlsConfig's certFile), over HTTP/1.1.
			ecfg := scfg.TLS.Clone()
			ecfg.NextProtos = []string{"http/1.1"}
			elis = tls.NewListener(elis, ecfg)
		}
		// The handler bounds the body's reading (extender.Config.ReadTimeout,
		// 10 s), the concurrent calls and the nodes per call; the server
		// bounds the headers and, as a backstop, the whole request.
		es = &http.Server{Handler: ext, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
		eaddr = elis.Addr().String()
		if scfg.Token != "" && (scfg.TLS == nil || scfg.TLS.ClientCAs == nil) {
			// kube-scheduler's extender configuration has no bearer token:
			// it authenticates by client certificate.
			fmt.Fprintln(stdout, "drover serve: warning: the extender does not check -token-file (kube-scheduler cannot send one); use -tls-client-ca to authenticate it")
		}
		opened = append(opened, es)
		go es.Serve(elis)
	}
	// The fast listener: the hot unary calls over the lean endpoint.
	var plis net.Listener
	paddr := ""
	if c.placeAddr != "" {
		plis, err = net.Listen("tcp", loopbackDefault(c.placeAddr))
		if err != nil {
			return err
		}
		opened = append(opened, plis)
		paddr = plis.Addr().String()
	}
	st := core.Status()
	fmt.Fprintf(stdout, "drover serve: gRPC on %s (tls %v, token %v), fast calls on %s, metrics on %s, extender on %s; policy %s, heuristic %s, model %q\n",
		lis.Addr(), scfg.TLS != nil, scfg.Token != "", orNone(paddr), orNone(maddr), orNone(eaddr), st.ActivePolicy, st.Heuristic, st.ModelVersion)
	if st.ShadowPolicy != "" {
		fmt.Fprintf(stdout, "drover serve: %s decides in shadow (switch %s): %s\n", st.ShadowPolicy, st.SwitchMode, st.SwitchReason)
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(lis) }()
	if plis != nil {
		go func() {
			if err := srv.ServeFast(plis); err != nil {
				errc <- fmt.Errorf("fast listener %s: %w", paddr, err)
			}
		}()
	}
	if ready != nil {
		ready <- [2]string{lis.Addr().String(), maddr}
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		return err // the deferred Close stops the other listeners
	}
	fmt.Fprintln(stdout, "drover serve: shutting down")
	stopping.Store(true)
	cancelWatch()
	<-watchDone
	<-switchDone
	sctx, cancel := context.WithTimeout(context.Background(), c.shutdownGrace)
	defer cancel()
	var eerr error
	if es != nil {
		// The extender's calls finish before the core closes.
		eerr = es.Shutdown(sctx)
	}
	err = errors.Join(eerr, srv.Shutdown(sctx))
	closed = true // srv.Shutdown closed the core
	if hs != nil {
		err = errors.Join(err, hs.Shutdown(sctx))
	}
	<-errc
	return err
}

// printRecovered reports what a log writer recovered at start from the
// files a crash left unsealed.
func printRecovered(w io.Writer, what string, rs []pqlog.Recovery) {
	for _, r := range rs {
		fmt.Fprintf(w, "drover serve: %s: recovered %d records into %s", what, r.Records, r.File)
		if r.LostBytes > 0 {
			fmt.Fprintf(w, "; %d bytes lost: %s", r.LostBytes, r.Lost)
		}
		fmt.Fprintln(w)
	}
}

// loopbackDefault binds an address given as a port alone (":8888",
// "8888") to 127.0.0.1: drover serve's -addr, -metrics-addr and
// -extender-addr listen on loopback unless a host is named.
func loopbackDefault(addr string) string {
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
