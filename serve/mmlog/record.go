package mmlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/internal/llmreq"
	"github.com/drover-sched/drover/serve/routelog"
)

// Version is the format version every line carries ("v").
const Version = 1

// The logs' names in a server's log directory (drover serve -log-dir
// DIR).
const (
	ScalesFile = "scales.jsonl"
	RoutesFile = "mmroutes.jsonl"
)

// Sources: who answered.
const (
	// SourceHeuristic: the heuristic (ModServe's autoscaler or router).
	SourceHeuristic = "heuristic"
	// SourceLearned: the learned autoscaler (mm-rl).
	SourceLearned = "learned"
)

// ErrBadRecord is returned (wrapped, naming the field) by the decoders and
// Validate for a line that is no valid record.
var ErrBadRecord = errors.New("mmlog: bad record")

// MaxPool bounds a pool's size in a record (env/infer/mm's MaxInstances).
const MaxPool = mm.MaxInstances

// Sizes is a deployment's pool sizes (policies/mmscale's Sizes).
type Sizes struct {
	Image int `json:"image"`
	Text  int `json:"text"`
	Mono  int `json:"mono"`
}

func (s Sizes) validate(field string) error {
	for _, p := range []struct {
		name string
		n    int
	}{{"image", s.Image}, {"text", s.Text}, {"mono", s.Mono}} {
		if p.n < 0 || p.n > MaxPool {
			return bad(field+"."+p.name, "%d, want 0..%d", p.n, MaxPool)
		}
	}
	return nil
}

// Window is what the deployment saw over the window the scale call closed
// (policies/mmscale's Window; the Scale request's fields).
type Window struct {
	Seconds            float64 `json:"seconds"`
	Requests           int64   `json:"requests"`
	ImageTokens        float64 `json:"image_tokens"`
	TextLoad           float64 `json:"text_load"`
	Finished           int64   `json:"finished"`
	Met                int64   `json:"met"`
	PendingImageTokens float64 `json:"pending_image_tokens"`
	PendingTextLoad    float64 `json:"pending_text_load"`
	PendingRequests    int64   `json:"pending_requests"`
	ImageWait          float64 `json:"image_wait"`
	TextWait           float64 `json:"text_wait"`
	PeakRequests       float64 `json:"peak_requests"`
	PeakImageTokens    float64 `json:"peak_image_tokens"`
	PeakTextLoad       float64 `json:"peak_text_load"`
}

// Validate checks w: finite, non-negative numbers, met <= finished.
func (w *Window) Validate() error {
	for _, f := range []struct {
		name string
		x    float64
	}{{"seconds", w.Seconds}, {"image_tokens", w.ImageTokens}, {"text_load", w.TextLoad}, {"pending_image_tokens", w.PendingImageTokens},
		{"pending_text_load", w.PendingTextLoad}, {"image_wait", w.ImageWait}, {"text_wait", w.TextWait}, {"peak_requests", w.PeakRequests},
		{"peak_image_tokens", w.PeakImageTokens}, {"peak_text_load", w.PeakTextLoad}} {
		if !(f.x >= 0) || math.IsInf(f.x, 0) {
			return bad("window."+f.name, "%v, want a finite number >= 0", f.x)
		}
	}
	switch {
	case w.Requests < 0 || w.Finished < 0 || w.Met < 0 || w.PendingRequests < 0:
		return bad("window.requests", "a negative count (requests %d, finished %d, met %d, pending %d)", w.Requests, w.Finished, w.Met, w.PendingRequests)
	case w.Met > w.Finished:
		return bad("window.met", "%d, more than the %d finished", w.Met, w.Finished)
	}
	return nil
}

// Scale is one Scale answer. docs/format/mm-log.md is its specification.
type Scale struct {
	// V is the format version (Version).
	V int `json:"v"`
	// ID is the decision id the server answered with; UnixNanos the
	// window's end on the client's clock (the server's when it gave none).
	ID        string `json:"id"`
	UnixNanos int64  `json:"unix_nanos"`
	// Deployment is the client's name of the deployment, Model the served
	// model (env/infer/mm's catalogue name).
	Deployment string `json:"deployment,omitempty"`
	Model      string `json:"model"`
	// Initial marks the call for the initial sizes (Window is then
	// absent); PeriodEnd a window that closes a scaling period; Period
	// the client's count of periods.
	Initial   bool  `json:"initial,omitempty"`
	PeriodEnd bool  `json:"period_end,omitempty"`
	Period    int64 `json:"period"`
	// Current is the sizes the client had, Window what it saw.
	Current Sizes   `json:"current"`
	Window  *Window `json:"window,omitempty"`
	// Sizes is the answer: the pools' target sizes.
	Sizes Sizes `json:"sizes"`
	// Source, Policy, ModelVersion and Fallback say who answered and why
	// (as in the route log).
	Source       string `json:"source"`
	Policy       string `json:"policy"`
	ModelVersion string `json:"model_version,omitempty"`
	Fallback     string `json:"fallback,omitempty"`
	// Shadow is the other autoscaler's answer beside it (nil: none).
	Shadow *ShadowSizes `json:"shadow,omitempty"`
	// LatencyNanos is the decision's time on the server's clock.
	LatencyNanos int64 `json:"latency_ns"`
}

