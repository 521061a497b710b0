package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"

	"github.com/drover-sched/drover/internal/loadgen"
	pb "github.com/drover-sched/drover/serve/proto"
)

// runBench is `drover bench place`: an open-loop load generator for a
// drover server's Place (internal/loadgen), reporting latency percentiles
// from the requests' intended send times, errors by code, the achieved
// rate, its own CPU per request and, with -server-pid, the server's.
// benchFlags are drover bench place's flags.
type benchFlags struct {
	addr        *string
	rate        *float64
	duration    *time.Duration
	n           *int
	conns       *int
	concurrency *int
	reqFile     *string
	timeout     *time.Duration
	warmup      *time.Duration
	jsonOut     *bool
	health      *bool
	client      *string
	serverPID   *int
	tailPNG     *string
}

// defineBenchFlags defines drover bench place's flags on fs.
func defineBenchFlags(fs *flag.FlagSet) *benchFlags {
	f := new(benchFlags)
	f.addr = fs.String("addr", "127.0.0.1:50051", "server address")
	f.rate = fs.Float64("rate", 1000, "arrival rate, requests per second: request i is due at the start plus i/rate")
	f.duration = fs.Duration("duration", 10*time.Second, "length of the measured run (rate x duration requests)")
	f.n = fs.Int("n", 0, "number of measured requests (overrides -duration)")
	f.conns = fs.Int("conns", 2, "gRPC connections")
	f.concurrency = fs.Int("concurrency", 64, "in-flight slots: a request due while all are busy waits, and its wait counts in its latency")
	f.reqFile = fs.String("request", "", "PlaceRequest as JSON (protojson, as drover place -print-request writes it; default: 64 nodes of 4 GPUs, an 8-worker job)")
	f.timeout = fs.Duration("timeout", 5*time.Second, "each request's deadline")
	f.warmup = fs.Duration("warmup", time.Second, "unmeasured run at the same rate before the measured one")
	f.jsonOut = fs.Bool("json", false, "print the report as JSON")
	f.health = fs.Bool("health", false, "send grpc.health.v1.Health/Check (an empty request, a constant answer, no Drover code on its path) instead of Place: the floor that the server's gRPC stack, the generator and the machine set")
	f.client = fs.String("client", "h2", "the generator's client: h2 (lean: HTTP/2 frames written by hand, one sender goroutine, a few system calls per request, so the generator's CPU does not limit the measurement) or grpc (grpc-go's client, one goroutine per in-flight slot; several times the CPU per request)")
	f.serverPID = fs.Int("server-pid", 0, "the server's process id on this machine: report its CPU time per request and its peak RSS (from /proc)")
	f.tailPNG = fs.String("tail-png", "", "also draw the run's latency tail (the fraction of requests slower than each latency, log-log, with the 1 ms line) to this PNG file; drover bench plot draws several runs' -json reports in one")
	return f
}

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench place", stderr)
	f := defineBenchFlags(fs)
	dial := addClientFlags(fs)
	if run := benchSubcommand(args); run != nil {
		return run(args[1:], stdout, stderr)
	}
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help"):
		fmt.Fprintln(stderr, "usage: drover bench place [flags]\n       drover bench plot -o FILE.png REPORT.json...\n       drover bench soak [flags]   (drover bench soak -h for its flags)")
		fs.PrintDefaults()
		return flag.ErrHelp
	case len(args) == 0 || args[0] != "place":
		fmt.Fprintln(stderr, "usage: drover bench place [flags]   (drover bench -h for the flags)\n       drover bench plot -o FILE.png REPORT.json...\n       drover bench soak [flags]")
		return errUsage
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "drover bench place: unexpected arguments %q\n", fs.Args())
		return errUsage
	}
	total, err := f.requests()
	if err != nil {
		return err
	}
	if err := dial.checkToken(*f.addr, stderr); err != nil {
		return err
	}
	// The default request is drover place's: -nodes 64 -workers 8.
	req, err := placeRequest(*f.reqFile, 64, 4, -1, 8, 0.3, "job-1", "cifar10", 8, "ring", 0, 3600)
	if err != nil {
		return err
	}
	payload, err := proto.Marshal(req)
	if err != nil {
		return err
	}
	opts, err := dial.dialOptions()
	if err != nil {
		return err
	}
	cc, closeConns, err := benchGRPCConns(f, opts)
	defer closeConns()
	if err != nil {
		return err
	}
	method := pb.Scheduler_Place_FullMethodName
	if *f.health {
		method, payload = healthpb.Health_Check_FullMethodName, nil // an empty HealthCheckRequest
	}
	answer, err := firstAnswer(cc[0], req, *f.health, *f.timeout)
	if err != nil {
		return err
	}
	cfg := loadgen.Config{Conns: cc, Method: method, Payload: payload,
		Rate: *f.rate, Concurrency: *f.concurrency, Timeout: *f.timeout}
	closeH2, err := benchH2Conns(f, dial, &cfg)
	defer closeH2()
	if err != nil {
		return err
	}
	res, server, err := benchMeasure(f, cfg, total)
	if err != nil {
		return err
	}
	rep := benchReport{Addr: *f.addr, Method: method, Rate: *f.rate, Requests: total, Conns: *f.conns, Concurrency: *f.concurrency, Client: *f.client,
		RequestBytes: len(payload), Answer: answer, Nodes: len(req.GetCluster().GetNodes()), Workers: int(req.GetJob().GetWorkers()),
		Sent: res.Sent, OK: res.OK, Errors: res.Errors, Achieved: res.Achieved(), ElapsedS: res.Elapsed.Seconds(),
		Latency: res.Latency.Summary(), Tail: res.Latency.Tail(), Lag: res.Lag.Summary(),
		ClientCPUS: res.ClientCPU.Seconds(), ClientCPUPerRequestUS: us(res.ClientCPUPerRequest())}
	if res.Elapsed > 0 {
		rep.ClientCores = res.ClientCPU.Seconds() / res.Elapsed.Seconds()
	}
	rep.Server = server
	return writeBenchReport(stdout, f, rep)
}

