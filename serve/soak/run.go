package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
)

// Config is a soak's load and bounds. Defaults gives issue 32's.
type Config struct {
	// Addrs are the server's listeners.
	Addrs Addrs
	// Duration is the measured run; Warmup the same load before the
	// baseline; Window the width of the Place windows and the interval
	// of the lockout probes; SampleEvery the interval of the server's
	// samples under load; Settle bounds the wait, after the clients
	// leave, for goroutines and RSS to come back within the limits.
	Duration, Warmup, Window, SampleEvery, Settle time.Duration
	// PlaceRate is the well-behaved client's Place calls per second,
	// through PlaceVia ("fast": -place-addr, "grpc": -addr), each with
	// PlaceTimeout, at most PlaceSlots in flight.
	PlaceRate    float64
	PlaceVia     string
	PlaceTimeout time.Duration
	PlaceSlots   int
	// AgentRate is fake agent sessions started per second, each
	// connected for about AgentLife, for Nodes node names (the Place
	// request's nodes).
	AgentRate float64
	AgentLife time.Duration
	Nodes     int
	// Jobs is the distinct jobs reported over the run (and a share of
	// it, Warmup/Duration, in the warm-up), each with ReportWorkers
	// workers of ReportIterations iteration times, at most ReportSlots
	// jobs at once.
	Jobs, ReportWorkers, ReportIterations, ReportSlots int
	// SlowConns is the slow connections held on each listener, each
	// trickling a byte (extender, metrics) or nothing every SlowEvery,
	// from SlowPeers source addresses (127.0.0.2, 127.0.0.3, ...; the
	// server's per-peer limits count each apart; 0: the system's
	// choice, 127.0.0.1). Every other client, the sampler and the
	// probes included, connects from 127.0.0.1.
	SlowConns, SlowPeers int
	SlowEvery            time.Duration
	// Limits are the verdicts' bounds.
	Limits Limits
	// HostileCommand, when set, is the command line of a child process
	// that runs the hostile clients (agents, Reports, slowloris: its
	// standard input gets a HostileSpec as JSON, which ServeHostile
	// reads); otherwise they run in this process, where with one core
	// thousands of slow connections delay the well-behaved client's
	// wake-ups by tens to hundreds of milliseconds (Go's scheduler
	// queues it behind them; the OS's, between two processes, does not).
	HostileCommand []string `json:"-"`
	// Progress, when set, receives a line per sample.
	Progress io.Writer `json:"-"`
	// Alive, when set, says whether the server still runs: a sample
	// that fails is counted and skipped, and the soak stops with
	// Alive's error.
	Alive func() error `json:"-"`
}

// Defaults returns issue 32's soak on PortAddrs(50181): 10 minutes,
// two agent sessions a second, 20,000 jobs, 1,100 slow connections on
// each listener (more than the fast listener's 1,024 slots), Place at
// 100/s through the fast listener, p99 under 5 ms in every 10 s window,
// goroutines and RSS back within 10%.
func Defaults() Config {
	return Config{Addrs: PortAddrs(50181),
		Duration: 10 * time.Minute, Warmup: 20 * time.Second, Window: 10 * time.Second, SampleEvery: 5 * time.Second, Settle: 3 * time.Minute,
		PlaceRate: 100, PlaceVia: "fast", PlaceTimeout: time.Second, PlaceSlots: 16,
		AgentRate: 2, AgentLife: time.Second, Nodes: 64,
		Jobs: 20000, ReportWorkers: 4, ReportIterations: 16, ReportSlots: 8,
		SlowConns: 1100, SlowPeers: 1, SlowEvery: 5 * time.Second,
		Limits: Limits{Growth: 0.10, P99: 5 * time.Millisecond}}
}

