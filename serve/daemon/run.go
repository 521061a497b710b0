package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/datasets/declog"
	"github.com/drover-sched/drover/datasets/telemlog"
	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/internal/pqlog"
	"github.com/drover-sched/drover/policies/direct"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/extender"
	"github.com/drover-sched/drover/serve/mmlog"
	"github.com/drover-sched/drover/serve/routelog"
	"github.com/drover-sched/drover/serve/state"
)

// Run serves the policy server c describes until ctx ends, then shuts it
// down gracefully (health NOT_SERVING, /healthz 503, the calls in
// progress finish within c.ShutdownGrace, the logs are flushed and
// sealed, the live state saved). It returns an error when the server
// cannot start (a bad configuration, a busy port, an unreadable
// checkpoint) or a listener fails; nil after a clean shutdown.
func Run(ctx context.Context, c Config) error {
	if c.StateDir != "" && c.StateEvery <= 0 {
		// time.NewTicker would panic once the server is already serving.
		return fmt.Errorf("-state-every %v with -state-dir: want a positive interval", c.StateEvery)
	}
	if n := c.MaxConnsPerPeer; n != 0 {
		c.GRPCConns.MaxConnsPerPeer, c.FastConns.MaxConnsPerPeer, c.HTTPConns.MaxConnsPerPeer = n, n, n
	}
	r := &runner{c: c, out: c.Out}
	if r.out == nil {
		r.out = io.Discard
	}
	if r.c.Loader == nil {
		r.c.Loader = direct.Load
	}
	// Everything opened is undone in reverse order when Run returns.
	defer func() {
		for i := len(r.undo) - 1; i >= 0; i-- {
			r.undo[i]()
		}
	}()
	if err := r.start(ctx); err != nil {
		return err
	}
	return r.serve(ctx)
}

// runner is one Run: what it opened and what undoes it.
type runner struct {
	c    Config
	out  io.Writer
	undo []func()

	metrics   *serve.Metrics
	sink      *serve.LogSink
	tlog      *telemlog.Writer
	live      *state.Store
	statePath string
	core      *serve.Core
	closed    bool // the core was closed by the server's Shutdown
	scfg      serve.ServerConfig

	cancelWatch           context.CancelFunc
	watchDone, switchDone chan struct{}

	srv      *serve.Server
	lis      net.Listener
	plis     net.Listener
	hs, es   *http.Server
	stopping atomic.Bool
	addrs    Addrs
}

// defer1 adds f to what Run undoes on return.
func (r *runner) defer1(f func()) { r.undo = append(r.undo, f) }

// start builds the core, loads its policy and opens the listeners.
func (r *runner) start(ctx context.Context) error {
	if err := r.openLogs(); err != nil {
		return err
	}
	if err := r.openState(); err != nil {
		r.closeSink()
		return err
	}
	if err := r.newCore(); err != nil {
		r.closeSink()
		return err
	}
	r.startSaver()
	// On every early return (a bad flag, a busy port) the core still
	// closes, which flushes and closes the decision log; the normal
	// shutdown closes it through the server.
	r.defer1(func() {
		if !r.closed {
			r.core.Close()
		}
	})
	r.startSealer(ctx)
	r.startReleaser(ctx)
	if err := r.serverConfig(); err != nil {
		return err
	}
	if err := r.loadPolicy(ctx); err != nil {
		return err
	}
	return r.listen()
}

func (r *runner) closeSink() {
	if r.sink != nil {
		r.sink.Close()
	}
}

