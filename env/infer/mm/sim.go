package mm

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/drover-sched/drover/env/infer"
)

// Request is one request of a trace (datasets/llm's, through env/infer):
// its arrival, text prompt and output tokens, and images.
type Request = infer.Request

// Errors of the step loop.
var (
	// ErrDone is returned by Next when every request has arrived.
	ErrDone = errors.New("mm: no more arrivals")
	// ErrBadDecision is returned (wrapped) by Apply for a decision that
	// names an instance that is not there, not of the right pool or not
	// active.
	ErrBadDecision = errors.New("mm: bad decision")
	// ErrBadAction is returned (wrapped) by AddInstance and RemoveInstance
	// for a scaling action the deployment cannot take.
	ErrBadAction = errors.New("mm: bad scaling action")
)

// State is where an instance is in its life.
type State uint8

// The states.
const (
	// Starting instances hold their GPUs but take no requests yet.
	Starting State = iota
	// Active instances take requests.
	Active
	// Draining instances take no new requests and finish their own.
	Draining
	// Gone instances have finished draining and hold no GPUs.
	Gone
)

func (s State) String() string {
	switch s {
	case Starting:
		return "starting"
	case Active:
		return "active"
	case Draining:
		return "draining"
	case Gone:
		return "gone"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// InstanceView is what a router sees of one instance. The simulator keeps
// it up to date as events happen.
type InstanceView struct {
	// Pool and State are the instance's kind and life stage; TP its GPUs.
	Pool  Pool
	State State
	TP    int
	// PendingImages and PendingImageTokens are the images routed to the
	// instance and not encoded yet (image and monolithic instances), and
	// their tokens.
	PendingImages      int
	PendingImageTokens int64
	// PendingTokens is the tokens the requests routed to the instance
	// still have to go through: the prefill tokens of those not prefilled
	// yet (their images' tokens too, for decoder-only models) and the
	// output tokens not made yet (text and monolithic instances).
	PendingTokens int64
	// PendingPrefillTokens is the part of PendingTokens that is prefill:
	// the prompt tokens (and image tokens, decoder-only) of the requests
	// routed to the instance and not prefilled yet.
	PendingPrefillTokens int64
	// Outstanding is the requests routed to the instance and not finished;
	// Waiting those ready for prefill and not started; Running those
	// decoding.
	Outstanding, Waiting, Running int
}

// View is what a router sees when a request arrives.
type View struct {
	// Now is the simulated time (s).
	Now float64
	// Instances are every instance ever deployed, by index; those gone
	// stay, with State Gone (Live lists the others).
	Instances []InstanceView
	// Decoupled reports whether the deployment has image and text pools.
	Decoupled bool
	// Numbers and Started describe a view that lists only some of a
	// deployment's instances (a policy server's, sent the live ones of a
	// long autoscaled run): Instances[k] is the deployment's instance
	// Numbers[k], in increasing order, of the Started it has started so
	// far. The simulation's own view leaves Numbers nil: Instances[k] is
	// instance k. Routers that count instances by number, gone ones too
	// (policies/modserve's round robin), read them through Number and
	// Deployed, and answer positions in Instances as every router does.
	Numbers []int
	Started int
	sim     *Sim
	scan    []int // Live's answer for Instances the caller set
}

// Number is the deployment's number of Instances[k]: Numbers[k], or k
// when Numbers is nil.
func (v *View) Number(k int) int {
	if v.Numbers == nil {
		return k
	}
	return v.Numbers[k]
}

// Deployed is how many instances the deployment has started so far:
// Started, or len(Instances) when Numbers is nil.
func (v *View) Deployed() int {
	if v.Numbers == nil {
		return len(v.Instances)
	}
	return v.Started
}

// Live returns the indexes of the instances that are not gone, in
// increasing order: the ones a router need look at. Instances keeps every
// instance ever deployed, so in a long autoscaled run the gone ones
// outnumber the live ones many times over; a router that scans Live
// instead costs time in the live pools' size, and finds what a scan of
// Instances skipping the gone ones finds, in the same order. The slice is
// the simulation's: read it before the simulation moves on, and do not
// modify it. For a View whose Instances the caller replaced (a policy
// server's, built from a request), Live scans them.
func (v *View) Live() []int {
	if s := v.sim; s != nil && len(v.Instances) == len(s.inst) && len(s.inst) > 0 && &v.Instances[0] == s.first {
		return s.live
	}
	v.scan = v.scan[:0]
	for i := range v.Instances {
		if v.Instances[i].State != Gone {
			v.scan = append(v.scan, i)
		}
	}
	return v.scan
}

// IsolatedTTFT is r's time to first token alone on an idle monolithic
// instance (Sim.IsolatedTTFT).
func (v *View) IsolatedTTFT(r *Request) float64 { return v.sim.IsolatedTTFT(r) }

// ImageTokens is the tokens one 896x896 image becomes (Model.ImageTokens).
func (v *View) ImageTokens() int { return v.sim.cfg.Model.ImageTokens }

// ImageTokensOf is the tokens r's image j (0 <= j < View.Images(r))
// becomes: its size's (Config.Images).
func (v *View) ImageTokensOf(r *Request, j int) int {
	s := v.sim
	return int(s.shTok[s.shapes[int(s.reqs[r.ID].img0)+j]])
}

// Images is how many of r's images the simulation runs (Config.MaxImages).
func (v *View) Images(r *Request) int { return v.sim.reqs[r.ID].images() }

// Decision is a router's answer for one request.
type Decision struct {
	// Instance is the monolithic instance that runs every stage, or the
	// text instance that runs prefill and decode; Deferred (decoupled, a
	// request with images) chooses the text instance when the images are
	// encoded.
	Instance int
	// Images holds, in a decoupled deployment, the image instance of each
	// of the request's images (View.Images of them); empty otherwise.
	Images []int
	// Priority orders the request's images and prefill in the queues of
	// the instances it goes to: lower first, ties in arrival order
	// (FCFS: the arrival time).
	Priority float64
}

// Deferred is a Decision.Instance that leaves a decoupled request's text
// instance to be chosen when its images are encoded (ModServe routes a
// request's text then, its section 4.2), by the TextRouter that
// SetTextRouter installs (RunUntil installs its router when it is one).
const Deferred = -1

// TextRouter is a Router that can choose a request's text instance late:
// RouteText is called once the request's last image is encoded, when the
// request's Decision said Deferred.
type TextRouter interface {
	RouteText(v *View, r *Request) (int, error)
}

// Router decides where each arriving request's stages run.
type Router interface {
	// Route fills d for r, which has just arrived. d comes with
	// Instance 0, Priority r.Arrival and Images sized to the images
	// the simulation runs.
	Route(v *View, r *Request, d *Decision) error
}

// Result is what happened to one request. Times are in seconds since the
// start of the trace; a stage that did not happen is NaN.
type Result struct {
	// Arrival is the request's arrival.
	Arrival float64
	// Ready is when it could enter prefill (its images preprocessed, or
	// encoded and at its text instance), Start when its prefill began,
	// FirstToken when that iteration ended, End when its last token was
	// made.
	Ready, Start, FirstToken, End float64
	// SLO is its TTFT objective (s), +Inf for none.
	SLO float64
	// ID is the request's ID; Images, Prompt and Output its images and
	// tokens as simulated (after Config.MaxImages and the context cut;
	// Prompt is text tokens only, Config.PromptHasImageTokens' share of
	// the trace's taken away), and ImageTokens its images' tokens.
	ID, Images, Prompt, Output, ImageTokens int32
	// Instance is the monolithic or text instance it ran on.
	Instance int32
	// Dropped reports a request that could never fit its instance's
	// memory: it never runs (its times stay NaN) and counts in
	// Summary.Dropped.
	Dropped bool
}

// TTFT is the time to first token.
func (r Result) TTFT() float64 { return r.FirstToken - r.Arrival }

// E2E is the end-to-end latency.
func (r Result) E2E() float64 { return r.End - r.Arrival }

// TBT is the mean time between output tokens after the first, 0 for a
// one-token output.
func (r Result) TBT() float64 {
	if r.Output <= 1 {
		return 0
	}
	return (r.End - r.FirstToken) / float64(r.Output-1)
}

// rstate is one request's state.
type rstate struct {
	res     Result
	key     float64 // priority
	kv      float64 // KV bytes reserved
	ctx     float64 // KV bytes of its context when decode starts
	imgLeft int32   // images not yet at the text instance (or preprocessed)
	seqLen  int32   // tokens in its prefill sequence
	img0    int32   // its first image's index in Sim.shapes
	done    bool
}

func (r *rstate) images() int { return int(r.res.Images) }

type instance struct {
	pool    Pool
	costs   *Costs
	up      float64 // when it was added
	down    float64 // when it was gone
	cpuFree []float64
	encQ    queue
	encBusy bool
	batch   []int32 // the encoder's or the prefill's batch
	ebatch  []int32 // the encoder batch's images (their index in each request)
	waitQ   queue
	run     doneHeap
	tokIdx  int64 // decode iterations made so far
	busy    bool
	prefill bool // the op in flight is a prefill (else a decode run)
	ver     uint32
	opStart float64
	runK    int64
	runT0   float64
	runD    float64
	cut     bool
	kvUsed  float64
	kvCap   float64
	runKV   float64
}

// Sim is a multimodal serving simulation: a pure, deterministic
// discrete-event model (no clock, no goroutines, no I/O).
type Sim struct {
	cfg     Config
	costs   [3]Costs
	ref     Costs // the monolithic instance type: what IsolatedTTFT uses
	reqs    []rstate
	trace   []Request
	inst    []instance
	live    []int         // the instances not gone, in increasing order
	first   *InstanceView // &view.Instances[0], while the sim's own
	view    View
	events  eventHeap
	seq     uint64
	now     float64
	next    int
	pending bool
	dec     Decision
	maxImgs int
	obj     Objectives
	cut     [2]int // images and prompt tokens cut
	started int
	dropped int
	textR   TextRouter
	err     error // a late routing error, returned by the step calls

	// Images: every simulated image's shape (its tiles, 0 for an
	// 896x896 image under ImageSizes.Fixed), a request's from
	// rstate.img0; a shape's tokens and, by pool, encode seconds.
	fixedImg bool
	shapes   []uint8
	shTok    []int32
	shEnc    [3][]float64
	medShape uint8 // the median image's, by encode time (the objectives')
	fromPrm  int64 // prompt tokens read as the production model's image tokens
}

// SetTextRouter installs the router that chooses the text instance of
// requests routed Deferred (RunUntil installs its router itself when it
// implements TextRouter).
func (s *Sim) SetTextRouter(tr TextRouter) { s.textR = tr }

// New returns a simulation of cfg serving reqs, which must be in arrival
// order with IDs 0, 1, ... (as datasets/llm's readers and generators give
// them).
func New(cfg Config, reqs []Request) (*Sim, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	g, _ := infer.LookupGPU(cfg.GPU)
	s := &Sim{cfg: cfg, trace: reqs}
	for p := range numPools {
		if cfg.Costs[p] != nil {
			s.costs[p] = *cfg.Costs[p]
		} else {
			s.costs[p] = DeriveCosts(cfg.Model, g, cfg.TP[p], cfg.Efficiency, cfg.PreprocessSec)
		}
	}
	s.ref = s.costs[Mono]
	s.shapeTables()
	m := &s.cfg.Model
	s.maxImgs = cfg.MaxImages
	if s.maxImgs == 0 {
		small := m.ImageTokens
		if !s.fixedImg {
			small = min(small, int(s.shTok[1]))
		}
		s.maxImgs = (m.MaxContext - 1) / small
	}
	s.reqs = make([]rstate, len(reqs))
	prev := 0.0
	total := 0
	for i := range reqs {
		r := &reqs[i]
		if err := r.Validate(); err != nil {
			return nil, err
		}
		if r.ID != i || r.Arrival < prev {
			return nil, fmt.Errorf("%w: request %d (ID %d) at %v s: want IDs 0, 1, ... in arrival order", ErrBadConfig, i, r.ID, r.Arrival)
		}
		prev = r.Arrival
		total += min(r.Images, s.maxImgs)
	}
	if total >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d images", ErrBadConfig, total)
	}
	s.shapes = make([]uint8, 0, total)
	var text, img []int
	for i := range reqs {
		r := &reqs[i]
		rs := &s.reqs[i]
		img0 := len(s.shapes)
		prompt := s.drawImages(r)
		if r.Images > 0 {
			img = append(img, prompt)
		} else {
			text = append(text, prompt)
		}
		*rs = s.state(prompt, s.shapes[img0:], r.Output)
		s.shapes = s.shapes[:img0+rs.images()]
		rs.img0 = int32(img0)
		s.cut[0] += r.Images - rs.images()
		s.cut[1] += prompt - int(rs.res.Prompt)
		nan := math.NaN()
		rs.res.Arrival, rs.res.Ready, rs.res.Start, rs.res.FirstToken, rs.res.End = r.Arrival, nan, nan, nan, nan
		rs.res.ID, rs.res.Instance = int32(i), -1
	}
	if !s.fixedImg {
		s.medShape = s.medianShape(Mono, s.shapes)
	}
	s.obj = s.objectives(text, img)
	s.view = View{Decoupled: cfg.Decoupled(), sim: s}
	for p := range numPools {
		for range cfg.Instances[p] {
			if _, err := s.add(p, Active); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// kvImageExtra is the KV bytes an image token holds outside the text
// sequence (CrossAttention: the cross-attention layers'; DecoderOnly: 0,
// since its image tokens are in the sequence).
func kvImageExtra(m Model) float64 {
	if m.Arch == DecoderOnly {
		return 0
	}
	return m.KVBytesPerImageToken()
}

// MaxLive bounds the instances not gone at once (starting, active or
// draining, in every pool): AddInstance refuses one more. Starting and
// active instances are bounded by MaxInstances a pool already; the bound
// keeps draining ones from piling up without end, and a policy server's
// RouteMM request (every live instance) within what it accepts.
const MaxLive = 3 * MaxInstances

// maxDeployed bounds the instances deployed over a run, gone ones
// included: events and Result.Instance hold an instance's index in an
// int32.
const maxDeployed = math.MaxInt32

// add deploys an instance of pool p in state st. Only the live instances
// are bounded (MaxLive), not those deployed over the run: a gone instance
// keeps its index (View.Instances, Result.Instance and every decision
// name it for good, and ties among equal loads go to the lowest index),
// so its slot is not reused, and it costs its instance (264 bytes, its
// queues' buffers let go) and its InstanceView (72 bytes). ModServe's
// autoscaled Llama week at 5x the trace's rate starts 8,947 instances (3
// MB); 100,000 would take 34 MB, against at least 120 bytes of state for
// each of a run's requests (600 MB for that week's 5M): the requests'
// state bounds a run's memory long before its gone instances do.
func (s *Sim) add(p Pool, st State) (int, error) {
	if len(s.live) >= MaxLive {
		return 0, fmt.Errorf("%w: %d instances not gone", ErrBadAction, len(s.live))
	}
	if len(s.inst) >= maxDeployed {
		return 0, fmt.Errorf("%w: %d instances deployed", ErrBadAction, len(s.inst))
	}
	g, _ := infer.LookupGPU(s.cfg.GPU)
	tp := s.cfg.TP[p]
	in := instance{pool: p, costs: &s.costs[p], up: s.now, down: math.NaN(), cpuFree: make([]float64, s.cfg.PreprocessWorkers*tp)}
	for i := range in.cpuFree {
		in.cpuFree[i] = s.now
	}
	if p != Image {
		w := s.cfg.Model.WeightBytes
		if p == Text {
			w -= s.cfg.Model.EncoderWeightBytes
		}
		in.kvCap = float64(tp)*float64(g.MemoryBytes)*s.cfg.MemoryUtil - w
		if !(in.kvCap > 0) {
			return 0, fmt.Errorf("%w: %s's weights do not fit %d x %s", ErrBadConfig, s.cfg.Model.Name, tp, g.Name)
		}
	} else if s.cfg.Model.EncoderWeightBytes >= float64(tp)*float64(g.MemoryBytes) {
		return 0, fmt.Errorf("%w: %s's encoder does not fit %d x %s", ErrBadConfig, s.cfg.Model.Name, tp, g.Name)
	}
	s.inst = append(s.inst, in)
	s.view.Instances = append(s.view.Instances, InstanceView{Pool: p, State: st, TP: tp})
	s.first = &s.view.Instances[0]
	s.live = append(s.live, len(s.inst)-1)
	return len(s.inst) - 1, nil
}

// Config returns the simulated deployment's configuration.
func (s *Sim) Config() Config { return s.cfg }

// Costs returns the stage costs of pool p's instances.
func (s *Sim) Costs(p Pool) Costs { return s.costs[p] }

// Now is the simulated time (s).
func (s *Sim) Now() float64 { return s.now }

// View is what routers see; it stays valid (and current) for the
// simulation's life, though AddInstance may move its Instances.
func (s *Sim) View() *View {
	s.view.Now = s.now
	return &s.view
}

// IsolatedTTFT is r's time to first token alone on an idle monolithic
// instance of this configuration's model, GPU and TP: its images
// preprocessed (PreprocessWorkers at a time), encoded in one batch and
// prefilled in one iteration. Requests' SLOs scale it.
func (s *Sim) IsolatedTTFT(r *Request) float64 { return s.isolated(&s.reqs[r.ID]) }

func (s *Sim) isolated(rs *rstate) float64 {
	c := &s.ref
	n := rs.images()
	w := s.cfg.PreprocessWorkers * s.cfg.TP[Mono]
	return float64((n+w-1)/w)*c.Preprocess + s.encodeReq(c, Mono, rs) + c.IterFixed + s.prefillWork(c, rs)
}

// encodeReq is the time to encode rs's images in one batch on an
// instance of pool p (costs c).
func (s *Sim) encodeReq(c *Costs, p Pool, rs *rstate) float64 {
	n := rs.images()
	if s.fixedImg || n == 0 {
		return c.Encode(n)
	}
	return c.EncodeFixed + s.encodeImages(p, rs)
}

// encodeImages is the per-image part of encoding rs's images on pool p.
func (s *Sim) encodeImages(p Pool, rs *rstate) float64 {
	t := 0.0
	for _, k := range s.shapes[rs.img0 : int(rs.img0)+rs.images()] {
		t += s.shEnc[p][k]
	}
	return t
}

// Objectives returns the run's latency objectives (Config.SLO): Factor
// times the isolated TTFT on the monolith of a text-only request and of a
// one-image request, each with its kind's median prompt in the trace, and
// Factor times the isolated TBT of the latter (one decode iteration of a
// batch of one).
func (s *Sim) Objectives() Objectives { return s.obj }

func (s *Sim) objectives(text, img []int) Objectives {
	f := s.cfg.SLO.Factor
	inf := math.Inf(1)
	if f == 0 {
		return Objectives{inf, inf, inf}
	}
	med := func(v []int) int {
		if len(v) == 0 {
			return 1
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	// The one-image request's image: the median one by encode time, kept
	// past the requests' images.
	at := len(s.shapes)
	s.shapes = append(s.shapes, s.medShape)
	ti, ii := s.state(med(text), nil, 1), s.state(med(img), s.shapes[at:], 1)
	ii.img0 = int32(at)
	c := &s.ref
	return Objectives{TTFTText: f * s.isolated(&ti), TTFTImage: f * s.isolated(&ii),
		TBT: f * (c.IterFixed + c.PerToken + ii.ctx*c.PerKVByte)}
}

// state is the state of a request of prompt text tokens, images of the
// given shapes and output tokens before it runs, its images and prompt
// cut to what the model takes (images past the context's first).
func (s *Sim) state(prompt int, shapes []uint8, output int) rstate {
	m := &s.cfg.Model
	n, tok := 0, 0
	for _, k := range shapes[:min(len(shapes), s.maxImgs)] {
		t := int(s.shTok[k])
		if tok+t > m.MaxContext-1 {
			break
		}
		n, tok = n+1, tok+t
	}
	text := prompt
	if s.cfg.MaxPrompt > 0 {
		text = min(text, s.cfg.MaxPrompt)
	}
	seq := text
	if m.Arch == DecoderOnly {
		text = max(1, min(text, m.MaxContext-tok))
		seq = text + tok
	} else {
		text = min(text, m.MaxContext)
		seq = text
	}
	var rs rstate
	rs.res.Images, rs.res.Prompt, rs.res.Output, rs.res.ImageTokens = int32(n), int32(text), int32(output), int32(tok)
	rs.seqLen = int32(seq)
	rs.ctx = float64(seq)*m.KVBytesPerToken() + float64(tok)*kvImageExtra(*m)
	rs.kv = rs.ctx + float64(output)*m.KVBytesPerToken()
	return rs
}

func (s *Sim) prefillWork(c *Costs, rs *rstate) float64 {
	img := 0
	if s.cfg.Model.Arch == CrossAttention {
		img = int(rs.res.ImageTokens)
	}
	return c.prefillWork(int(rs.seqLen), int(rs.res.Prompt), img)
}

func (s *Sim) push(t float64, kind uint8, inst, req int32, ver uint32) {
	s.seq++
	s.events.push(event{t: t, seq: s.seq, kind: kind, inst: inst, req: req, ver: ver})
}

// Next advances the simulation to the next arrival and returns it with the
// decision to fill (Router.Route's d); Apply routes it. It returns ErrDone
// when every request has arrived (events may remain: RunUntil or Run
// finish them).
func (s *Sim) Next() (*Request, *Decision, error) {
	if s.next >= len(s.trace) {
		return nil, nil, ErrDone
	}
	r := &s.trace[s.next]
	if !s.pending {
		s.process(r.Arrival)
		s.now = max(s.now, r.Arrival)
		s.pending = true
	}
	if s.err != nil {
		return nil, nil, s.err
	}
	n := s.reqs[r.ID].images()
	if !s.view.Decoupled {
		n = 0
	}
	if cap(s.dec.Images) < n {
		s.dec.Images = make([]int, n, max(n, 2*cap(s.dec.Images)))
	}
	s.dec.Images = s.dec.Images[:n]
	clear(s.dec.Images)
	s.dec.Instance, s.dec.Priority = 0, r.Arrival
	s.view.Now = s.now
	return r, &s.dec, nil
}

// Apply routes the request Next returned as d says.
func (s *Sim) Apply(d *Decision) error {
	if !s.pending {
		return fmt.Errorf("%w: no request to route (call Next)", ErrBadDecision)
	}
	r := &s.trace[s.next]
	rs := &s.reqs[r.ID]
	want := Mono
	if s.view.Decoupled {
		want = Text
	}
	n := rs.images()
	if d.Instance == Deferred && s.view.Decoupled && n > 0 {
		if s.textR == nil {
			return fmt.Errorf("%w: request %d deferred without a text router (SetTextRouter)", ErrBadDecision, r.ID)
		}
	} else if err := s.check(d.Instance, want); err != nil {
		return err
	}
	if s.view.Decoupled && len(d.Images) != n {
		return fmt.Errorf("%w: request %d: %d image instances for %d images", ErrBadDecision, r.ID, len(d.Images), n)
	}
	if s.view.Decoupled {
		for _, j := range d.Images {
			if err := s.check(j, Image); err != nil {
				return err
			}
		}
	}
	if math.IsNaN(d.Priority) {
		return fmt.Errorf("%w: request %d: NaN priority", ErrBadDecision, r.ID)
	}
	s.pending = false
	s.next++
	s.route(r.ID, d)
	return nil
}

func (s *Sim) check(i int, p Pool) error {
	if i < 0 || i >= len(s.inst) {
		return fmt.Errorf("%w: instance %d of %d", ErrBadDecision, i, len(s.inst))
	}
	v := &s.view.Instances[i]
	if v.Pool != p || v.State != Active {
		return fmt.Errorf("%w: instance %d is a %s instance, %s; want an active %s instance", ErrBadDecision, i, v.Pool, v.State, p)
	}
	return nil
}

func (s *Sim) route(id int, d *Decision) {
	rs := &s.reqs[id]
	rs.key = d.Priority
	rs.res.SLO = s.obj.TTFTText
	if rs.images() > 0 {
		rs.res.SLO = s.obj.TTFTImage
	}
	if d.Instance != Deferred {
		s.bind(id, d.Instance)
	}
	n := rs.images()
	rs.imgLeft = int32(n)
	rs.res.Ready = s.now
	if n == 0 {
		s.enqueue(int32(d.Instance), int32(id))
		return
	}
	if !s.view.Decoupled {
		in := &s.inst[d.Instance]
		tv := &s.view.Instances[d.Instance]
		tv.PendingImages += n
		tv.PendingImageTokens += int64(rs.res.ImageTokens)
		t := s.now
		for range n {
			t = max(t, s.preprocess(in))
		}
		s.push(t, evReady, int32(d.Instance), int32(id), 0)
		return
	}
	for x, j := range d.Images {
		in := &s.inst[j]
		v := &s.view.Instances[j]
		v.PendingImages++
		v.PendingImageTokens += int64(s.shTok[s.shapes[int(rs.img0)+x]])
		s.push(s.preprocess(in), evPreprocessed, int32(j), int32(id), uint32(x))
	}
}

// bind makes instance i request id's text (or monolithic) instance.
func (s *Sim) bind(id, i int) {
	rs := &s.reqs[id]
	rs.res.Instance = int32(i)
	tv := &s.view.Instances[i]
	tv.Outstanding++
	tv.PendingTokens += int64(rs.seqLen) + int64(rs.res.Output)
	tv.PendingPrefillTokens += int64(rs.seqLen)
}

// preprocess gives one image to in's earliest free CPU worker and
// returns when it is done.
func (s *Sim) preprocess(in *instance) float64 {
	k := 0
	for i, f := range in.cpuFree {
		if f < in.cpuFree[k] {
			k = i
		}
	}
	t := max(s.now, in.cpuFree[k]) + in.costs.Preprocess
	in.cpuFree[k] = t
	return t
}

// process runs every event at or before t.
func (s *Sim) process(t float64) {
	for len(s.events) > 0 && s.events[0].t <= t {
		e := s.events.pop()
		s.now = max(s.now, e.t)
		switch e.kind {
		case evPreprocessed:
			in := &s.inst[e.inst]
			rs := &s.reqs[e.req]
			s.seq++
			in.encQ.push(item{key: rs.key, seq: s.seq, req: e.req, img: int32(e.ver)})
			if !in.encBusy {
				s.encode(e.inst)
			}
		case evEncoded:
			s.encoded(e.inst)
		case evReady:
			s.enqueue(e.inst, e.req)
		case evIter:
			if e.ver == s.inst[e.inst].ver {
				s.iterDone(e.inst)
			}
		case evStarted:
			if v := &s.view.Instances[e.inst]; v.State == Starting {
				v.State = Active
			}
		}
	}
}

// encode starts an encoder batch on image instance i.
func (s *Sim) encode(i int32) {
	in := &s.inst[i]
	n := min(len(in.encQ), s.cfg.MaxEncodeBatch)
	if n == 0 {
		return
	}
	in.batch, in.ebatch = in.batch[:0], in.ebatch[:0]
	t := in.costs.EncodeFixed
	for range n {
		it := in.encQ.pop()
		in.batch = append(in.batch, it.req)
		in.ebatch = append(in.ebatch, it.img)
		t += s.shEnc[in.pool][s.shapes[int(s.reqs[it.req].img0)+int(it.img)]]
	}
	if s.fixedImg {
		t = in.costs.Encode(n)
	}
	in.encBusy = true
	s.push(s.now+t, evEncoded, i, 0, 0)
}

func (s *Sim) encoded(i int32) {
	in := &s.inst[i]
	v := &s.view.Instances[i]
	m := &s.cfg.Model
	for x, id := range in.batch {
		rs := &s.reqs[id]
		v.PendingImages--
		v.PendingImageTokens -= int64(s.shTok[s.shapes[int(rs.img0)+int(in.ebatch[x])]])
		rs.imgLeft--
		if rs.imgLeft == 0 {
			if rs.res.Instance < 0 {
				j, err := s.textR.RouteText(s.View(), &s.trace[id])
				if err == nil {
					err = s.check(j, Text)
				}
				if err != nil {
					if s.err == nil {
						s.err = fmt.Errorf("route the text of request %d: %w", id, err)
					}
					continue
				}
				s.bind(int(id), j)
			}
			// The text instance pulls every image's tokens at once.
			xfer := s.cfg.Link.Latency + float64(rs.res.ImageTokens)*float64(m.Hidden)*2/s.cfg.Link.BytesPerSec
			s.push(s.now+xfer, evReady, rs.res.Instance, id, 0)
		}
	}
	in.encBusy = false
	s.encode(i)
	s.maybeGone(i)
}

// enqueue makes request id ready for prefill on instance i.
func (s *Sim) enqueue(i, id int32) {
	in := &s.inst[i]
	rs := &s.reqs[id]
	rs.res.Ready = s.now
	s.seq++
	in.waitQ.push(item{key: rs.key, seq: s.seq, req: id})
	s.view.Instances[i].Waiting++
	if !in.busy {
		s.schedule(i)
		return
	}
	if !in.prefill && !in.cut && s.admissible(in, &s.reqs[in.waitQ[0].req], 0, 0) {
		s.cutRun(i)
	}
}

// admissible reports whether a prompt may join a prefill batch of n
// requests and tok tokens so far.
func (s *Sim) admissible(in *instance, rs *rstate, n int, tok int) bool {
	if len(in.run)+n+1 > s.cfg.MaxBatchSize {
		return false
	}
	if n > 0 && tok+int(rs.seqLen) > s.cfg.MaxBatchTokens {
		return false
	}
	return in.kvUsed+rs.kv <= in.kvCap
}

// runTime is the time of the first k iterations of the decode run in
// flight on in.
func runTime(in *instance, k int64) float64 {
	fk := float64(k)
	return fk*in.runT0 + in.runD*fk*(fk-1)/2
}

// cutRun ends instance i's decode run at the end of the iteration in
// flight, so that a waiting prompt runs next.
func (s *Sim) cutRun(i int32) {
	in := &s.inst[i]
	in.cut = true
	el := s.now - in.opStart
	var n int64
	if in.runD == 0 {
		n = int64(el / in.runT0)
	} else {
		b := in.runT0 - in.runD/2
		n = int64((-b + math.Sqrt(b*b+2*in.runD*el)) / in.runD)
	}
	n = max(n, 0)
	for runTime(in, n+1) <= el {
		n++
	}
	for n > 0 && runTime(in, n) > el {
		n--
	}
	if k := n + 1; k < in.runK {
		in.runK = k
		in.ver++
		s.push(in.opStart+runTime(in, k), evIter, i, 0, in.ver)
	}
}

// schedule starts instance i's next iteration: the waiting prompts that
// fit (prefill first, as vLLM does), else a decode run.
func (s *Sim) schedule(i int32) {
	in := &s.inst[i]
	v := &s.view.Instances[i]
	c := in.costs
	in.batch = in.batch[:0]
	tok, work, imgs, itok, enc := 0, 0.0, 0, int64(0), 0.0
	for len(in.waitQ) > 0 {
		rs := &s.reqs[in.waitQ[0].req]
		if !s.admissible(in, rs, len(in.batch), tok) {
			if len(in.batch) == 0 && len(in.run) == 0 && in.kvUsed == 0 {
				// It can never fit: drop it.
				in.waitQ.pop()
				v.Waiting--
				s.drop(i, rs)
				continue
			}
			break
		}
		id := in.waitQ.pop().req
		v.Waiting--
		in.batch = append(in.batch, id)
		tok += int(rs.seqLen)
		work += s.prefillWork(c, rs)
		imgs += rs.images()
		itok += int64(rs.res.ImageTokens)
		if in.pool == Mono && !s.fixedImg {
			enc += s.encodeImages(Mono, rs)
		}
		in.kvUsed += rs.kv
		rs.res.Start = s.now
	}
	if len(in.batch) > 0 {
		t := c.IterFixed + work
		if in.pool == Mono && imgs > 0 {
			if s.fixedImg {
				t += c.Encode(imgs)
			} else {
				t += c.EncodeFixed + enc
			}
			v.PendingImages -= imgs
			v.PendingImageTokens -= itok
		}
		in.busy, in.prefill = true, true
		in.ver++
		s.push(s.now+t, evIter, i, 0, in.ver)
		return
	}
	if len(in.run) == 0 {
		in.busy = false
		return
	}
	b := float64(len(in.run))
	kvTok := s.cfg.Model.KVBytesPerToken()
	in.busy, in.prefill, in.cut = true, false, false
	in.opStart = s.now
	in.runK = in.run[0].at - in.tokIdx
	in.runT0 = c.IterFixed + b*c.PerToken + in.runKV*c.PerKVByte
	in.runD = b * kvTok * c.PerKVByte
	in.ver++
	s.push(s.now+runTime(in, in.runK), evIter, i, 0, in.ver)
}

func (s *Sim) drop(i int32, rs *rstate) {
	s.dropped++
	rs.done = true
	rs.res.Dropped = true
	v := &s.view.Instances[i]
	v.Outstanding--
	v.PendingTokens -= int64(rs.seqLen) + int64(rs.res.Output)
	v.PendingPrefillTokens -= int64(rs.seqLen)
}

// iterDone ends instance i's iteration or decode run.
func (s *Sim) iterDone(i int32) {
	in := &s.inst[i]
	v := &s.view.Instances[i]
	kvTok := s.cfg.Model.KVBytesPerToken()
	if in.prefill {
		for _, id := range in.batch {
			rs := &s.reqs[id]
			rs.res.FirstToken = s.now
			v.PendingTokens -= int64(rs.seqLen) + 1
			v.PendingPrefillTokens -= int64(rs.seqLen)
			if rs.res.Output <= 1 {
				s.finish(i, rs)
				continue
			}
			in.run.push(done{at: in.tokIdx + int64(rs.res.Output) - 1, req: id})
			in.runKV += rs.ctx
			v.Running++
		}
	} else {
		n := in.runK
		b := int64(len(in.run))
		in.tokIdx += n
		in.runKV += float64(n*b) * kvTok
		v.PendingTokens -= n * b
		for len(in.run) > 0 && in.run[0].at == in.tokIdx {
			rs := &s.reqs[in.run.pop().req]
			in.runKV -= rs.ctx + float64(rs.res.Output-1)*kvTok
			v.Running--
			s.finish(i, rs)
		}
		if len(in.run) == 0 {
			in.runKV = 0 // no drift
		}
	}
	in.busy = false
	s.schedule(i)
	s.maybeGone(i)
}

func (s *Sim) finish(i int32, rs *rstate) {
	in := &s.inst[i]
	rs.res.End = s.now
	rs.done = true
	in.kvUsed = max(in.kvUsed-rs.kv, 0)
	s.view.Instances[i].Outstanding--
}

// maybeGone retires draining instance i once it holds no work.
func (s *Sim) maybeGone(i int32) {
	v := &s.view.Instances[i]
	if v.State != Draining {
		return
	}
	in := &s.inst[i]
	if in.busy || in.encBusy || v.PendingImages > 0 || v.Outstanding > 0 {
		return
	}
	s.retire(i)
}

// retire makes instance i gone: it leaves the live list and lets go of
// its buffers (no event for it can come: a stale iteration's is ignored
// by its version, a start's by its state).
func (s *Sim) retire(i int32) {
	in := &s.inst[i]
	s.view.Instances[i].State = Gone
	in.down = s.now
	in.cpuFree, in.encQ, in.batch, in.waitQ, in.run = nil, nil, nil, nil, nil
	k, _ := slices.BinarySearch(s.live, int(i))
	s.live = slices.Delete(s.live, k, k+1)
}

// RunUntil routes every request arriving at or before t with r and runs
// every event up to t, then sets the clock to t (if t is finite).
func (s *Sim) RunUntil(t float64, r Router) error {
	if tr, ok := r.(TextRouter); ok {
		s.textR = tr
	}
	for s.next < len(s.trace) && s.trace[s.next].Arrival <= t {
		req, d, err := s.Next()
		if err != nil {
			return err
		}
		if err := r.Route(s.View(), req, d); err != nil {
			return fmt.Errorf("route request %d: %w", req.ID, err)
		}
		if err := s.Apply(d); err != nil {
			return err
		}
	}
	if s.pending {
		return fmt.Errorf("%w: request %d not routed", ErrBadDecision, s.next)
	}
	s.process(t)
	if !math.IsInf(t, 1) {
		s.now = max(s.now, t)
	}
	return s.err
}

// Run routes every request with r and runs the simulation to its end.
func (s *Sim) Run(r Router) (Summary, error) {
	if err := s.RunUntil(math.Inf(1), r); err != nil {
		return Summary{}, err
	}
	return s.Summary(), nil
}

// Done reports whether every request has arrived and no event is left.
func (s *Sim) Done() bool { return s.next >= len(s.trace) && len(s.events) == 0 }

// AddInstance adds an instance to pool p (a scaling action): it holds its
// GPUs from now and takes requests after the pool's start-up time. It
// returns the new instance's index.
func (s *Sim) AddInstance(p Pool) (int, error) {
	if p >= numPools || (p == Mono) == s.view.Decoupled {
		return 0, fmt.Errorf("%w: a %v instance in a %s deployment", ErrBadAction, p, map[bool]string{true: "decoupled", false: "monolithic"}[s.view.Decoupled])
	}
	if s.PoolSize(p) >= MaxInstances {
		return 0, fmt.Errorf("%w: pool %v has %d instances", ErrBadAction, p, MaxInstances)
	}
	i, err := s.add(p, Starting)
	if err != nil {
		return 0, err
	}
	s.started++
	s.push(s.now+s.cfg.StartupSec[p], evStarted, int32(i), 0, 0)
	return i, nil
}

// RemoveInstance removes instance i (a scaling action): a starting
// instance is gone at once; an active one drains (takes no new requests,
// finishes its own) and is gone when empty. It is an error to remove the
// last active instance of a pool.
func (s *Sim) RemoveInstance(i int) error {
	if i < 0 || i >= len(s.inst) {
		return fmt.Errorf("%w: instance %d of %d", ErrBadAction, i, len(s.inst))
	}
	v := &s.view.Instances[i]
	switch v.State {
	case Starting:
		s.retire(int32(i))
	case Active:
		if s.count(v.Pool, Active) == 1 {
			return fmt.Errorf("%w: instance %d is the last active %s instance", ErrBadAction, i, v.Pool)
		}
		v.State = Draining
		s.maybeGone(int32(i))
	default:
		return fmt.Errorf("%w: instance %d is %s", ErrBadAction, i, v.State)
	}
	return nil
}

func (s *Sim) count(p Pool, st State) int {
	n := 0
	for _, i := range s.live {
		if v := &s.view.Instances[i]; v.Pool == p && v.State == st {
			n++
		}
	}
	return n
}

// PoolSize is pool p's instances that are starting or active (what a
// scaling policy sets).
func (s *Sim) PoolSize(p Pool) int { return s.count(p, Starting) + s.count(p, Active) }

// GPUSeconds is the GPU time held so far: every instance's GPUs from when
// it was added (or the start) until it was gone (or now).
//
// It visits every instance ever deployed, in index order, as it always
// has: a sum kept as instances go (the gone ones' time, plus the live
// ones' at each call) would cost the live pools' size, but floating-point
// addition is not associative, and a live instance's time, which grows
// with now, sits among the gone ones in index order, so no such sum gives
// the same value bit for bit, and env/mmgym's rewards (a period's
// difference of two calls) would move by rounding. It costs one
// multiply-add an instance and is called per period (env/mmgym) and per
// Summary, not per event.
func (s *Sim) GPUSeconds() float64 {
	t := 0.0
	for i := range s.inst {
		in := &s.inst[i]
		end := s.now
		if !math.IsNaN(in.down) {
			end = in.down
		}
		t += float64(s.view.Instances[i].TP) * (end - in.up)
	}
	return t
}

// Results returns a copy of every request's result so far, by ID.
func (s *Sim) Results() []Result {
	out := make([]Result, len(s.reqs))
	for i := range s.reqs {
		out[i] = s.reqs[i].res
	}
	return out
}

// Result returns request id's result so far.
func (s *Sim) Result(id int) Result { return s.reqs[id].res }
