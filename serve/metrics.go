package serve

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/drover-sched/drover/policies/gate"
	"github.com/drover-sched/drover/serve/fast"
)

// The listener label of the request metrics: grpc-go's server (-addr)
// and the fast listener (-place-addr, ServeFast).
const (
	listenerGRPC = "grpc"
	listenerFast = "fast"
)

// Metrics are the server's Prometheus metrics, on a registry of their own
// (no global state). Serve them with Handler on a separate listener.
type Metrics struct {
	// Registry holds every metric below plus the Go runtime and process
	// collectors.
	Registry *prometheus.Registry

	requests  *prometheus.CounterVec   // method, code, listener
	latency   *prometheus.HistogramVec // method, listener
	inflight  prometheus.Gauge
	decisions *prometheus.CounterVec // source, version, fallback
	reloads   *prometheus.CounterVec // result
	outcomes  *prometheus.CounterVec // kind
	sinkErr   prometheus.Counter
	version   prometheus.Gauge

	// The switch of a view-level learned policy (SwitchConfig).
	learnedAnswering prometheus.Gauge
	answeringSince   prometheus.Gauge
	switches         *prometheus.CounterVec // to
	gate             gateMetrics
	gateTeacherGain  prometheus.Gauge
	shadow           *prometheus.CounterVec // result

	// Route calls and the route gate (RouteConfig).
	routes       *prometheus.CounterVec // source, fallback
	routeLearned prometheus.Gauge
	routeGate    gateMetrics
	scaleGate    gateMetrics

	// Multimodal calls (MMConfig).
	mmRoutes     *prometheus.CounterVec // source, fallback
	scales       *prometheus.CounterVec // source, fallback
	scaleLearned prometheus.Gauge
	scaleSizes   *prometheus.GaugeVec // pool
}