// openLogs opens the decision and telemetry logs of c.LogDir.
func (r *runner) openLogs() error {
	r.metrics = serve.NewMetrics()
	if r.c.LogDir == "" {
		return nil
	}
	w, err := declog.NewWriter(r.c.LogDir)
	if err != nil {
		return err
	}
	printRecovered(r.out, "decision log", w.Recovered())
	r.sink = serve.NewLogSink(w)
	if r.c.Route != nil {
		// Route decisions in full, for drover eval --log DIR/routes.jsonl.
		rw, err := routelog.Create(filepath.Join(r.c.LogDir, routelog.FileName))
		if err != nil {
			r.sink.Close()
			return err
		}
		r.sink.WithRoutes(rw)
	}
	if r.c.MM != nil {
		// Scale and RouteMM answers, docs/format/mm-log.md.
		sw, err := routelog.Create(filepath.Join(r.c.LogDir, mmlog.ScalesFile))
		if err != nil {
			r.sink.Close()
			return err
		}
		rw, err := routelog.Create(filepath.Join(r.c.LogDir, mmlog.RoutesFile))
		if err != nil {
			sw.Close()
			r.sink.Close()
			return err
		}
		r.sink.WithMM(sw, rw)
	}
	if !r.c.Stateless {
		// The server's samples arrive from many streams: queued, so a
		// slow disk never holds an agent's stream (drops are counted).
		if r.tlog, err = telemlog.NewWriter(r.c.LogDir, telemlog.Options{SealInterval: r.c.LogSeal, Queue: telemlog.DefaultQueue}); err != nil {
			r.sink.Close()
			return err
		}
		printRecovered(r.out, "telemetry log", r.tlog.Recovered())
		r.defer1(func() {
			if err := r.tlog.Close(); err != nil {
				fmt.Fprintf(r.out, "drover serve: telemetry log: %v\n", err)
			}
		})
	}
	if err := r.metrics.RegisterLogs(r.sink, r.tlog); err != nil {
		r.sink.Close()
		return err
	}
	return nil
}

// openState opens the live state, restored from c.StateDir when set.
func (r *runner) openState() error {
	if r.c.Stateless {
		return nil
	}
	cfg := r.c.stateConfig()
	if r.tlog != nil {
		cfg.Recorder = serve.TelemetryLog{W: r.tlog}
	}
	if r.c.StateDir == "" {
		var err error
		r.live, err = state.New(cfg)
		return err
	}
	if err := os.MkdirAll(r.c.StateDir, 0o755); err != nil {
		return err
	}
	r.statePath = filepath.Join(r.c.StateDir, "state.json")
	live, err := state.LoadOrEmpty(r.statePath, cfg)
	if err != nil {
		return err
	}
	// The server's downtime is not the agents' silence.
	live.Resume(time.Now())
	r.live = live
	return nil
}

// newCore builds the core over the logs and the live state.
func (r *runner) newCore() error {
	c := r.c
	opts := []serve.Option{serve.WithHeuristic(c.Heuristic), serve.WithMetrics(r.metrics), serve.WithDeadlineMargin(c.Margin),
		serve.WithModelTimeout(c.ModelTimeout), serve.WithCanary(c.Canary, c.PromoteAfter), serve.WithLoadShedding(c.ShedAbove, c.MaxInFlight),
		serve.WithPolicyLoader(c.Loader), serve.WithSwitch(c.Switch), serve.WithLimits(c.limits())}
	if r.sink != nil {
		opts = append(opts, serve.WithSink(r.sink))
	}
	if r.live != nil {
		opts = append(opts, serve.WithState(r.live, nil))
	}
	if c.Route != nil {
		opts = append(opts, serve.WithRouter(*c.Route))
	}
	if c.MM != nil {
		opts = append(opts, serve.WithMM(*c.MM))
	}
	var err error
	r.core, err = serve.NewCore(opts...)
	return err
}

// startSaver saves the live state every c.StateEvery and at the end.
func (r *runner) startSaver() {
	if r.statePath == "" {
		return
	}
	live, path := r.live, r.statePath
	fmt.Fprintf(r.out, "drover serve: live state %s (%d nodes, %d jobs restored)\n", path, len(live.Nodes(time.Now())), live.Jobs())
	saveDone := make(chan struct{})
	saveCtx, cancelSave := context.WithCancel(context.Background())
	go func() {
		defer close(saveDone)
		every(saveCtx, r.c.StateEvery, func() {
			if err := live.Save(path, time.Now()); err != nil {
				fmt.Fprintf(r.out, "drover serve: %v\n", err)
			}
		})
	}()
	r.defer1(func() {
		cancelSave()
		<-saveDone
		if err := live.Save(path, time.Now()); err != nil {
			fmt.Fprintf(r.out, "drover serve: %v\n", err)
		} else {
			fmt.Fprintf(r.out, "drover serve: live state saved to %s\n", path)
		}
	})
}

