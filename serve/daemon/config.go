package daemon

import (
	"fmt"
	"io"
	"time"

	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/state"
)

// Config is a policy server's configuration: `drover serve`'s flags, one
// field each (the flag's name is in the field's comment). Run's errors
// name the flags, since that is where a user sets them. Zero durations
// and sizes are taken as they are, not defaulted: Defaults returns the
// values `drover serve` starts from.
type Config struct {
	// Addr is the gRPC listen address (-addr). A port alone (":50051" or
	// "50051") binds 127.0.0.1, as for every address here; name the host
	// (0.0.0.0:50051) to serve other hosts.
	Addr string
	// MetricsAddr is the Prometheus /metrics and /healthz listen address
	// (-metrics-addr; empty: none). It is plain HTTP without
	// authentication.
	MetricsAddr string
	// PlaceAddr is the fast listener's address for the hot unary calls
	// (-place-addr; empty: none; see Server.ServeFast).
	PlaceAddr string
	// ExtenderAddr is the kube-scheduler extender's HTTP address
	// (-extender-addr; empty: none; see serve/extender).
	ExtenderAddr string
	// TLSCert and TLSKey serve TLS on the gRPC, fast and extender
	// listeners (-tls-cert, -tls-key); TLSClientCA requires client
	// certificates signed by it (-tls-client-ca, mTLS).
	TLSCert, TLSKey, TLSClientCA string
	// TokenFile holds the bearer token every call must carry
	// (-token-file). Without TLS it is refused unless the gRPC and fast
	// listeners are on loopback.
	TokenFile string
	// Checkpoints is a directory of numbered checkpoint versions, watched
	// for hot reload, or one checkpoint (-checkpoints; empty: the
	// embedded pretrained placement policy, not converged).
	Checkpoints string
	// Heuristic is the fallback heuristic, a policies/builtin name
	// (-heuristic).
	Heuristic string
	// Route, when set, has the server answer Route calls for LLM
	// inference requests (serve.WithRouter; -route).
	Route *serve.RouteConfig
	// MM, when set, has the server answer RouteMM and Scale calls for a
	// multimodal deployment (serve.WithMM; -mm-model).
	MM *serve.MMConfig
	// Canary is the share of jobs routed to a new converged version
	// before it is promoted (-canary), after PromoteAfter learned answers
	// (-promote-after; 0: never).
	Canary       float64
	PromoteAfter int
	// Margin is the time before a request's deadline by which the learned
	// policy must answer (-deadline-margin); ModelTimeout its limit
	// without a deadline (-model-timeout); Poll the checkpoint
	// directory's polling interval (-poll).
	Margin, ModelTimeout, Poll time.Duration
	// MaxRequestBytes is the largest request accepted (-max-request-bytes).
	MaxRequestBytes int
	// GRPCConns, FastConns and HTTPConns bound the connections of the
	// gRPC listener, the fast listener and each HTTP listener (extender,
	// metrics): how many, how many from one peer, and (gRPC, fast) the
	// handshake and idle timeouts (no flags but MaxConnsPerPeer's; zero
	// fields take the serve.Default*Conns values, negative ones turn a
	// limit off; see serve.ConnLimits).
	GRPCConns, FastConns, HTTPConns serve.ConnLimits
	// MaxConnsPerPeer, when not zero, replaces the MaxConnsPerPeer of
	// GRPCConns, FastConns and HTTPConns (-max-conns-per-peer; negative:
	// no per-peer limit, for clients that all reach the server from one
	// proxy or NAT address).
	MaxConnsPerPeer int
	// ShedAbove is the count of concurrent Place calls above which the
	// first-fit heuristic answers (-shed-above), MaxInFlight the count
	// above which Place answers ResourceExhausted (-max-inflight); 0: off.
	ShedAbove, MaxInFlight int
	// ShutdownGrace is the time the calls in progress get to finish once
	// the context ends (-shutdown-grace).
	ShutdownGrace time.Duration
	// LogDir, when set, receives the decision log (datasets/declog), the
	// agents' telemetry (datasets/telemlog) and, with Route, the route log
	// (serve/routelog, routes.jsonl) and, with MM, the scale and
	// multimodal route logs (serve/mmlog) (-log-dir); LogSeal is how often
	// the current log file is sealed (-log-seal).
	LogDir  string
	LogSeal time.Duration
	// Stateless answers from each request alone (-stateless): no
	// telemetry service, no live state.
	Stateless bool
	// StateDir, when set, keeps the live state in StateDir/state.json:
	// restored at start, saved every StateEvery and at shutdown
	// (-state-dir, -state-every).
	StateDir   string
	StateEvery time.Duration
	// IdleRelease is how often the server checks whether it has fallen
	// quiet after a burst, to give the memory the burst freed back to the
	// system (see release.go); 0: every 10 s; negative: never.
	IdleRelease time.Duration
	// StaleAfter is how long an agent may be silent before its node is
	// stale and avoided (-stale-after).
	StaleAfter time.Duration
	// MaxWork bounds a Place request's nodes times its job's workers
	// (-max-work; see serve.Limits.MaxWork): a request above it is
	// refused.
	MaxWork int
	// Live bounds the live state whatever agents and reports send (see
	// state.Config): the nodes (-live-max-nodes), the jobs
	// (-live-max-jobs), the jobs one node's agent may create
	// (-live-max-jobs-per-node), the workers of one job whose iteration
	// times are kept (-live-max-job-workers) and the iteration times kept
	// over all jobs (-live-max-iteration-times).
	Live LiveLimits
	// Switch is how a view-level learned checkpoint (strn-rl, sas-rl) is
	// served (-switch, -gate-*).
	Switch serve.SwitchConfig
	// Loader reads a view-level learned checkpoint (nil: policies/direct's
	// Load).
	Loader serve.PolicyLoader
	// Out receives what the server reports: its addresses, recovered
	// logs, reloads, warnings, shutdown (nil: discarded).
	Out io.Writer
	// Ready, when set, is called once every listener listens, with their
	// addresses, after the addresses are printed to Out.
	Ready func(Addrs)
}

