package modserve

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer/mm"
)

// fullScan is the routers as they were before they scanned only the live
// instances (mm.View.Live): every instance ever deployed, the gone ones
// skipped by their state. It is the slow, obviously correct version
// TestLiveScan checks Router against.
type fullScan struct {
	Router
	load []int64
}

func (r *fullScan) Route(v *mm.View, req *mm.Request, d *mm.Decision) error {
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
	r.load = r.load[:0]
	for i := range v.Instances {
		x := &v.Instances[i]
		l := int64(-1)
		if x.Pool == mm.Image && x.State == mm.Active {
			l = x.PendingImageTokens
		}
		r.load = append(r.load, l)
	}
	pick := func() int {
		b := -1
		for i, l := range r.load {
			if l >= 0 && (b < 0 || l < r.load[b]) {
				b = i
			}
		}
		return b
	}
	if !r.ModalityAware {
		n := len(r.load)
		for j := range d.Images {
			k := 0
			for ; k < n && r.load[r.rr%n] < 0; k++ {
				r.rr++
			}
			if k == n {
				return fmt.Errorf("%w: image pool", ErrNoInstance)
			}
			d.Images[j] = r.rr % n
			r.rr++
		}
		return nil
	}
	for j := range d.Images {
		b := pick()
		if b < 0 {
			return fmt.Errorf("%w: image pool", ErrNoInstance)
		}
		d.Images[j] = b
		r.load[b] += int64(v.ImageTokensOf(req, j))
	}
	return nil
}