// benchMeasure runs the warm-up, then the measured run of total
// requests, watching the server's process with -server-pid.
func benchMeasure(f *benchFlags, cfg loadgen.Config, total int) (loadgen.Result, *benchServer, error) {
	ctx := context.Background()
	if w := int(math.Round(*f.rate * f.warmup.Seconds())); w > 0 {
		cfg.N = w
		if _, err := loadgen.Run(ctx, cfg); err != nil {
			return loadgen.Result{}, nil, fmt.Errorf("warm-up: %w", err)
		}
	}
	var watch *loadgen.ProcWatch
	if *f.serverPID > 0 {
		var err error
		if watch, err = loadgen.WatchProc(*f.serverPID, 100*time.Millisecond); err != nil {
			return loadgen.Result{}, nil, fmt.Errorf("-server-pid: %w", err)
		}
	}
	cfg.N = total
	res, err := loadgen.Run(ctx, cfg)
	if err != nil || watch == nil {
		return res, nil, err
	}
	server, err := benchServerUsage(watch, *f.serverPID, res)
	return res, server, err
}

// writeBenchReport draws the tail (-tail-png) and prints the report, as
// JSON with -json.
func writeBenchReport(stdout io.Writer, f *benchFlags, rep benchReport) error {
	if *f.tailPNG != "" {
		name := fmt.Sprintf("%s %g/s", shortMethod(rep.Method), *f.rate)
		if err := writeTailPNG(*f.tailPNG, name, []tailSeries{{name, rep.Tail}}); err != nil {
			return err
		}
	}
	if *f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.print(stdout)
	return nil
}

// benchH2Conns dials the lean client's -conns connections into cfg
// with -client h2 (instead of the grpc-go ones). The returned function
// closes them.
func benchH2Conns(f *benchFlags, dial *clientFlags, cfg *loadgen.Config) (func(), error) {
	var conns []*loadgen.H2Conn
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	if *f.client != "h2" {
		return closeAll, nil
	}
	cfg.Conns = nil
	for range *f.conns {
		c, err := dialH2(*f.addr, dial, *f.timeout)
		if err != nil {
			return closeAll, err
		}
		conns = append(conns, c)
		cfg.H2 = append(cfg.H2, c)
	}
	return closeAll, nil
}

// requests checks the load flags and returns the measured requests'
// count (-n, or -rate x -duration).
func (f *benchFlags) requests() (int, error) {
	total := *f.n
	if total == 0 {
		total = int(math.Round(*f.rate * f.duration.Seconds()))
	}
	if total <= 0 {
		return 0, fmt.Errorf("-n %d, -duration %v: no requests to send", *f.n, *f.duration)
	}
	if *f.client != "h2" && *f.client != "grpc" {
		return 0, fmt.Errorf("-client %q: want h2 or grpc", *f.client)
	}
	return total, nil
}

