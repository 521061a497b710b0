package routelog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
)

// Version is the format version every line carries ("v").
const Version = 1

// Sources: who answered a route.
const (
	// SourceHeuristic: the heuristic router (HACK's) answered.
	SourceHeuristic = "heuristic"
	// SourceLearned: the learned router (pd-rl) answered.
	SourceLearned = "learned"
)

// ErrBadRecord is returned (wrapped, naming the field) by Decode and
// Validate for a line that is no valid route record.
var ErrBadRecord = errors.New("routelog: bad record")

// Instance is one instance of the deployment as the Route request gave it
// at the arrival: its configuration and load (infer.InstanceState, with
// the client's id).
type Instance struct {
	ID            string `json:"id"`
	Role          string `json:"role"`
	GPU           string `json:"gpu"`
	TP            int    `json:"tp"`
	PendingTokens int64  `json:"pending_tokens"`
	ReservedBytes int64  `json:"reserved_bytes"`
	UsedBytes     int64  `json:"used_bytes"`
	MaxBytes      int64  `json:"max_bytes"`
	Queued        int    `json:"queued"`
	Running       int    `json:"running"`
}

// Shadow is the decision of the router that decided beside the one that
// answered, without answering: the learned router while HACK answers (and
// HACK while the learned one does). Failure says why it gave none
// ("error"; empty when it decided).
type Shadow struct {
	Policy  string `json:"policy"`
	Prefill int    `json:"prefill"`
	Decode  int    `json:"decode"`
	Format  string `json:"format,omitempty"`
	Failure string `json:"failure,omitempty"`
}

// Record is one route decision: the request, the deployment's state it
// was decided on, the answer and who gave it. docs/format/route-log.md is
// its specification.
type Record struct {
	// V is the format version (Version).
	V int `json:"v"`
	// ID is the decision id the server answered with.
	ID string `json:"id"`
	// UnixNanos is the request's arrival on the client's clock (the
	// request's unix_nanos; the server's clock when it gave none).
	UnixNanos int64 `json:"unix_nanos"`
	// Request is the client's request id; Prompt and Output its tokens.
	Request string `json:"request,omitempty"`
	Prompt  int    `json:"prompt_tokens"`
	Output  int    `json:"output_tokens"`
	// Deployment names the deployment the server was configured with
	// (drover serve -route-deployment, e.g. "pd-rl"; empty: none), Model
	// the served model's architecture (env/infer/kv's catalogue) and
	// LinkBytesPerSec the KV link's bandwidth the router assumed.
	Deployment      string  `json:"deployment,omitempty"`
	Model           string  `json:"model"`
	LinkBytesPerSec float64 `json:"link_bytes_per_sec"`
	// Instances are the deployment's instances as the request listed
	// them, in its order.
	Instances []Instance `json:"instances"`
	// Prefill and Decode index Instances; Format is the KV format's name
	// (kv.Format.Name).
	Prefill int    `json:"prefill"`
	Decode  int    `json:"decode"`
	Format  string `json:"format"`
	// Source is SourceHeuristic or SourceLearned, Policy the policy that
	// answered ("heuristic:hack", "learned:pd-rl@ppo/1"), ModelVersion the
	// learned router's version ("" without one) and Fallback why the
	// heuristic answered ("" when the learned router did).
	Source       string `json:"source"`
	Policy       string `json:"policy"`
	ModelVersion string `json:"model_version,omitempty"`
	Fallback     string `json:"fallback,omitempty"`
	// Shadow is the other router's decision (nil: none decided beside).
	Shadow *Shadow `json:"shadow,omitempty"`
	// LatencyNanos is the decision's time on the server's clock.
	LatencyNanos int64 `json:"latency_ns"`
}

// InferRequest returns the record's request as the simulator replays it:
// id, arriving at arrival seconds.
func (r *Record) InferRequest(id int, arrival float64) infer.Request {
	return infer.Request{ID: id, Arrival: arrival, Prompt: r.Prompt, Output: r.Output}
}

// State returns the instances as the routers read them
// (infer.InstanceState), valid after Validate.
func (r *Record) State() []infer.InstanceState {
	out := make([]infer.InstanceState, len(r.Instances))
	for i, in := range r.Instances {
		role, _ := parseRole(in.Role)
		out[i] = infer.InstanceState{Role: role, GPU: in.GPU, TP: in.TP, PendingTokens: in.PendingTokens,
			ReservedBytes: in.ReservedBytes, UsedBytes: in.UsedBytes, MaxBytes: in.MaxBytes, Queued: in.Queued, Running: in.Running}
	}
	return out
}

// Decision returns the logged answer as the simulator applies it, valid
// after Validate.
func (r *Record) Decision() infer.Decision {
	f, _ := kv.Parse(r.Format)
	return infer.Decision{Prefill: r.Prefill, Decode: r.Decode, Format: f}
}

// InstancesOf converts routers' instance states into the log's instances,
// with ids.
func InstancesOf(ids []string, s []infer.InstanceState) []Instance {
	out := make([]Instance, len(s))
	for i, st := range s {
		out[i] = Instance{Role: st.Role.String(), GPU: st.GPU, TP: st.TP, PendingTokens: st.PendingTokens,
			ReservedBytes: st.ReservedBytes, UsedBytes: st.UsedBytes, MaxBytes: st.MaxBytes, Queued: st.Queued, Running: st.Running}
		if i < len(ids) {
			out[i].ID = ids[i]
		}
	}
	return out
}