func (r *fullScan) RouteText(v *mm.View, req *mm.Request) (int, error) {
	pool := mm.Text
	if !v.Decoupled {
		pool = mm.Mono
	}
	best := -1
	for i := range v.Instances {
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

// both routes with Router and checks that fullScan decides the same, and
// that the view's Live is the instances not gone; and that a third router
// (part) given a view of the live instances only, numbered (mm.View's
// Numbers and Started, as a policy server sees a client's live
// instances), decides the same once its positions are mapped back.
type both struct {
	r    *Router
	ref  *fullScan
	part *Router
	dec  mm.Decision
	errs []string

	pdec  mm.Decision
	pview mm.View
}

// partial is v with only its live instances, numbered.
func (b *both) partial(v *mm.View) *mm.View {
	live := slices.Clone(v.Live())
	b.pview = *v
	b.pview.Instances = nil
	for _, i := range live {
		b.pview.Instances = append(b.pview.Instances, v.Instances[i])
	}
	b.pview.Numbers, b.pview.Started = live, len(v.Instances)
	return &b.pview
}

// unmap maps a position in the partial view back to the instance's index.
func (b *both) unmap(k int) int {
	if k < 0 || k >= len(b.pview.Numbers) {
		return k
	}
	return b.pview.Numbers[k]
}

func (b *both) check(v *mm.View, what string) {
	var want []int
	for i := range v.Instances {
		if v.Instances[i].State != mm.Gone {
			want = append(want, i)
		}
	}
	if got := v.Live(); !slices.Equal(got, want) && len(b.errs) < 5 {
		b.errs = append(b.errs, fmt.Sprintf("%s: Live %v, want %v", what, got, want))
	}
}

func (b *both) Route(v *mm.View, req *mm.Request, d *mm.Decision) error {
	b.check(v, fmt.Sprintf("request %d", req.ID))
	b.dec = mm.Decision{Instance: d.Instance, Images: slices.Clone(d.Images), Priority: d.Priority}
	b.pdec = mm.Decision{Instance: d.Instance, Images: slices.Clone(d.Images), Priority: d.Priority}
	errRef := b.ref.Route(v, req, &b.dec)
	pv := b.partial(v)
	errPart := b.part.Route(pv, req, &b.pdec)
	if b.pdec.Instance != mm.Deferred {
		b.pdec.Instance = b.unmap(b.pdec.Instance)
	}
	for j, k := range b.pdec.Images {
		b.pdec.Images[j] = b.unmap(k)
	}
	err := b.r.Route(v, req, d)
	if (err != nil) != (errRef != nil) || d.Instance != b.dec.Instance || d.Priority != b.dec.Priority || !slices.Equal(d.Images, b.dec.Images) {
		if len(b.errs) < 5 {
			b.errs = append(b.errs, fmt.Sprintf("request %d: live scan %+v (%v), full scan %+v (%v)", req.ID, *d, err, b.dec, errRef))
		}
	}
	if (err != nil) != (errPart != nil) || d.Instance != b.pdec.Instance || d.Priority != b.pdec.Priority || !slices.Equal(d.Images, b.pdec.Images) {
		if len(b.errs) < 5 {
			b.errs = append(b.errs, fmt.Sprintf("request %d: live scan %+v (%v), live instances numbered %+v (%v)", req.ID, *d, err, b.pdec, errPart))
		}
	}
	return err
}

func (b *both) RouteText(v *mm.View, req *mm.Request) (int, error) {
	b.check(v, fmt.Sprintf("request %d's text", req.ID))
	want, errRef := b.ref.RouteText(v, req)
	part, errPart := b.part.RouteText(b.partial(v), req)
	part = b.unmap(part)
	got, err := b.r.RouteText(v, req)
	if (got != want || (err != nil) != (errRef != nil)) && len(b.errs) < 5 {
		b.errs = append(b.errs, fmt.Sprintf("request %d's text: live scan %d (%v), full scan %d (%v)", req.ID, got, err, want, errRef))
	}
	if (got != part || (err != nil) != (errPart != nil)) && len(b.errs) < 5 {
		b.errs = append(b.errs, fmt.Sprintf("request %d's text: live scan %d (%v), live instances numbered %d (%v)", req.ID, got, err, part, errPart))
	}
	return got, err
}

// TestLiveScan checks every router against fullScan, and against itself
// on views of the live instances only, numbered, request by request, in
// runs whose pools change every 10 s (an instance added to each
// pool three times in four, then a starting one removed at once and the
// two oldest active ones drained), so that gone
// instances sit among live ones and the round robin's count passes them.
func TestLiveScan(t *testing.T) {
	reqs, err := llm.LMMSynth{Requests: 5_000_000, Start: 1440, Minutes: 20}.Generate(rand.NewPCG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			r, err := New(name)
			if err != nil {
				t.Fatal(err)
			}
			ref, _ := New(name)
			part, _ := New(name)
			b := &both{r: r, ref: &fullScan{Router: *ref}, part: part}
			cfg := mm.Decoupled(mm.InternVL25_26B, 6, 3)
			pools := []mm.Pool{mm.Image, mm.Text}
			if name == Monolith {
				cfg, pools = mm.Monolith(mm.InternVL25_26B, 4), []mm.Pool{mm.Mono}
			}
			s, err := mm.New(cfg, reqs)
			if err != nil {
				t.Fatal(err)
			}
			for step := 1; !s.Done(); step++ {
				if err := s.RunUntil(10*float64(step), b); err != nil {
					t.Fatal(err)
				}
				if 10*float64(step) > reqs[len(reqs)-1].Arrival {
					continue // the pools stay as they are while the run ends
				}
				v := s.View()
				for _, p := range pools {
					switch step % 4 {
					case 0, 1, 2:
						if _, err := s.AddInstance(p); err != nil {
							t.Fatal(err)
						}
					case 3:
						var starting, active []int
						for i, x := range v.Instances {
							if x.Pool == p && x.State == mm.Starting {
								starting = append(starting, i)
							} else if x.Pool == p && x.State == mm.Active {
								active = append(active, i)
							}
						}
						for _, i := range append(starting[:min(1, len(starting))], active[:min(2, len(active)-1)]...) {
							if err := s.RemoveInstance(i); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
			}
			if len(b.errs) > 0 {
				t.Errorf("the live scan and the full scan differ:\n%v", b.errs)
			}
			v := s.View()
			if gone, live := len(v.Instances)-len(v.Live()), len(v.Live()); gone < 2*live {
				t.Errorf("%d instances gone, %d live: want the gone ones to outnumber the live twice", gone, live)
			}
			t.Logf("%d requests, %d instances deployed, %d live at the end", len(reqs), len(v.Instances), len(v.Live()))
		})
	}
}