// benchGRPCConns dials the grpc-go connections: one, which decodes the
// first answer, or -conns with -client grpc (they carry the load). The
// returned function closes them.
func benchGRPCConns(f *benchFlags, opts []grpc.DialOption) ([]grpc.ClientConnInterface, func(), error) {
	grpcConns := 1
	if *f.client == "grpc" {
		grpcConns = *f.conns
	}
	var cc []grpc.ClientConnInterface
	var closers []func() error
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for range grpcConns {
		c, err := grpc.NewClient(*f.addr, opts...)
		if err != nil {
			return nil, closeAll, err
		}
		closers = append(closers, c.Close)
		if err := waitReady(c, *f.timeout); err != nil {
			return nil, closeAll, fmt.Errorf("connect %s: %w", *f.addr, err)
		}
		cc = append(cc, c)
	}
	return cc, closeAll, nil
}

// benchServerUsage stops watch and reports the server's CPU and memory
// over the run (-server-pid).
func benchServerUsage(watch *loadgen.ProcWatch, pid int, res loadgen.Result) (*benchServer, error) {
	u, err := watch.Stop()
	if err != nil {
		return nil, fmt.Errorf("-server-pid: %w", err)
	}
	s := &benchServer{PID: pid, CPUS: u.CPU.Seconds(), PeakRSSMB: float64(u.PeakRSS) / (1 << 20), HWMMB: float64(u.HWM) / (1 << 20)}
	if res.Sent > 0 {
		s.CPUPerRequestUS = us(u.CPU / time.Duration(res.Sent))
	}
	if res.Elapsed > 0 {
		s.Cores = u.CPU.Seconds() / res.Elapsed.Seconds()
	}
	return s, nil
}

// dialH2 opens one connection of the lean client to addr (host:port),
// with TLS and the bearer token as the client flags say.
func dialH2(addr string, f *clientFlags, timeout time.Duration) (*loadgen.H2Conn, error) {
	if strings.Contains(addr, "://") || strings.HasPrefix(addr, "unix:") {
		return nil, fmt.Errorf("-addr %s: -client h2 dials host:port; use -client grpc for gRPC target names", addr)
	}
	tcfg, err := f.tlsConfig()
	if err != nil {
		return nil, err
	}
	tok, err := f.token()
	if err != nil {
		return nil, err
	}
	var header map[string]string
	if tok != "" {
		header = map[string]string{"authorization": "Bearer " + tok}
	}
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	if tcfg != nil {
		tcfg.NextProtos = []string{"h2"}
		if tcfg.ServerName == "" {
			tcfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(nc, tcfg)
		tc.SetDeadline(time.Now().Add(timeout))
		if err := tc.Handshake(); err != nil {
			nc.Close()
			return nil, fmt.Errorf("connect %s: %w", addr, err)
		}
		tc.SetDeadline(time.Time{})
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			nc.Close()
			return nil, fmt.Errorf("connect %s: the server negotiated %q, not h2", addr, p)
		}
		nc = tc
	}
	c, err := loadgen.NewH2Conn(nc, addr, tcfg != nil, header, timeout)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", addr, err)
	}
	return c, nil
}

// firstAnswer sends one request and decodes its answer, so that the
// report says what the server answers (the load generator leaves answers
// undecoded): Place's policy, or the health check's status.
func firstAnswer(c grpc.ClientConnInterface, req *pb.PlaceRequest, health bool, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if health {
		resp, err := healthpb.NewHealthClient(c).Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			return "", fmt.Errorf("first health check: %w", err)
		}
		return "health " + resp.GetStatus().String(), nil
	}
	resp, err := pb.NewSchedulerClient(c).Place(ctx, req)
	if err != nil {
		return "", fmt.Errorf("first Place: %w", err)
	}
	answer := resp.GetPolicy()
	if resp.GetReason() != "" {
		answer += " (" + resp.GetReason() + ")"
	}
	if !resp.GetPlaced() {
		answer += ", not placed"
	}
	return answer, nil
}

