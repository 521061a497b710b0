package datasets

import (
	_ "embed"
	"encoding/json"
	"math/rand/v2"
	"sync"
)

//go:embed builtin/synth_params.json
var synthParamsJSON []byte

//go:embed builtin/default.csv
var builtinCSV []byte

// DefaultSynthParams returns FitPhilly applied to Pollux's Philly trace
// (philly/pollux_philly.csv.gz) decoded with the Pollux filter (duration
// >= 60 s, GPU-time < 1000 GPU-hours), stored in builtin/synth_params.json.
// Treat it as read-only: copy the slices before changing them. The file is
// decoded on the first call, not at package initialisation.
func DefaultSynthParams() SynthParams { return defaultSynthParams() }

// defaultSynthParams decodes synth_params.json once (a test's -update
// replaces it with the refit).
var defaultSynthParams = sync.OnceValue(func() SynthParams { return mustParams(synthParamsJSON) })

func mustParams(b []byte) SynthParams {
	var p SynthParams
	if err := json.Unmarshal(b, &p); err != nil {
		panic("datasets: embedded synth_params.json: " + err.Error())
	}
	if err := p.Validate(); err != nil {
		panic("datasets: embedded synth_params.json: " + err.Error())
	}
	return p
}

// Settings of the embedded default workload (GenerateDefault).
const (
	// DefaultSeed is the seed builtin/default.csv was generated with.
	DefaultSeed uint64 = 1
	// DefaultJobs is the number of jobs in the default workload.
	DefaultJobs = 400
	// DefaultMaxGPUs caps the GPU mix (a 16-node x 4-GPU cluster).
	DefaultMaxGPUs = 64
	// DefaultRateScale speeds up Philly's arrivals so the default workload
	// arrives within a few hours.
	DefaultRateScale = 4
	// DefaultMaxDuration (seconds) truncates run times so the default
	// workload keeps the 64 GPUs busy for hours, not weeks.
	DefaultMaxDuration = 4 * 3600
	// DefaultStartHour is the time of day the default workload starts at,
	// in trace-local hours (Pollux's workloads start at 02:00).
	DefaultStartHour = 2
)

// DefaultParams returns DefaultSynthParams with the default workload's
// settings applied: DefaultRateScale, DefaultMaxGPUs, DefaultMaxDuration,
// DefaultStartHour, and parameter servers for a DefaultPSShare of the
// multi-GPU jobs (as many as their workers, PSRule). The default workload
// is a generic shared cluster, not a replay of Philly (whose trace says
// nothing of architectures), and takes PAI's share so that its PS jobs
// exercise what the simulator models of them (SAS's parameter-server
// load reassignment among it).
func DefaultParams() SynthParams {
	p := DefaultSynthParams()
	p.RateScale = DefaultRateScale
	p.MaxGPUs = DefaultMaxGPUs
	p.MaxDuration = DefaultMaxDuration
	p.StartHour = DefaultStartHour
	p.PSShare = DefaultPSShare
	return p
}

// GenerateDefault generates the default workload from DefaultParams with a
// PCG source seeded (seed, seed). GenerateDefault(DefaultSeed), encoded
// with Encode, is byte for byte builtin/default.csv; `drover trace synth`
// calls it with other seeds.
func GenerateDefault(seed uint64) *Workload { return GenerateDefaultPS(seed, DefaultPSShare) }

// GenerateDefaultPS is GenerateDefault with share of the multi-GPU jobs on
// parameter servers instead of DefaultPSShare. The jobs are those of
// GenerateDefault(seed); only their architectures differ, and a job that
// is PS at one share is PS at every larger one. It panics unless share is
// in [0, 1].
func GenerateDefaultPS(seed uint64, share float64) *Workload {
	p := DefaultParams()
	p.PSShare = share
	w := Synthetic(p, DefaultJobs, rand.NewPCG(seed, seed))
	w.Name = BuiltinSpec
	return w
}

var builtin = sync.OnceValue(func() *Workload {
	w, err := Decode(FormatJobs, builtinCSV, Options{Source: "builtin/default.csv"})
	if err != nil {
		panic("datasets: embedded default workload: " + err.Error())
	}
	w.Name = BuiltinSpec
	return w
})

// Builtin returns a fresh copy of the embedded default workload
// (builtin/default.csv, see GenerateDefault).
func Builtin() *Workload { return builtin().Clone() }