// ShadowSizes is the answer of the autoscaler that decided beside the one
// that answered.
type ShadowSizes struct {
	Policy string `json:"policy"`
	Sizes  Sizes  `json:"sizes"`
}

func bad(field string, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrBadRecord, field, fmt.Sprintf(format, args...))
}

func checkSource(source, fallback, policy string) error {
	switch source {
	case SourceHeuristic:
	case SourceLearned:
		if fallback != "" {
			return bad("fallback", "%q, but the learned policy answered", fallback)
		}
	default:
		return bad("source", "%q, want %s or %s", source, SourceHeuristic, SourceLearned)
	}
	if policy == "" {
		return bad("policy", "empty")
	}
	return nil
}

// Validate checks the record and returns an error naming its first bad
// field (as the line spells it).
func (r *Scale) Validate() error {
	switch {
	case r.V != Version:
		return bad("v", "%d, want %d", r.V, Version)
	case r.ID == "":
		return bad("id", "empty")
	case r.Model == "":
		return bad("model", "empty")
	case r.Period < 0:
		return bad("period", "negative (%d)", r.Period)
	case r.LatencyNanos < 0:
		return bad("latency_ns", "negative (%d)", r.LatencyNanos)
	case r.Initial != (r.Window == nil):
		return bad("window", "initial %v with window %v: want a window exactly when not initial", r.Initial, r.Window != nil)
	case r.Initial && r.PeriodEnd:
		return bad("period_end", "set on the initial call")
	}
	if _, err := mm.LookupModel(r.Model); err != nil {
		return bad("model", "%q not in env/infer/mm's catalogue", r.Model)
	}
	if r.Window != nil {
		if err := r.Window.Validate(); err != nil {
			return err
		}
	}
	if err := r.Current.validate("current"); err != nil {
		return err
	}
	if err := r.Sizes.validate("sizes"); err != nil {
		return err
	}
	if err := checkSource(r.Source, r.Fallback, r.Policy); err != nil {
		return err
	}
	if s := r.Shadow; s != nil {
		if s.Policy == "" {
			return bad("shadow.policy", "empty")
		}
		return s.Sizes.validate("shadow.sizes")
	}
	return nil
}

// Instance is one instance of a multimodal deployment as the RouteMM
// request gave it (env/infer/mm's InstanceView, with the client's id).
type Instance struct {
	ID                   string `json:"id"`
	Pool                 string `json:"pool"`
	State                string `json:"state"`
	TP                   int    `json:"tp"`
	PendingImages        int    `json:"pending_images"`
	PendingImageTokens   int64  `json:"pending_image_tokens"`
	PendingTokens        int64  `json:"pending_tokens"`
	PendingPrefillTokens int64  `json:"pending_prefill_tokens"`
	Outstanding          int    `json:"outstanding"`
	Waiting              int    `json:"waiting"`
	Running              int    `json:"running"`
	// Number is the instance's number among every instance the
	// deployment has started (the request's MMInstance.number), when the
	// record's Deployed is set; absent (0) otherwise.
	Number int `json:"number,omitempty"`
}