// waitReady connects c and waits until it is ready or timeout passes.
func waitReady(c *grpc.ClientConn, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c.Connect()
	for s := c.GetState(); s != connectivity.Ready; s = c.GetState() {
		if !c.WaitForStateChange(ctx, s) {
			return fmt.Errorf("not ready after %v (%v)", timeout, s)
		}
		if s == connectivity.Shutdown {
			return errors.New("connection shut down")
		}
	}
	return nil
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

// benchReport is what drover bench place prints (-json: as JSON).
type benchReport struct {
	Addr        string  `json:"addr"`
	Method      string  `json:"method"`
	Rate        float64 `json:"rate"`
	Requests    int     `json:"requests"`
	Conns       int     `json:"conns"`
	Concurrency int     `json:"concurrency"`
	// Client is the generator's client: h2 (lean) or grpc (grpc-go).
	Client       string `json:"client"`
	RequestBytes int    `json:"request_bytes"`
	// Answer is the policy of the first answer (decoded once, before the run).
	Answer  string `json:"answer"`
	Nodes   int    `json:"nodes"`
	Workers int    `json:"workers"`

	Sent     uint64            `json:"sent"`
	OK       uint64            `json:"ok"`
	Errors   map[string]uint64 `json:"errors"`
	Achieved float64           `json:"achieved_rate"`
	ElapsedS float64           `json:"elapsed_s"`
	// Latency is from each request's intended send time.
	Latency loadgen.Summary `json:"latency"`
	// Tail is the latency distribution's tail, one point per non-empty
	// histogram bucket (loadgen.Histogram.Tail), for drover bench plot.
	Tail []loadgen.TailPoint `json:"tail"`
	// Lag is each request's send time minus its intended send time.
	Lag loadgen.Summary `json:"lag"`

	ClientCPUS            float64 `json:"client_cpu_s"`
	ClientCPUPerRequestUS float64 `json:"client_cpu_us_per_request"`
	ClientCores           float64 `json:"client_cores"`

	Server *benchServer `json:"server,omitempty"`
}

// benchServer is the server's side of a report, from /proc.
type benchServer struct {
	PID             int     `json:"pid"`
	CPUS            float64 `json:"cpu_s"`
	CPUPerRequestUS float64 `json:"cpu_us_per_request"`
	Cores           float64 `json:"cores"`
	PeakRSSMB       float64 `json:"peak_rss_mib"`
	HWMMB           float64 `json:"vmhwm_mib"`
}

func (r benchReport) print(w io.Writer) {
	call := fmt.Sprintf("Place on %s: %d nodes, %d workers (%d bytes)", r.Addr, r.Nodes, r.Workers, r.RequestBytes)
	if r.Method != pb.Scheduler_Place_FullMethodName {
		call = fmt.Sprintf("%s on %s (%d bytes)", r.Method, r.Addr, r.RequestBytes)
	}
	fmt.Fprintf(w, "%s; asked %g/s, %d requests, %d connections, %d in-flight slots, %s client\n",
		call, r.Rate, r.Requests, r.Conns, r.Concurrency, r.Client)
	errs := "none"
	if len(r.Errors) > 0 {
		var parts []string
		for c, n := range r.Errors {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
		sort.Strings(parts)
		errs = strings.Join(parts, ", ")
	}
	fmt.Fprintf(w, "answer: %s\n", r.Answer)
	fmt.Fprintf(w, "sent %d, ok %d, errors %s; achieved %.0f/s over %.2f s\n", r.Sent, r.OK, errs, r.Achieved, r.ElapsedS)
	pct := func(s loadgen.Summary) string {
		return fmt.Sprintf("p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f ms (mean %.3f)", s.P50, s.P90, s.P99, s.P999, s.Max, s.Mean)
	}
	fmt.Fprintf(w, "latency from intended send: %s\n", pct(r.Latency))
	fmt.Fprintf(w, "send lag (sent - intended): %s\n", pct(r.Lag))
	fmt.Fprintf(w, "client CPU %.2f s = %.1f us/request (%.2f cores)\n", r.ClientCPUS, r.ClientCPUPerRequestUS, r.ClientCores)
	if s := r.Server; s != nil {
		fmt.Fprintf(w, "server (pid %d) CPU %.2f s = %.1f us/request (%.2f cores); RSS peak %.1f MiB (VmHWM %.1f MiB)\n",
			s.PID, s.CPUS, s.CPUPerRequestUS, s.Cores, s.PeakRSSMB, s.HWMMB)
	}
}