// startSealer seals the decision log's current file every c.LogSeal; the
// core flushes and closes the sink after the last request on shutdown.
func (r *runner) startSealer(ctx context.Context) {
	if r.sink == nil || r.c.LogSeal <= 0 {
		return
	}
	sealCtx, stopSeal := context.WithCancel(ctx)
	r.defer1(stopSeal)
	go every(sealCtx, r.c.LogSeal, func() { r.sink.Flush() })
}

// every calls f every d until ctx ends.
func every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// serverConfig reads the TLS files and the token, and checks that the
// token does not travel in plaintext off loopback.
func (r *runner) serverConfig() error {
	c := r.c
	r.scfg = serve.ServerConfig{Metrics: r.metrics, MaxRecvMsgSize: c.MaxRequestBytes, Conns: c.GRPCConns, FastConns: c.FastConns}
	if (c.TLSCert == "") != (c.TLSKey == "") || (c.TLSClientCA != "" && c.TLSCert == "") {
		return errors.New("-tls-cert and -tls-key go together, and -tls-client-ca needs them")
	}
	if c.TLSCert != "" {
		var err error
		if r.scfg.TLS, err = serve.LoadTLS(c.TLSCert, c.TLSKey, c.TLSClientCA); err != nil {
			return err
		}
	}
	if c.TokenFile == "" {
		return nil
	}
	addr := LoopbackDefault(c.Addr)
	if r.scfg.TLS == nil && !serve.LoopbackAddr(addr) {
		return fmt.Errorf("-token-file without -tls-cert would take the bearer token in plaintext on %s: add -tls-cert and -tls-key, or listen on loopback (-addr 127.0.0.1:PORT)", addr)
	}
	if pa := LoopbackDefault(c.PlaceAddr); c.PlaceAddr != "" && r.scfg.TLS == nil && !serve.LoopbackAddr(pa) {
		return fmt.Errorf("-token-file without -tls-cert would take the bearer token in plaintext on -place-addr %s: add -tls-cert and -tls-key, or listen on loopback (-place-addr 127.0.0.1:PORT)", pa)
	}
	b, err := inputfile.ReadText(c.TokenFile, inputfile.Secret)
	if err != nil {
		return err
	}
	if r.scfg.Token = strings.TrimSpace(string(b)); r.scfg.Token == "" {
		return fmt.Errorf("token file %s is empty", c.TokenFile)
	}
	if r.scfg.TLS == nil {
		fmt.Fprintf(r.out, "drover serve: warning: -token-file without TLS: the token travels in plaintext (accepted on loopback %s only)\n", addr)
	}
	return nil
}

// loadPolicy gives the core its policy (the embedded default, one
// checkpoint, or a watched directory of versions) and starts the
// watcher and the gate's evaluations.
func (r *runner) loadPolicy(ctx context.Context) error {
	wctx, cancelWatch := context.WithCancel(ctx)
	r.cancelWatch = cancelWatch
	r.defer1(cancelWatch)
	r.watchDone = make(chan struct{})
	close(r.watchDone)
	if err := r.loadCheckpoints(wctx); err != nil {
		return err
	}
	// The gate's evaluations, off the request path.
	r.switchDone = make(chan struct{})
	go func() {
		defer close(r.switchDone)
		r.core.RunSwitch(wctx)
	}()
	r.defer1(func() { cancelWatch(); <-r.switchDone })
	return nil
}