// Route is one RouteMM answer. docs/format/mm-log.md is its
// specification.
type Route struct {
	// V is the format version (Version).
	V int `json:"v"`
	// ID is the decision id; UnixNanos when the server decided (its
	// clock).
	ID        string `json:"id"`
	UnixNanos int64  `json:"unix_nanos"`
	// Request is the client's request id; Arrival its arrival on the
	// client's clock (s); Images, Prompt and Output the request.
	Request string  `json:"request,omitempty"`
	Arrival float64 `json:"arrival"`
	Images  int     `json:"images"`
	Prompt  int     `json:"prompt_tokens"`
	Output  int     `json:"output_tokens"`
	// Deployment is the server's name of the deployment, Model the served
	// model.
	Deployment string `json:"deployment,omitempty"`
	Model      string `json:"model"`
	// Instances are the deployment's instances as the request listed
	// them.
	Instances []Instance `json:"instances"`
	// Deployed is how many instances the deployment has started, gone
	// ones included (the request's deployed), when the request listed
	// only some of them, numbered; absent (0) when it listed every one,
	// numbered by position. Decoup's and Sched's round robin counts by
	// number, so a decision replays from the record only with both.
	Deployed int `json:"deployed,omitempty"`
	// Instance is the text (or monolithic) instance, ImageInstances the
	// image instance of each image the model takes (indices into
	// Instances), Priority the queue priority.
	Instance       int     `json:"instance"`
	ImageInstances []int   `json:"image_instances,omitempty"`
	Priority       float64 `json:"priority"`
	// Source, Policy and Fallback say who answered and why.
	Source   string `json:"source"`
	Policy   string `json:"policy"`
	Fallback string `json:"fallback,omitempty"`
	// LatencyNanos is the decision's time on the server's clock.
	LatencyNanos int64 `json:"latency_ns"`
}

// ParsePool returns the pool a record spells ("mono", "image", "text").
func ParsePool(s string) (mm.Pool, bool) {
	for _, p := range []mm.Pool{mm.Mono, mm.Image, mm.Text} {
		if p.String() == s {
			return p, true
		}
	}
	return 0, false
}

// ParseState returns the state a record spells ("starting", "active",
// "draining", "gone").
func ParseState(s string) (mm.State, bool) {
	for _, st := range []mm.State{mm.Starting, mm.Active, mm.Draining, mm.Gone} {
		if st.String() == s {
			return st, true
		}
	}
	return 0, false
}

// InstancesOf converts a router's view of the instances into the log's,
// with ids and, where numbers is not nil, numbers (mm.View.Numbers).
func InstancesOf(ids []string, numbers []int, v []mm.InstanceView) []Instance {
	out := make([]Instance, len(v))
	for i, x := range v {
		out[i] = Instance{Pool: x.Pool.String(), State: x.State.String(), TP: x.TP, PendingImages: x.PendingImages, PendingImageTokens: x.PendingImageTokens,
			PendingTokens: x.PendingTokens, PendingPrefillTokens: x.PendingPrefillTokens, Outstanding: x.Outstanding, Waiting: x.Waiting, Running: x.Running}
		if i < len(ids) {
			out[i].ID = ids[i]
		}
		if i < len(numbers) {
			out[i].Number = numbers[i]
		}
	}
	return out
}

// Validate checks the record and returns an error naming its first bad
// field.
func (r *Route) Validate() error {
	switch {
	case r.V != Version:
		return bad("v", "%d, want %d", r.V, Version)
	case r.ID == "":
		return bad("id", "empty")
	case !(r.Arrival >= 0) || math.IsInf(r.Arrival, 0):
		return bad("arrival", "%v, want a finite time >= 0", r.Arrival)
	case r.Images < 0 || r.Images > llmreq.MaxImages:
		return bad("images", "%d, want 0..%d", r.Images, llmreq.MaxImages)
	case r.Prompt < 1 || r.Prompt > infer.MaxTokens:
		return bad("prompt_tokens", "%d, want 1..%d", r.Prompt, infer.MaxTokens)
	case r.Output < 1 || r.Output > infer.MaxTokens:
		return bad("output_tokens", "%d, want 1..%d", r.Output, infer.MaxTokens)
	case r.Model == "":
		return bad("model", "empty")
	case len(r.Instances) == 0 || len(r.Instances) > mm.MaxLive:
		return bad("instances", "%d, want 1..%d", len(r.Instances), mm.MaxLive)
	case math.IsNaN(r.Priority) || math.IsInf(r.Priority, 0):
		return bad("priority", "%v, want a finite number", r.Priority)
	case r.LatencyNanos < 0:
		return bad("latency_ns", "negative (%d)", r.LatencyNanos)
	case len(r.ImageInstances) > r.Images:
		return bad("image_instances", "%d for %d images", len(r.ImageInstances), r.Images)
	case r.Deployed < 0:
		return bad("deployed", "negative (%d)", r.Deployed)
	case r.Deployed > 0 && r.Deployed < len(r.Instances):
		return bad("deployed", "%d, fewer than the %d instances listed", r.Deployed, len(r.Instances))
	}
	if _, err := mm.LookupModel(r.Model); err != nil {
		return bad("model", "%q not in env/infer/mm's catalogue", r.Model)
	}
	pools := make([]mm.Pool, len(r.Instances))
	for i, in := range r.Instances {
		field := func(name string) string { return fmt.Sprintf("instances[%d].%s", i, name) }
		p, ok := ParsePool(in.Pool)
		if !ok {
			return bad(field("pool"), "%q, want mono, image or text", in.Pool)
		}
		pools[i] = p
		if _, ok := ParseState(in.State); !ok {
			return bad(field("state"), "%q, want starting, active, draining or gone", in.State)
		}
		switch {
		case in.TP < 1 || in.TP > 64:
			return bad(field("tp"), "%d, want 1..64", in.TP)
		case in.PendingImages < 0 || in.PendingImageTokens < 0 || in.PendingTokens < 0 || in.PendingPrefillTokens < 0 || in.Outstanding < 0 || in.Waiting < 0 || in.Running < 0:
			return bad(field("pending_images"), "a negative load")
		case r.Deployed == 0 && in.Number != 0:
			return bad(field("number"), "%d without deployed: want none (instances numbered by position)", in.Number)
		case r.Deployed > 0 && (in.Number < 0 || in.Number >= r.Deployed):
			return bad(field("number"), "%d, want 0..%d (deployed %d)", in.Number, r.Deployed-1, r.Deployed)
		case r.Deployed > 0 && i > 0 && in.Number <= r.Instances[i-1].Number:
			return bad(field("number"), "%d after %d: want increasing numbers", in.Number, r.Instances[i-1].Number)
		}
	}
	want := mm.Text
	if slices.Contains(pools, mm.Mono) {
		want = mm.Mono
	}
	if r.Instance < 0 || r.Instance >= len(pools) || pools[r.Instance] != want {
		return bad("instance", "%d, want the index of a %v instance", r.Instance, want)
	}
	for j, i := range r.ImageInstances {
		if i < 0 || i >= len(pools) || pools[i] != mm.Image {
			return bad(fmt.Sprintf("image_instances[%d]", j), "%d, want the index of an image instance", i)
		}
	}
	return checkSource(r.Source, r.Fallback, r.Policy)
}

