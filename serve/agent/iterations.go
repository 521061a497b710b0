package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/drover-sched/drover/serve/state"

	pb "github.com/drover-sched/drover/serve/proto"
)

// Limits of one iteration report (POST /v1/iterations).
const (
	// MaxJobIDBytes bounds job_id.
	MaxJobIDBytes = 256
	// MaxSecondsPerReport bounds the seconds array.
	MaxSecondsPerReport = 4096
	// MaxReportBytes bounds the request body.
	MaxReportBytes = 1 << 20
	// MaxWorker is the largest worker index (the server's limit too).
	MaxWorker = 1 << 20
)

// IterationsPath is the iteration endpoint's path.
const IterationsPath = "/v1/iterations"

// IterationReport is the JSON body of POST /v1/iterations, as training
// jobs send it (serve/iterclient, drover_iter.py):
//
//	{"job_id": "job-7", "worker": 3, "seconds": [0.31, 0.30], "dropped": 0}
type IterationReport struct {
	// JobID names the job as Place requests name it: non-empty, at most
	// MaxJobIDBytes bytes.
	JobID string `json:"job_id"`
	// Worker is the worker index, -1 for the whole job (the default when
	// absent).
	Worker *int64 `json:"worker,omitempty"`
	// Seconds are per-iteration times in order: finite, positive, at most
	// MaxSecondsPerReport. It may be empty when Dropped is positive.
	Seconds []float64 `json:"seconds"`
	// Dropped counts iteration times the client discarded before this
	// report; not negative.
	Dropped int64 `json:"dropped"`
}

// DecodeIterations decodes and checks one iteration report's body and
// returns it as the stream's message. An error names the offending field
// ("seconds[2]: 0 is not a positive number of seconds") or, for malformed
// JSON, the body. Unknown fields are errors, so a misspelt field does not
// pass silently.
func DecodeIterations(data []byte) (*pb.JobIterations, error) {
	if len(data) > MaxReportBytes {
		return nil, fmt.Errorf("body: %d bytes, more than %d", len(data), MaxReportBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r IterationReport
	if err := dec.Decode(&r); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fmt.Errorf("%s: %s is not a %s", te.Field, te.Value, jsonType(te.Type.Kind().String()))
		}
		return nil, fmt.Errorf("body: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("body: data after the JSON object")
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	worker := int64(-1)
	if r.Worker != nil {
		worker = *r.Worker
	}
	return &pb.JobIterations{JobId: r.JobID, Worker: int32(worker), Seconds: r.Seconds, Dropped: r.Dropped}, nil
}

// check validates a decoded report.
func (r *IterationReport) check() error {
	switch {
	case r.JobID == "":
		return errors.New("job_id: missing or empty")
	case len(r.JobID) > MaxJobIDBytes:
		return fmt.Errorf("job_id: %d bytes, more than %d", len(r.JobID), MaxJobIDBytes)
	case r.Worker != nil && (*r.Worker < -1 || *r.Worker > MaxWorker):
		return fmt.Errorf("worker: %d is not a worker index (0 to %d, or -1 for the whole job)", *r.Worker, MaxWorker)
	case r.Dropped < 0:
		return fmt.Errorf("dropped: %d is negative", r.Dropped)
	case len(r.Seconds) > MaxSecondsPerReport:
		return fmt.Errorf("seconds: %d values, more than %d per report", len(r.Seconds), MaxSecondsPerReport)
	case len(r.Seconds) == 0 && r.Dropped == 0:
		return errors.New("seconds: missing or empty (and nothing dropped)")
	}
	for i, s := range r.Seconds {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("seconds[%d]: %v is not a positive number of seconds", i, s)
		}
		if s > state.MaxIterationSeconds {
			return fmt.Errorf("seconds[%d]: %v is longer than the server accepts (%v s)", i, s, state.MaxIterationSeconds)
		}
	}
	return nil
}

// jsonType names a Go kind as JSON would.
func jsonType(kind string) string {
	switch kind {
	case "float64", "int64", "int":
		return "number"
	case "slice":
		return "array"
	case "struct":
		return "object"
	}
	return kind
}
