package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/drover-sched/drover/datasets/telemlog"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/remote"
)

// ManifestFile is the name of the run manifest drover sim --remote
// --record DIR writes into DIR, beside the server's logs.
const ManifestFile = "run.json"

// simTelemetryDir is the subdirectory of drover sim --record's directory
// that holds the simulated nodes' telemetry.
const simTelemetryDir = "simulated-telemetry"

// runManifest is what drover eval --log needs to rebuild a recorded run's
// cluster and model: drover sim's flags as the run resolved them.
type runManifest struct {
	// Version is the manifest's version (1).
	Version int `json:"version"`
	// Workload and Format are the workload flags; Jobs the jobs it held.
	Workload string `json:"workload"`
	Format   string `json:"format"`
	Jobs     int    `json:"jobs"`
	// Model is the resolved throughput model, Profiles the -profiles flag.
	Model    string `json:"model"`
	Profiles string `json:"profiles"`
	// Cluster, Nodes and GPUsPerNode are the cluster flags; NodeCap the
	// node cap LoadCluster was given (0: none); ClusterDesc describes it.
	Cluster     string `json:"cluster"`
	NodeCap     int    `json:"node_cap"`
	GPUsPerNode int    `json:"gpus_per_node"`
	ClusterDesc string `json:"cluster_desc"`
	// Interval and RestartDelay are the scheduling flags.
	Interval     float64 `json:"interval_s"`
	RestartDelay float64 `json:"restart_delay_s"`
	// Seed seeds the background process and the jitter.
	Seed uint64 `json:"seed"`
	// Stragglers says the per-worker model ran, with the options after it
	// (Regime resolved).
	Stragglers bool    `json:"stragglers"`
	Background string  `json:"background"`
	Load       float64 `json:"load"`
	NoJitter   bool    `json:"no_jitter"`
	Threshold  float64 `json:"straggler_threshold"`
	Mitigation string  `json:"mitigation"`
	Regime     string  `json:"regime"`
	// Epoch is the wall-clock time of simulation time 0 in the logs.
	Epoch time.Time `json:"epoch"`
	// TelemetryStep is the seconds between recorded telemetry samples
	// (0: none recorded), and TelemetryDir the directory, relative to the
	// manifest's, that holds them ("": the manifest's own). The simulated
	// telemetry has its own directory so that its files never share
	// numbers with those of the server's telemetry writer (drover serve
	// -log-dir writes its agents' samples beside the decision log).
	TelemetryStep float64 `json:"telemetry_step_s"`
	TelemetryDir  string  `json:"telemetry_dir,omitempty"`
}

func writeManifest(dir string, m runManifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, ManifestFile), func(f io.Writer) error {
		_, err := f.Write(append(b, '\n'))
		return err
	})
}

func readManifest(dir string) (*runManifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	var m runManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.Version != 1 {
		return nil, fmt.Errorf("%s: version %d, want 1", filepath.Join(dir, ManifestFile), m.Version)
	}
	return &m, nil
}

// recorder is the simulated cluster's stand-in for its agents: it wraps
// the per-worker model and, at every refresh period boundary, writes each
// node's total load (env.Drover's NodeLoad: background plus the placed
// workers) to the telemetry log, as an agent's sample reaches the server.
// The simulator refreshes the running jobs at each boundary after the
// jobs ending there have left and before the decision point's placements;
// the recorder writes the loads then. A boundary without a refresh had no
// job running: its sample is the background alone (capped at 1, as
// NodeLoad caps it).
type recorder struct {
	*env.Drover
	step     float64
	next     int  // index of the next boundary to record
	applying bool // inside Sim.Apply: the refreshes of new placements
	ids      []string
	epoch    time.Time
	w        *telemlog.Writer
	err      error
}

// Refresh implements env.Dynamic: it records the boundaries up to now,
// then refreshes j.
func (r *recorder) Refresh(j *env.Job, c *env.Cluster, now float64) {
	if !r.applying {
		r.recordUntil(now)
	}
	r.Drover.Refresh(j, c, now)
}

// recordUntil records every boundary at or before now not recorded yet:
// the one at now with the model's loads, earlier ones (no refresh: no job
// ran) with the background alone.
func (r *recorder) recordUntil(now float64) {
	for r.err == nil {
		t := float64(r.next) * r.step
		if t > now {
			return
		}
		for n, id := range r.ids {
			var u env.Usage
			if t == now {
				u = r.NodeLoad(n, t)
			} else if r.Workers.Background != nil {
				u = r.Workers.Background.Load(n, t)
				u.CPU, u.MemBW, u.Net = min(u.CPU, 1), min(u.MemBW, 1), min(u.Net, 1)
			}
			at := r.epoch.Add(time.Duration(math.Round(t * 1e9)))
			if err := r.w.Write(telemlog.Raw(id, at, u.CPU, u.MemBW, u.Net)); err != nil {
				r.err = err
				return
			}
		}
		r.next++
	}
}

