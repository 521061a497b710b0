package hack

import (
	"errors"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
)

// Name is the router's name.
const Name = "hack"

// ErrNoInstances is returned when the deployment has no instance to route
// to.
var ErrNoInstances = errors.New("hack: no instances available")

// Router is HACK's router (the artifact's proxy, generalised to several
// instances): every request's prompt goes to the prefill instance with
// the fewest pending tokens and its decode to the decode instance with
// the fewest pending tokens among those whose memory can still take the
// request's whole KV cache in Format (all of them if none can), the first
// such instance on a tie. With the dense format it is the disaggregated
// FP16 baseline; with kv.KVQuant2 or kv.CacheGenCodec the KVQuant- and
// CacheGen-like deployments. A deployment without prefill or decode
// instances runs both phases on the colocated instance with the fewest
// pending tokens.
type Router struct {
	// Format is every request's KV format (HACK: kv.HACKPi(64)).
	Format kv.Format
}

var _ infer.Router = (*Router)(nil)

// New returns a router that sends every KV cache in format f.
func New(f kv.Format) *Router { return &Router{Format: f} }

// Route implements infer.Router: Place on v.
func (r *Router) Route(v *infer.View, req infer.Request) (infer.Decision, error) {
	pre, dec, ok := Place(v, v.StoredBytes(r.Format, req.Prompt+req.Output))
	if !ok {
		return infer.Decision{}, ErrNoInstances
	}
	return infer.Decision{Prefill: pre, Decode: dec, Format: r.Format}, nil
}