// NewMetrics returns the metrics on a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drover_grpc_requests_total", Help: "gRPC requests handled, by method, status code and listener (grpc: -addr, grpc-go's server; fast: -place-addr).",
		}, []string{"method", "code", "listener"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "drover_grpc_request_duration_seconds", Help: "gRPC request latency inside the server, by method and listener (grpc, fast).",
			Buckets: []float64{25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 0.1, 0.25, 1},
		}, []string{"method", "listener"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "drover_grpc_inflight_requests", Help: "Place requests being handled now.",
		}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drover_decisions_total", Help: "Place decisions, by source (heuristic, learned), model version and fallback reason (\"\" when the learned policy answered).",
		}, []string{"source", "version", "fallback"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drover_checkpoint_reloads_total", Help: "Checkpoint versions examined by the watcher, by result (active, candidate, refused).",
		}, []string{"result"}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drover_outcomes_total", Help: "Reported job outcomes, by kind.",
		}, []string{"kind"}),
		sinkErr: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "drover_sink_errors_total", Help: "Records the decision sink failed to store.",
		}),
		version: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "drover_model_version", Help: "The active learned policy's version number (0: none).",
		}),
		learnedAnswering: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "drover_learned_answering", Help: "1 when the view-level learned policy answers (the gate switched to it), 0 when the heuristic does.",
		}),
		answeringSince: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "drover_answering_since_seconds", Help: "Unix time of the last switch between the heuristic and the view-level learned policy (0: none).",
		}),
		switches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drover_policy_switches_total", Help: "Switches of the answering policy by the gate, by the policy switched to (learned, heuristic).",
		}, []string{"to"}),
		gate: newGateMetrics(prometheus.CounterOpts{
			Name: "drover_gate_evaluations_total", Help: "Gate evaluations on a replay of the served arrivals, by result (passed, failed, error, waiting).",
		}, prometheus.GaugeOpts{
			Name: "drover_gate_lower_bound", Help: "The last gate verdict's lower confidence bound of the learned policy's relative gain over the heuristic.",
		}, prometheus.GaugeOpts{
			Name: "drover_gate_mean_gain", Help: "The last gate verdict's mean relative gain of the learned policy over the heuristic.",
		}),
		gateTeacherGain: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "drover_gate_teacher_mean_gain", Help: "The last gate evaluation's mean relative gain of the learned policy over its teacher (the policy it was cloned from), on the same replay; it does not decide the switch.",
		}),
		shadow: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drover_shadow_decisions_total", Help: "Decisions of the view-level learned policy in shadow, by result (decided, held, deadline, error, infeasible, overload).",
		}, []string{"result"}),
		routes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drover_route_decisions_total", Help: "Route decisions, by source (heuristic, learned) and fallback reason (\"\" when the learned router answered).",
		}, []string{"source", "fallback"}),
		routeLearned: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "drover_route_learned_answering", Help: "1 when the learned router answers Route calls, 0 when HACK's does.",
		}),
		routeGate: newGateMetrics(prometheus.CounterOpts{
			Name: "drover_route_gate_evaluations_total", Help: "Route gate evaluations on a replay of the routed requests, by result (passed, failed, error, waiting).",
		}, prometheus.GaugeOpts{
			Name: "drover_route_gate_lower_bound", Help: "The last route gate verdict's lower confidence bound of the learned router's relative gain in mean JCT over HACK's.",
		}, prometheus.GaugeOpts{
			Name: "drover_route_gate_mean_gain", Help: "The last route gate verdict's mean relative gain in mean JCT of the learned router over HACK's.",
		}),
		mmRoutes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drover_mm_route_decisions_total", Help: "RouteMM decisions (multimodal requests), by source and fallback reason.",
		}, []string{"source", "fallback"}),
		scales: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drover_scale_decisions_total", Help: "Scale decisions (multimodal pool sizes), by source (heuristic, learned) and fallback reason (\"\" when the learned autoscaler answered).",
		}, []string{"source", "fallback"}),
		scaleLearned: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "drover_scale_learned_answering", Help: "1 when the last Scale call was answered by the learned autoscaler, 0 when ModServe's rule answered.",
		}),
		scaleGate: newGateMetrics(prometheus.CounterOpts{
			Name: "drover_scale_gate_evaluations_total", Help: "Scale gate evaluations on a replay of the routed multimodal requests, by result (passed, failed, error, waiting).",
		}, prometheus.GaugeOpts{
			Name: "drover_scale_gate_lower_bound", Help: "The last Scale gate verdict's lower confidence bound of the learned autoscaler's relative gain in cost (GPU-hours + penalty x missed requests) over ModServe's rule.",
		}, prometheus.GaugeOpts{
			Name: "drover_scale_gate_mean_gain", Help: "The last Scale gate verdict's mean relative gain in cost of the learned autoscaler over ModServe's rule.",
		}),
		scaleSizes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "drover_scale_target_instances", Help: "The last Scale answer's target instances, by pool (image, text, mono).",
		}, []string{"pool"}),
	}
	m.Registry.MustRegister(m.requests, m.latency, m.inflight, m.decisions, m.reloads, m.outcomes, m.sinkErr, m.version,
		m.learnedAnswering, m.answeringSince, m.switches, m.gate.evals, m.gate.lower, m.gate.gain, m.gateTeacherGain, m.shadow,
		m.routes, m.routeLearned, m.routeGate.evals, m.routeGate.lower, m.routeGate.gain, m.mmRoutes, m.scales, m.scaleLearned, m.scaleSizes, m.scaleGate.evals, m.scaleGate.lower, m.scaleGate.gain,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler returns the /metrics HTTP handler.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// fast returns the fast listener's request metrics: the same series as
// the gRPC listener's, under the listener label "fast".
func (m *Metrics) fast() *fast.Metrics {
	l := prometheus.Labels{"listener": listenerFast}
	return &fast.Metrics{InFlight: m.inflight, Latency: m.latency.MustCurryWith(l), Requests: m.requests.MustCurryWith(l)}
}

// gateMetrics are one gate's metrics: its evaluations by result (passed,
// failed, error, waiting) and the last verdict's lower bound and mean gain.
type gateMetrics struct {
	evals       *prometheus.CounterVec // result
	lower, gain prometheus.Gauge
}

// newGateMetrics makes a gate's metrics from their options.
func newGateMetrics(evals prometheus.CounterOpts, lower, gain prometheus.GaugeOpts) gateMetrics {
	return gateMetrics{evals: prometheus.NewCounterVec(evals, []string{"result"}), lower: prometheus.NewGauge(lower), gain: prometheus.NewGauge(gain)}
}

// record counts an evaluation and, with a verdict, sets the gauges.
func (g gateMetrics) record(result string, v *gate.Verdict) {
	g.evals.WithLabelValues(result).Inc()
	if v != nil {
		g.lower.Set(v.Lower)
		g.gain.Set(v.MeanGain)
	}
}