func encode(b []byte, v any) []byte {
	j, err := json.Marshal(v)
	if err != nil {
		// Every field is a string, an integer, a bool or a finite float.
		panic("mmlog: " + err.Error())
	}
	return append(append(b, j...), '\n')
}

func decode(line []byte, v interface{ Validate() error }) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrBadRecord, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: more than one JSON value on the line", ErrBadRecord)
	}
	return v.Validate()
}

// EncodeScale appends r as one line (JSON and a newline) to b. It does not
// validate r.
func EncodeScale(b []byte, r *Scale) []byte { return encode(b, r) }

// DecodeScale reads one line (without its newline) as a scale record and
// validates it. Unknown fields are errors.
func DecodeScale(line []byte) (Scale, error) {
	var r Scale
	if err := decode(line, &r); err != nil {
		return Scale{}, err
	}
	return r, nil
}

// EncodeRoute appends r as one line to b. It does not validate r.
func EncodeRoute(b []byte, r *Route) []byte { return encode(b, r) }

// DecodeRoute reads one line (without its newline) as a route record and
// validates it. Unknown fields are errors.
func DecodeRoute(line []byte) (Route, error) {
	var r Route
	if err := decode(line, &r); err != nil {
		return Route{}, err
	}
	return r, nil
}

// ReadScales reads a scale log: one record a line, in order. A line that
// is not a valid record is an error naming its line number (from 1); a
// last line without its newline is left out and counted in partial.
func ReadScales(r io.Reader) ([]Scale, int, error) {
	recs, partial, err := routelog.Records(r, DecodeScale)
	if err != nil {
		return recs, 0, fmt.Errorf("mmlog: %w", err)
	}
	return recs, partial, nil
}

// ReadRoutes reads a multimodal route log as ReadScales reads a scale
// log.
func ReadRoutes(r io.Reader) ([]Route, int, error) {
	recs, partial, err := routelog.Records(r, DecodeRoute)
	if err != nil {
		return recs, 0, fmt.Errorf("mmlog: %w", err)
	}
	return recs, partial, nil
}

// ReadScalesFile reads the scale log at path, through internal/inputfile
// (a regular file of at most inputfile.Log bytes).
func ReadScalesFile(path string) ([]Scale, int, error) {
	return routelog.ReadFileWith(path, ReadScales)
}

// ReadRoutesFile reads the multimodal route log at path, through
// internal/inputfile (a regular file of at most inputfile.Log bytes).
func ReadRoutesFile(path string) ([]Route, int, error) {
	return routelog.ReadFileWith(path, ReadRoutes)
}