func (r *runner) loadCheckpoints(wctx context.Context) error {
	dir := r.c.Checkpoints
	if dir == "" {
		// No checkpoints given: the embedded pretrained default, which
		// is not converged, so the heuristic answers (and says why).
		v, err := serve.DefaultVersion()
		if err != nil {
			return err
		}
		r.core.Swap(v)
		return nil
	}
	_, metaErr := os.Stat(filepath.Join(dir, checkpoints.MetaFile))
	if metaErr == nil {
		// One checkpoint, as drover train --out writes it: version 1.
		v, err := r.core.LoadVersion(dir, 1)
		if err != nil {
			return err
		}
		r.core.Swap(v)
		return nil
	}
	if !hasVersions(dir) {
		// Neither one checkpoint nor a directory of versions: a
		// checkpoint without its meta.json, or a mistyped directory,
		// would otherwise be watched silently with nothing to serve.
		return fmt.Errorf("checkpoints %s: not a checkpoint (%w) and holds no numbered version directories (0001, 0002, ...) to watch", dir, metaErr)
	}
	w, err := serve.NewWatcher(dir, r.core, r.c.Poll)
	if err != nil {
		return err
	}
	w.SetLog(r.out)
	if err := w.Poll(); err != nil {
		return err
	}
	r.watchDone = make(chan struct{})
	go func() {
		defer close(r.watchDone)
		w.Run(wctx)
	}()
	return nil
}

// hasVersions reports whether dir holds a numbered version directory
// (serve.Watcher's 0001, 0002, ...), written yet or not.
func hasVersions(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return true // the watcher reports the directory's error
	}
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 0 && e.IsDir() {
			return true
		}
	}
	return false
}

// listen opens the gRPC, metrics, extender and fast listeners. What is
// opened is closed when Run returns: on an error before serving, what was
// opened so far; after a shutdown, what is already shut down (closing
// again does nothing).
func (r *runner) listen() error {
	var err error
	if r.srv, err = serve.NewServer(r.core, r.scfg); err != nil {
		return err
	}
	if r.lis, err = r.open(r.c.Addr); err != nil {
		return err
	}
	r.addrs.GRPC = r.lis.Addr().String()
	if err := r.listenMetrics(); err != nil {
		return err
	}
	if err := r.listenExtender(); err != nil {
		return err
	}
	// The fast listener: the hot unary calls over the lean endpoint.
	if r.c.PlaceAddr != "" {
		if r.plis, err = r.open(r.c.PlaceAddr); err != nil {
			return err
		}
		r.addrs.Fast = r.plis.Addr().String()
	}
	return nil
}

// open listens on addr (LoopbackDefault) and closes it when Run returns.
func (r *runner) open(addr string) (net.Listener, error) {
	lis, err := net.Listen("tcp", LoopbackDefault(addr))
	if err != nil {
		return nil, err
	}
	r.defer1(func() { lis.Close() })
	return lis, nil
}

// listenMetrics serves /metrics and /healthz on c.MetricsAddr.
func (r *runner) listenMetrics() error {
	if r.c.MetricsAddr == "" {
		return nil
	}
	mlis, err := net.Listen("tcp", LoopbackDefault(r.c.MetricsAddr))
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", r.metrics.Handler())
	// /healthz is the probe for deployments whose gRPC port needs TLS
	// (the kubelet's gRPC probe speaks plaintext only): 200 while the
	// server serves, 503 once it is shutting down.
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if r.stopping.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	// Bounded like every listener: connections (HTTPConns), headers,
	// the request, the answer's write (a scraper that stops reading) and
	// keep-alive idleness.
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	r.hs, r.addrs.Metrics = hs, mlis.Addr().String()
	r.defer1(func() { hs.Close() })
	go hs.Serve(serve.LimitHTTP(hs, mlis, "metrics", r.c.HTTPConns, r.metrics))
	return nil
}