// runRecorded replays o under the remote policy r as trace.Run does, and
// with tw set writes the simulated nodes' telemetry to it (per-worker
// model only). It reports the finishes after the last decision point
// (r.Flush). The returned step is the telemetry's (0: none recorded).
func runRecorded(o trace.Options, r *remote.Remote, tw *telemlog.Writer, epoch time.Time) (*trace.Result, float64, error) {
	if o.Workload == nil || len(o.Workload.Jobs) == 0 {
		return nil, 0, errors.New("empty workload")
	}
	c := *o.Cluster
	gpn := 0
	for _, n := range c.Nodes {
		gpn = max(gpn, n.GPUs)
	}
	m, err := trace.NewModel(o.Model, o.Profiles, gpn)
	if err != nil {
		return nil, 0, err
	}
	var rec *recorder
	if o.Stragglers != nil {
		d, ok := m.(*env.Drover)
		if !ok {
			return nil, 0, fmt.Errorf("the per-worker straggler model needs the %s model, not %s", trace.ModelDrover, o.Model)
		}
		st := *o.Stragglers
		if st.Regime == trace.RegimeAuto {
			st.Regime = trace.AutoRegime(o.Workload.Format, &c)
		}
		if d.Workers, err = st.Workers(len(c.Nodes)); err != nil {
			return nil, 0, err
		}
		if tw != nil {
			rec = &recorder{Drover: d, step: d.Period(), w: tw, epoch: epoch, ids: make([]string, len(c.Nodes))}
			for i := range c.Nodes {
				rec.ids[i] = remote.NodeID(&c, i)
			}
			m = rec
		}
	}
	iv := o.Interval
	if iv < 0 {
		iv = 0
		if o.Model == trace.ModelPollux {
			iv = 60
		}
	}
	rd := o.RestartDelay
	if rd < 0 {
		rd = env.DefaultRestartDelay
	}
	s, err := env.New(env.Config{Cluster: c, Model: m, Interval: iv, RestartDelay: rd, Log: o.Log}, trace.Specs(o.Workload))
	if err != nil {
		return nil, 0, err
	}
	for {
		v, err := s.Next()
		if errors.Is(err, env.ErrDone) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		ds, err := r.Schedule(v)
		if err != nil {
			return nil, 0, fmt.Errorf("policy at t=%.0f s: %w", s.Now(), err)
		}
		if rec != nil {
			rec.applying = true
		}
		err = s.Apply(ds)
		if rec != nil {
			rec.applying = false
		}
		if err != nil {
			return nil, 0, fmt.Errorf("at t=%.0f s: %w", s.Now(), err)
		}
		if o.Progress != nil {
			o.Progress(s.Finished(), len(o.Workload.Jobs))
		}
	}
	if o.Progress != nil {
		o.Progress(s.Finished(), len(o.Workload.Jobs))
	}
	step := 0.0
	if rec != nil {
		rec.recordUntil(s.Now())
		if rec.err != nil {
			return nil, 0, fmt.Errorf("telemetry: %w", rec.err)
		}
		step = rec.step
	}
	if err := r.Flush(); err != nil {
		return nil, 0, err
	}
	return &trace.Result{Summary: s.Summary(), Jobs: s.Results(), Events: s.Events(), Sim: s}, step, nil
}

// runRemote runs the simulation of opts under the remote policy rem; with
// dir set it records the nodes' telemetry there (datasets/telemlog) and
// writes the run manifest m (completed with the telemetry step).
func runRemote(rem *remote.Remote, opts trace.Options, dir string, m runManifest) (*trace.Result, error) {
	if dir == "" {
		res, _, err := runRecorded(opts, rem, nil, m.Epoch)
		return res, err
	}
	tw, err := telemlog.NewWriter(filepath.Join(dir, simTelemetryDir), telemlog.Options{SealInterval: -1})
	if err != nil {
		return nil, err
	}
	res, step, err := runRecorded(opts, rem, tw, m.Epoch)
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	m.TelemetryStep, m.TelemetryDir = step, simTelemetryDir
	if err := writeManifest(dir, m); err != nil {
		return nil, err
	}
	return res, nil
}

// dialServer connects to a drover server: insecure unless caFile is set
// (then TLS verified against it), with the bearer token of tokenFile on
// every call when set.
func dialServer(addr, tokenFile, caFile string) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: x509.NewCertPool()}
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificates", caFile)
		}
		creds = credentials.NewTLS(cfg)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.WithPerRPCCredentials(serve.BearerToken{Token: strings.TrimSpace(string(b)), AllowInsecure: caFile == ""}))
	}
	return grpc.NewClient(addr, opts...)
}