// LiveLimits are the live state's bounds that `drover serve` sets by
// flag, each a state.Config field of the same name.
type LiveLimits struct {
	MaxNodes, MaxJobs, MaxJobsPerNode, MaxJobWorkers, MaxIterationTimes int
}

// CheckLimits refuses a MaxWork or a live-state bound that is not
// positive, naming its flag (zero would mean the library's default
// silently).
func (c Config) CheckLimits() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"-max-work", c.MaxWork}, {"-live-max-nodes", c.Live.MaxNodes}, {"-live-max-jobs", c.Live.MaxJobs},
		{"-live-max-jobs-per-node", c.Live.MaxJobsPerNode}, {"-live-max-job-workers", c.Live.MaxJobWorkers},
		{"-live-max-iteration-times", c.Live.MaxIterationTimes}} {
		if f.v <= 0 {
			return fmt.Errorf("%s %d: want a positive bound", f.name, f.v)
		}
	}
	return nil
}

// stateConfig is the live state's configuration of c.
func (c Config) stateConfig() state.Config {
	return state.Config{StaleAfter: c.StaleAfter, MaxNodes: c.Live.MaxNodes, MaxJobs: c.Live.MaxJobs,
		MaxJobsPerNode: c.Live.MaxJobsPerNode, MaxJobWorkers: c.Live.MaxJobWorkers, MaxIterationTimes: c.Live.MaxIterationTimes}
}

// limits is the core's request limits of c.
func (c Config) limits() serve.Limits {
	l := serve.DefaultLimits
	l.MaxWork = c.MaxWork
	return l
}

// Addrs are the addresses a running server listens on; empty for a
// listener it does not open.
type Addrs struct {
	// GRPC is the gRPC listener's, Metrics the /metrics listener's, Fast
	// the fast listener's and Extender the extender's.
	GRPC, Metrics, Fast, Extender string
}

// Defaults is `drover serve`'s configuration without flags.
func Defaults() Config {
	live := state.Config{}.WithDefaults()
	return Config{
		Addr:            "127.0.0.1:50051",
		MetricsAddr:     "127.0.0.1:9464",
		Heuristic:       "strn",
		PromoteAfter:    1000,
		Margin:          2 * time.Millisecond,
		ModelTimeout:    50 * time.Millisecond,
		Poll:            2 * time.Second,
		MaxRequestBytes: 4 << 20,
		GRPCConns:       serve.DefaultGRPCConns,
		FastConns:       serve.DefaultFastConns,
		HTTPConns:       serve.DefaultHTTPConns,
		ShedAbove:       64,
		MaxInFlight:     1024,
		ShutdownGrace:   10 * time.Second,
		LogSeal:         time.Minute,
		StateEvery:      30 * time.Second,
		StaleAfter:      15 * time.Second,
		MaxWork:         serve.DefaultMaxWork,
		Live: LiveLimits{MaxNodes: live.MaxNodes, MaxJobs: live.MaxJobs, MaxJobsPerNode: live.MaxJobsPerNode,
			MaxJobWorkers: live.MaxJobWorkers, MaxIterationTimes: live.MaxIterationTimes},
		Switch: serve.SwitchConfig{Mode: serve.SwitchGate, Every: 100, MinArrivals: 30, Window: 200,
			Seeds: 8, Margin: 0.02, Metric: serve.MetricTTA},
	}
}