// listenExtender serves the kube-scheduler extender, HTTP over the same
// core, on c.ExtenderAddr.
func (r *runner) listenExtender() error {
	if r.c.ExtenderAddr == "" {
		return nil
	}
	ext, err := extender.New(r.core, extender.Config{})
	if err != nil {
		return err
	}
	elis, err := net.Listen("tcp", LoopbackDefault(r.c.ExtenderAddr))
	if err != nil {
		return err
	}
	// The handler bounds the body's reading (extender.Config.ReadTimeout,
	// 5 s), the bytes read at once, the concurrent calls (which hold no
	// slot while a body arrives) and the nodes per call; the listener
	// the connections (HTTPConns); the server the headers and, as
	// backstops well under kube-scheduler's 30 s HTTPTimeout, the whole
	// request and the answer's write.
	es := &http.Server{Handler: ext, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
		WriteTimeout: 20 * time.Second, IdleTimeout: 2 * time.Minute}
	// A full listener makes room: the connection the longest without a
	// complete request gives its slot to the new one (serve.LimitHTTP).
	elis = serve.LimitHTTP(es, elis, "extender", r.c.HTTPConns, r.metrics)
	if r.scfg.TLS != nil {
		// The gRPC server's certificate (and client CA: kube-scheduler
		// presents its extender tlsConfig's certFile), over HTTP/1.1.
		ecfg := r.scfg.TLS.Clone()
		ecfg.NextProtos = []string{"http/1.1"}
		elis = tls.NewListener(elis, ecfg)
	}
	r.es, r.addrs.Extender = es, elis.Addr().String()
	if r.scfg.Token != "" && (r.scfg.TLS == nil || r.scfg.TLS.ClientCAs == nil) {
		// kube-scheduler's extender configuration has no bearer token:
		// it authenticates by client certificate.
		fmt.Fprintln(r.out, "drover serve: warning: the extender does not check -token-file (kube-scheduler cannot send one); use -tls-client-ca to authenticate it")
	}
	r.defer1(func() { es.Close() })
	go es.Serve(elis)
	return nil
}

// serve prints the addresses, serves until ctx ends or a listener fails,
// and shuts down.
func (r *runner) serve(ctx context.Context) error {
	st := r.core.Status()
	a := r.addrs
	fmt.Fprintf(r.out, "drover serve: gRPC on %s (tls %v, token %v), fast calls on %s, metrics on %s, extender on %s; policy %s, heuristic %s, model %q\n",
		a.GRPC, r.scfg.TLS != nil, r.scfg.Token != "", orNone(a.Fast), orNone(a.Metrics), orNone(a.Extender), st.ActivePolicy, st.Heuristic, st.ModelVersion)
	if st.ShadowPolicy != "" {
		fmt.Fprintf(r.out, "drover serve: %s decides in shadow (switch %s): %s\n", st.ShadowPolicy, st.SwitchMode, st.SwitchReason)
	}
	errc := make(chan error, 2)
	go func() { errc <- r.srv.Serve(r.lis) }()
	if r.plis != nil {
		go func() {
			if err := r.srv.ServeFast(r.plis); err != nil {
				errc <- fmt.Errorf("fast listener %s: %w", a.Fast, err)
			}
		}()
	}
	if r.c.Ready != nil {
		r.c.Ready(a)
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		return err // the deferred Close stops the other listeners
	}
	return r.shutdown(errc)
}

// shutdown stops the server once ctx has ended: the watcher and the gate
// first, then the extender's calls, then the gRPC and fast listeners'
// (which close the core), then the metrics listener.
func (r *runner) shutdown(errc <-chan error) error {
	fmt.Fprintln(r.out, "drover serve: shutting down")
	if r.c.Route != nil {
		st := r.core.RouteSwitch()
		fmt.Fprintf(r.out, "drover serve: routes: %d routed, %s answering, mode %s, %d gate evaluations: %s\n", st.Arrivals, st.Answering, st.Mode, st.Evaluations, st.Reason)
	}
	if r.c.MM != nil {
		st := r.core.MMSwitch()
		fmt.Fprintf(r.out, "drover serve: multimodal: %d routed by %s; %d scaled, %s answering, mode %s: %s\n", st.Routed, orNone(st.Router), st.Scaled, orNone(st.Answering), st.Mode, st.Reason)
	}
	r.stopping.Store(true)
	r.cancelWatch()
	<-r.watchDone
	<-r.switchDone
	sctx, cancel := context.WithTimeout(context.Background(), r.c.ShutdownGrace)
	defer cancel()
	var eerr error
	if r.es != nil {
		// The extender's calls finish before the core closes.
		eerr = r.es.Shutdown(sctx)
	}
	err := errors.Join(eerr, r.srv.Shutdown(sctx))
	r.closed = true // srv.Shutdown closed the core
	if r.hs != nil {
		err = errors.Join(err, r.hs.Shutdown(sctx))
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

// LoopbackDefault binds an address given as a port alone (":8888",
// "8888") to 127.0.0.1: Run's listeners are on loopback unless a host is
// named. Other addresses are returned as they are.
func LoopbackDefault(addr string) string {
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