func parseRole(s string) (infer.Role, bool) {
	for _, r := range []infer.Role{infer.Colocated, infer.Prefill, infer.Decode} {
		if r.String() == s {
			return r, true
		}
	}
	return 0, false
}

func bad(field string, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrBadRecord, field, fmt.Sprintf(format, args...))
}

// Validate checks the record and returns an error naming its first bad
// field (as the line spells it).
func (r *Record) Validate() error {
	switch {
	case r.V != Version:
		return bad("v", "%d, want %d", r.V, Version)
	case r.ID == "":
		return bad("id", "empty")
	case r.Prompt < 1 || r.Prompt > infer.MaxTokens:
		return bad("prompt_tokens", "%d, want 1..%d", r.Prompt, infer.MaxTokens)
	case r.Output < 1 || r.Output > infer.MaxTokens:
		return bad("output_tokens", "%d, want 1..%d", r.Output, infer.MaxTokens)
	case r.Model == "":
		return bad("model", "empty")
	case !(r.LinkBytesPerSec > 0) || math.IsInf(r.LinkBytesPerSec, 0):
		return bad("link_bytes_per_sec", "%v, want > 0", r.LinkBytesPerSec)
	case len(r.Instances) == 0 || len(r.Instances) > infer.MaxInstances:
		return bad("instances", "%d, want 1..%d", len(r.Instances), infer.MaxInstances)
	case r.LatencyNanos < 0:
		return bad("latency_ns", "negative (%d)", r.LatencyNanos)
	}
	if _, ok := kv.Lookup(r.Model); !ok {
		return bad("model", "%q not in env/infer/kv's catalogue", r.Model)
	}
	for i, in := range r.Instances {
		field := func(name string) string { return fmt.Sprintf("instances[%d].%s", i, name) }
		_, ok := parseRole(in.Role)
		switch {
		case !ok:
			return bad(field("role"), "%q, want colocated, prefill or decode", in.Role)
		case in.GPU == "":
			return bad(field("gpu"), "empty")
		case in.TP < 1 || in.TP > 64:
			return bad(field("tp"), "%d, want 1..64", in.TP)
		case in.PendingTokens < 0 || in.ReservedBytes < 0 || in.UsedBytes < 0 || in.Queued < 0 || in.Running < 0:
			return bad(field("pending_tokens"), "a negative load (pending %d, reserved %d, used %d, queued %d, running %d)",
				in.PendingTokens, in.ReservedBytes, in.UsedBytes, in.Queued, in.Running)
		case in.MaxBytes <= 0:
			return bad(field("max_bytes"), "%d, want > 0", in.MaxBytes)
		}
	}
	if err := r.checkAnswer("", r.Prefill, r.Decode, r.Format); err != nil {
		return err
	}
	switch r.Source {
	case SourceHeuristic:
	case SourceLearned:
		if r.Fallback != "" {
			return bad("fallback", "%q, but the learned router answered", r.Fallback)
		}
	default:
		return bad("source", "%q, want %s or %s", r.Source, SourceHeuristic, SourceLearned)
	}
	if r.Policy == "" {
		return bad("policy", "empty")
	}
	if s := r.Shadow; s != nil {
		if s.Policy == "" {
			return bad("shadow.policy", "empty")
		}
		if s.Failure == "" {
			if err := r.checkAnswer("shadow.", s.Prefill, s.Decode, s.Format); err != nil {
				return err
			}
		} else if s.Format != "" {
			return bad("shadow.format", "%q, but the shadow failed (%s)", s.Format, s.Failure)
		}
	}
	return nil
}

// checkAnswer checks a decision against the record's instances.
func (r *Record) checkAnswer(prefix string, p, d int, format string) error {
	n := len(r.Instances)
	switch {
	case p < 0 || p >= n:
		return bad(prefix+"prefill", "%d, want 0..%d", p, n-1)
	case r.Instances[p].Role == infer.Decode.String():
		return bad(prefix+"prefill", "instance %d is a decode instance", p)
	case d < 0 || d >= n:
		return bad(prefix+"decode", "%d, want 0..%d", d, n-1)
	case r.Instances[d].Role == infer.Prefill.String():
		return bad(prefix+"decode", "instance %d is a prefill instance", d)
	}
	if _, err := kv.Parse(format); err != nil {
		return bad(prefix+"format", "%v", err)
	}
	return nil
}

// Encode appends r as one line (JSON and a newline) to b. It does not
// validate r.
func Encode(b []byte, r *Record) []byte {
	j, err := json.Marshal(r)
	if err != nil {
		// Every field is a string, an integer or a finite float.
		panic("routelog: " + err.Error())
	}
	return append(append(b, j...), '\n')
}

// Decode reads one line (without its newline) as a record and validates
// it. Unknown fields are errors: a line of a newer version must say so in
// "v".
func Decode(line []byte) (Record, error) {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrBadRecord, err)
	}
	if dec.More() {
		return Record{}, fmt.Errorf("%w: more than one JSON value on the line", ErrBadRecord)
	}
	if err := r.Validate(); err != nil {
		return Record{}, err
	}
	return r, nil
}
