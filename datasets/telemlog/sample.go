package telemlog

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/drover-sched/drover/internal/pqlog"
)

// Sample is one node's telemetry at one time: the load shares the server
// derived from the agent's reading (what a heuristic sees as the node's
// env.Usage) and the agent's raw reading.
type Sample struct {
	// Node is the node's id, as agents and Place requests name it.
	Node string
	// Time is when the agent took the reading.
	Time time.Time
	// CPU, MemBW and Net are the node's total utilisation of its CPUs,
	// memory bandwidth and NIC as fractions in [0, 1] (env.Usage's
	// units): the jobs' load included, not only the background.
	CPU, MemBW, Net float64
	// CPUUtil is the raw CPU utilisation in [0, 1], MemUsed the memory in
	// use in bytes, CPUPressure and MemPressure the PSI "some" shares in
	// [0, 1], NetRxBps and NetTxBps the NIC's receive and transmit rates
	// in bytes per second, GPUUtil the GPUs' mean utilisation in [0, 1].
	// NaN means unknown (an agent without PSI or without a GPU driver, or
	// a simulated node).
	CPUUtil, MemUsed, CPUPressure, MemPressure, NetRxBps, NetTxBps, GPUUtil float64
}

// Raw returns a Sample of node at t with the given shares and every raw
// field unknown (NaN): what a simulated node reports.
func Raw(node string, t time.Time, cpu, membw, net float64) Sample {
	nan := math.NaN()
	return Sample{Node: node, Time: t, CPU: cpu, MemBW: membw, Net: net,
		CPUUtil: nan, MemUsed: nan, CPUPressure: nan, MemPressure: nan, NetRxBps: nan, NetTxBps: nan, GPUUtil: nan}
}

// FormatError is a problem with a sample or a log file: the file (empty
// for in-memory data), the 1-based row (0 when the whole file is bad) and
// the column. Its message reads "telemlog: FILE:ROW: FIELD: problem".
type FormatError = pqlog.FormatError

func fieldErr(field string, err error) error {
	return &FormatError{Log: "telemlog", Field: field, Err: err}
}

// Validate checks the sample's fields and returns a *FormatError naming
// the first bad one (as the log's column names it).
func (s *Sample) Validate() error {
	if s.Node == "" {
		return fieldErr(colNode, errors.New("empty"))
	}
	if t := s.Time; !t.After(time.Unix(0, 0)) || !t.Before(time.Unix(0, math.MaxInt64)) {
		return fieldErr(colTime, fmt.Errorf("%v, want a time after 1970-01-01 in int64 nanoseconds", t))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{colCPU, s.CPU}, {colMemBW, s.MemBW}, {colNet, s.Net}} {
		if !(f.v >= 0 && f.v <= 1) {
			return fieldErr(f.name, fmt.Errorf("%v, want a share in [0, 1]", f.v))
		}
	}
	for _, f := range []struct {
		name string
		v    float64
		max  float64
	}{
		{colCPUUtil, s.CPUUtil, 1}, {colMemUsed, s.MemUsed, math.MaxFloat64}, {colCPUPressure, s.CPUPressure, 1},
		{colMemPressure, s.MemPressure, 1}, {colNetRx, s.NetRxBps, math.MaxFloat64}, {colNetTx, s.NetTxBps, math.MaxFloat64},
		{colGPUUtil, s.GPUUtil, 1},
	} {
		if !math.IsNaN(f.v) && !(f.v >= 0 && f.v <= f.max) {
			return fieldErr(f.name, fmt.Errorf("%v, want NaN (unknown) or a finite value in [0, %g]", f.v, f.max))
		}
	}
	return nil
}
