package modserve

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/drover-sched/drover/env/infer/mm"
)

// The routers' names: the rungs of ModServe's static ablation ladder (its
// section 5.2, Fig. 14), and routing without scheduling.
const (
	// Monolith is the vLLM baseline: each request to the monolithic
	// instance with the fewest outstanding requests, FCFS.
	Monolith = "monolith"
	// Decoup is ModServe-Decoup: image and text pools, FCFS; images go to
	// the image instances in turn (round robin, image by image: the
	// images of a request are encoded in parallel, as the paper's Decoup
	// does), the text to the text instance with the fewest outstanding
	// requests.
	Decoup = "modserve-decoup"
	// Sched is ModServe-Sched: Decoup with SLO-aware scheduling inside
	// each instance (earliest deadline first, a request's deadline its
	// arrival plus Factor times its isolated TTFT, so text-only and small
	// image requests go first).
	Sched = "modserve-sched"
	// RouteOnly is Decoup with ModServe's modality-aware routing and FCFS
	// scheduling (not a rung of the paper's ladder).
	RouteOnly = "modserve-route"
	// Name is ModServe (static): SLO-aware scheduling and modality-aware
	// routing, each image to the image instance with the fewest pending
	// image tokens (a request's images spread over instances), its text
	// to the text instance with the fewest pending prefill tokens (text
	// tokens for cross-attention models, text and image tokens for
	// decoder-only ones).
	Name = "modserve"
	// Late is ModServe with a request's text instance chosen once its
	// images are encoded (mm.Deferred), as the paper's routing does (its
	// section 4.2), rather than at arrival.
	Late = "modserve-late"
)

// Names lists the routers, the ladder in order, then RouteOnly and Late.
var Names = []string{Monolith, Decoup, Sched, Name, RouteOnly, Late}

// DefaultFactor is the SLO factor the SLO-aware rungs scale a request's
// isolated TTFT by to set its deadline (mm.Config.SLO's default).
const DefaultFactor = 5

// ErrNoInstance is returned when a pool has no active instance.
var ErrNoInstance = errors.New("modserve: no active instance")

// Router routes multimodal requests for env/infer/mm.
type Router struct {
	name string
	// SLOAware orders each instance's queues by deadline (arrival +
	// Factor x isolated TTFT) instead of arrival.
	SLOAware bool
	// ModalityAware spreads a request's images by pending image tokens and
	// picks the text instance by pending prefill tokens.
	ModalityAware bool
	// LateText defers an image request's text instance until its images
	// are encoded (RouteText).
	LateText bool
	// Factor scales the isolated TTFT into a deadline.
	Factor float64
	img    []int   // the active image instances, in increasing order
	load   []int64 // their pending image tokens, with the request's own
	rr     int
}

var (
	_ mm.Router     = (*Router)(nil)
	_ mm.TextRouter = (*Router)(nil)
)

// New returns the router called name (Names).
func New(name string) (*Router, error) {
	r := &Router{name: name, Factor: DefaultFactor}
	switch name {
	case Monolith, Decoup:
	case Sched:
		r.SLOAware = true
	case RouteOnly:
		r.ModalityAware = true
	case Name:
		r.SLOAware, r.ModalityAware = true, true
	case Late:
		r.SLOAware, r.ModalityAware, r.LateText = true, true, true
	default:
		return nil, fmt.Errorf("modserve: unknown router %q (want one of %v)", name, Names)
	}
	return r, nil
}

// Name is the router's name.
func (r *Router) Name() string { return r.name }

// Route fills d for req.
func (r *Router) Route(v *mm.View, req *mm.Request, d *mm.Decision) error {
	if r.SLOAware {
		d.Priority = req.Arrival + r.Factor*v.IsolatedTTFT(req)
	} else {
		d.Priority = req.Arrival
	}
	if r.LateText && v.Decoupled && len(d.Images) > 0 {
		d.Instance = mm.Deferred
	} else {
		best, err := r.RouteText(v, req)
		if err != nil {
			return err
		}
		d.Instance = best
	}
	if len(d.Images) == 0 {
		return nil
	}
	// Only the live instances are looked at (mm.View.Live), in index
	// order, so the scans cost the pools' size, not every instance ever
	// started.
	r.img, r.load = r.img[:0], r.load[:0]
	for _, i := range v.Live() {
		if x := &v.Instances[i]; x.Pool == mm.Image && x.State == mm.Active {
			r.img = append(r.img, i)
			r.load = append(r.load, x.PendingImageTokens)
		}
	}
	if len(r.img) == 0 {
		return fmt.Errorf("%w: image pool", ErrNoInstance)
	}
	if !r.ModalityAware {
		// Round robin over the instances' numbers (their indexes in
		// the simulation's view; mm.View.Number in a view of some of
		// them): rr counts the numbers passed, active image instances
		// or not, gone ones too, so each image goes to the first active
		// image instance at or after rr mod the instances deployed,
		// cyclically.
		n := v.Deployed()
		for j := range d.Images {
			at := r.rr % n
			k, _ := slices.BinarySearchFunc(r.img, at, func(i, at int) int { return cmp.Compare(v.Number(i), at) })
			if k == len(r.img) {
				k = 0
			}
			b := r.img[k]
			d.Images[j] = b
			r.rr += (v.Number(b)-at+n)%n + 1
		}
		return nil
	}
	for j := range d.Images {
		b := 0 // the fewest pending image tokens, the lowest index first
		for k, l := range r.load {
			if l < r.load[b] {
				b = k
			}
		}
		d.Images[j] = r.img[b]
		r.load[b] += int64(v.ImageTokensOf(req, j))
	}
	return nil
}

// RouteText picks req's text instance (the monolithic one, in a
// monolithic deployment): the active one with the fewest pending prefill
// tokens (ModalityAware) or outstanding requests.
func (r *Router) RouteText(v *mm.View, req *mm.Request) (int, error) {
	pool := mm.Text
	if !v.Decoupled {
		pool = mm.Mono
	}
	best := -1
	for _, i := range v.Live() {
		x := &v.Instances[i]
		if x.Pool != pool || x.State != mm.Active {
			continue
		}
		if best < 0 || r.textLoad(x) < r.textLoad(&v.Instances[best]) {
			best = i
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("%w: %v pool", ErrNoInstance, pool)
	}
	return best, nil
}

func (r *Router) textLoad(x *mm.InstanceView) int64 {
	if r.ModalityAware {
		return x.PendingPrefillTokens
	}
	return int64(x.Outstanding)
}