// Validate refuses a configuration the soak cannot run, naming the field.
func (c Config) Validate() error {
	pos := func(name string, d time.Duration) error {
		if d <= 0 {
			return fmt.Errorf("soak: %s %v: want > 0", name, d)
		}
		return nil
	}
	err := errors.Join(pos("Duration", c.Duration), pos("Window", c.Window), pos("SampleEvery", c.SampleEvery), pos("AgentLife", c.AgentLife),
		pos("PlaceTimeout", c.PlaceTimeout), pos("SlowEvery", c.SlowEvery))
	switch {
	case err != nil:
		return err
	case c.Warmup < 0 || c.Settle < 0:
		return fmt.Errorf("soak: Warmup %v, Settle %v: want >= 0", c.Warmup, c.Settle)
	case !(c.PlaceRate > 0) || math.IsInf(c.PlaceRate, 0) || !(c.AgentRate > 0) || math.IsInf(c.AgentRate, 0):
		return fmt.Errorf("soak: PlaceRate %g, AgentRate %g: want finite rates > 0", c.PlaceRate, c.AgentRate)
	case c.PlaceVia != "fast" && c.PlaceVia != "grpc":
		return fmt.Errorf("soak: PlaceVia %q: want fast or grpc", c.PlaceVia)
	case c.Nodes <= 0 || c.PlaceSlots <= 0 || c.ReportSlots <= 0 || c.ReportWorkers <= 0 || c.ReportIterations <= 0:
		return fmt.Errorf("soak: Nodes %d, PlaceSlots %d, ReportSlots %d, ReportWorkers %d, ReportIterations %d: want > 0",
			c.Nodes, c.PlaceSlots, c.ReportSlots, c.ReportWorkers, c.ReportIterations)
	case c.Jobs < 0 || c.SlowConns < 0:
		return fmt.Errorf("soak: Jobs %d, SlowConns %d: want >= 0", c.Jobs, c.SlowConns)
	case c.SlowPeers < 0 || c.SlowPeers > 250:
		return fmt.Errorf("soak: SlowPeers %d: want 0 to 250 (127.0.0.2 to 127.0.0.251)", c.SlowPeers)
	case !(c.Limits.Growth >= 0) || c.Limits.P99 <= 0:
		return fmt.Errorf("soak: Limits %+v: want Growth >= 0 and P99 > 0", c.Limits)
	}
	return nil
}

// Result is what a soak measured and judged.
type Result struct {
	// Samples are the server's readings, in order, every phase.
	Samples []Sample
	// Windows are the run's Place windows, from RunStart (the run's
	// start from the soak's); Overall sums them.
	Windows  []WindowStat
	RunStart time.Duration
	// Window is the windows' width.
	Window  time.Duration
	Overall WindowStat
	// Load is what the run's clients delivered.
	Load Load
	// Checks are the verdicts (Judge).
	Checks []Check
}

// Run soaks the server at c.Addrs: the warm-up, the quiet that gives
// the baseline, the measured run, and the wait after the clients left;
// then it judges. It returns what it measured with an error when the
// server stopped answering its metrics.
func Run(ctx context.Context, c Config) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	r := &runner{c: c, sc: NewScraper(c.Addrs.Metrics), start: time.Now()}
	r.sc.Listener, r.sc.Bound = c.PlaceVia, c.Limits.P99
	res := Result{Window: c.Window}
	if c.Warmup > 0 {
		warmJobs := int(math.Round(float64(c.Jobs) * c.Warmup.Seconds() / c.Duration.Seconds()))
		if _, err := r.load(ctx, PhaseWarmup, c.Warmup, warmJobs, NewWindows(c.Window)); err != nil {
			return r.result(res), err
		}
	}
	if err := r.settle(ctx, PhaseBaseline, time.Minute, r.stable); err != nil {
		return r.result(res), err
	}
	w := NewWindows(c.Window)
	res.RunStart = time.Since(r.start)
	load, err := r.load(ctx, PhaseRun, c.Duration, c.Jobs, w)
	res.Load, res.Windows, res.Overall = load, w.Stats(), w.Overall()
	if err != nil {
		return r.result(res), err
	}
	err = r.settle(ctx, PhaseLeave, c.Settle, r.backWithin)
	res = r.result(res)
	res.Checks = Judge(c.Limits, res.Samples, res.Windows, res.Load)
	return res, err
}

