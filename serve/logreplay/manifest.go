package logreplay

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/drover-sched/drover/internal/inputfile"
)

// ManifestFile is the name of the run manifest drover sim --remote
// --record DIR writes into DIR, beside the server's logs.
const ManifestFile = "run.json"

// TelemetryDir is the subdirectory of drover sim --record's directory
// that holds the simulated nodes' telemetry.
const TelemetryDir = "simulated-telemetry"

// Manifest is what drover eval --log needs to rebuild a recorded run's
// cluster and model: drover sim's flags as the run resolved them.
type Manifest struct {
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

// Encode returns m as the manifest file holds it: indented JSON and a
// newline.
func (m Manifest) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReadManifest reads dir's manifest (ManifestFile), version 1.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := inputfile.ReadText(filepath.Join(dir, ManifestFile), inputfile.Document)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.Version != 1 {
		return nil, fmt.Errorf("%s: version %d, want 1", filepath.Join(dir, ManifestFile), m.Version)
	}
	return &m, nil
}