// runner holds a soak's samples.
type runner struct {
	c       Config
	sc      *Scraper
	start   time.Time
	mu      sync.Mutex
	samples []Sample
	failed  map[string]int // failed samples by phase
}

func (r *runner) result(res Result) Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res.Samples = append([]Sample(nil), r.samples...)
	return res
}

// sample reads the server once into phase. A failed reading is
// counted and skipped (a slowloris may hold the metrics listener); it
// is an error only when Config.Alive says the server is gone.
func (r *runner) sample(ctx context.Context, phase string) (Sample, error) {
	s, err := r.sc.Sample(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if r.failed == nil {
			r.failed = map[string]int{}
		}
		r.failed[phase]++
		if r.c.Alive != nil {
			if aerr := r.c.Alive(); aerr != nil {
				return s, fmt.Errorf("soak: the server is gone (%v); last sample: %w", aerr, err)
			}
		}
		if r.c.Progress != nil {
			fmt.Fprintf(r.c.Progress, "%7.1f s  %-8s sample failed: %v\n", time.Since(r.start).Seconds(), phase, err)
		}
		return s, nil
	}
	s.At, s.Phase = time.Since(r.start), phase
	cpu := "   -" // the server's cores since the previous sample, at least half a second before
	if n := len(r.samples); n > 0 && s.At-r.samples[n-1].At >= time.Second/2 {
		cpu = fmt.Sprintf("%3.0f%%", 100*(s.CPU-r.samples[n-1].CPU)/(s.At-r.samples[n-1].At).Seconds())
	}
	r.samples = append(r.samples, s)
	if r.c.Progress != nil {
		fmt.Fprintf(r.c.Progress, "%7.1f s  %-8s goroutines %6.0f  rss %7.1f MiB  heap %6.1f MiB  fds %5.0f  live jobs %6.0f  nodes %3.0f  server cpu %s  loadavg %.1f\n",
			s.At.Seconds(), phase, s.Goroutines, s.RSS/(1<<20), s.Heap/(1<<20), s.FDs, s.LiveJobs, s.LiveNodes, cpu, s.Load1)
	}
	return s, nil
}

// settle samples every second (every two in PhaseLeave) until done says
// so or bound passes.
func (r *runner) settle(ctx context.Context, phase string, bound time.Duration, done func() bool) error {
	every := time.Second
	if phase == PhaseLeave {
		every = 2 * time.Second
	}
	for end := time.Now().Add(bound); ; {
		if _, err := r.sample(ctx, phase); err != nil {
			return err
		}
		if done() || !time.Now().Before(end) || !sleepCtx(ctx, every) {
			return ctx.Err()
		}
	}
}

// stable reports whether the last three samples (two seconds) have the
// same goroutine count and RSS within 1% of each other: the server is
// quiet, and the last one is the baseline.
func (r *runner) stable() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stable(r.samples, PhaseBaseline, 3, 0.01)
}

// backWithin reports whether the last three samples (four seconds) are
// within the limits of the baseline, for goroutines and RSS both.
func (r *runner) backWithin() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return BackWithin(r.samples, 3, r.c.Limits.Growth)
}

// waitReady connects conn and waits (at most 10 s) until it is ready.
func waitReady(ctx context.Context, conn *grpc.ClientConn) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn.Connect()
	for s := conn.GetState(); s != connectivity.Ready; s = conn.GetState() {
		if !conn.WaitForStateChange(ctx, s) {
			return fmt.Errorf("not ready in 10 s (%v)", s)
		}
	}
	return nil
}

// dial opens a grpc-go connection to addr (plaintext: the soak runs
// against a loopback server).
func dial(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
}
