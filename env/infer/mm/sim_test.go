package mm

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/infer"
)

// fewest routes to the active instances with the fewest pending tokens
// (text, monolithic) and pending image tokens (each image, counted as it
// is placed), FCFS.
type fewest struct{ img []int64 }

func (f *fewest) Route(v *View, r *Request, d *Decision) error {
	best := -1
	f.img = f.img[:0]
	for i := range v.Instances {
		x := &v.Instances[i]
		f.img = append(f.img, x.PendingImageTokens)
		if x.State != Active || x.Pool == Image {
			continue
		}
		if best < 0 || x.PendingTokens < v.Instances[best].PendingTokens {
			best = i
		}
	}
	d.Instance = best
	for j := range d.Images {
		b := -1
		for i := range v.Instances {
			if x := &v.Instances[i]; x.State == Active && x.Pool == Image && (b < 0 || f.img[i] < f.img[b]) {
				b = i
			}
		}
		d.Images[j] = b
		f.img[b]++
	}
	return nil
}

func week(t testing.TB, minutes int) []Request {
	t.Helper()
	reqs, err := llm.LMMSynth{Minutes: minutes}.Generate(rand.NewPCG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// TestIsolated checks a lone request against the stage costs added by
// hand: on a monolithic instance its TTFT is IsolatedTTFT; decoupled, its
// images go to two image instances in parallel, then the pull, then the
// prefill; and a lone decode's iterations sum as a loop sums them.
func TestIsolated(t *testing.T) {
	for _, m := range []Model{Llama32_11BVision, InternVL25_26B} {
		req := []Request{{ID: 0, Arrival: 3, Prompt: 500, Output: 40, Images: 3}}
		s, err := New(Monolith(m, 2).Fixed896(), req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(&fewest{}); err != nil {
			t.Fatal(err)
		}
		r := s.Result(0)
		if got, want := r.TTFT(), s.IsolatedTTFT(&req[0]); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s monolith: TTFT %v, want %v", m.Name, got, want)
		}
		c := s.Costs(Mono)
		kv := m.KVBytesPerToken()
		ctx := float64(500)*kv + 3*float64(m.ImageTokens)*m.KVBytesPerImageToken()
		dec := 0.0
		for i := range 39 {
			dec += c.IterFixed + c.PerToken + (ctx+float64(i)*kv)*c.PerKVByte
		}
		if got := r.End - r.FirstToken; math.Abs(got-dec) > 1e-12 {
			t.Errorf("%s: decode %v s, want %v", m.Name, got, dec)
		}

		s, err = New(Decoupled(m, 2, 1).Fixed896(), req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(&fewest{}); err != nil {
			t.Fatal(err)
		}
		ci, ct := s.Costs(Image), s.Costs(Text)
		// Images 0 and 2 on instance 0 (one after the other), 1 on 1.
		enc := ci.Preprocess + 2*ci.Encode(1)
		pull := RDMA.Latency + 3*m.EmbeddingBytes()/RDMA.BytesPerSec
		rs := s.state(500, []uint8{0, 0, 0}, 40)
		want := enc + pull + ct.IterFixed + s.prefillWork(&ct, &rs)
		if got := s.Result(0).TTFT(); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s decoupled: TTFT %v, want %v", m.Name, got, want)
		}
	}
}

// naive runs text-only requests on one monolithic instance iteration by
// iteration, FCFS, as the package documents its loop; it returns each
// request's first-token and end times.
func naive(c Costs, m Model, maxBatch int, reqs []Request) (first, end []float64) {
	first, end = make([]float64, len(reqs)), make([]float64, len(reqs))
	kv := m.KVBytesPerToken()
	type run struct {
		id   int
		left int
		ctx  float64
	}
	var running []run
	var waiting []int
	now, next := 0.0, 0
	for next < len(reqs) || len(waiting) > 0 || len(running) > 0 {
		for next < len(reqs) && reqs[next].Arrival <= now {
			waiting = append(waiting, next)
			next++
		}
		if len(waiting) == 0 && len(running) == 0 {
			now = reqs[next].Arrival
			continue
		}
		if len(waiting) > 0 && len(running) < maxBatch {
			t := c.IterFixed
			var batch []int
			for len(waiting) > 0 && len(running)+len(batch) < maxBatch {
				id := waiting[0]
				waiting = waiting[1:]
				batch = append(batch, id)
				t += c.prefillWork(reqs[id].Prompt, reqs[id].Prompt, 0)
			}
			now += t
			for _, id := range batch {
				first[id] = now
				if reqs[id].Output == 1 {
					end[id] = now
					continue
				}
				running = append(running, run{id, reqs[id].Output - 1, float64(reqs[id].Prompt) * kv})
			}
			continue
		}
		t := c.IterFixed + float64(len(running))*c.PerToken
		for _, r := range running {
			t += r.ctx * c.PerKVByte
		}
		now += t
		keep := running[:0]
		for _, r := range running {
			r.left--
			r.ctx += kv
			if r.left == 0 {
				end[r.id] = now
				continue
			}
			keep = append(keep, r)
		}
		running = keep
	}
	return first, end
}

// TestDecodeRunsAgainstNaive compares the simulator's decode runs (closed
// form, cut when a prompt arrives) with the iteration-by-iteration loop.
func TestDecodeRunsAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var reqs []Request
	at := 0.0
	for i := range 300 {
		at += rng.ExpFloat64() * 0.05
		reqs = append(reqs, Request{ID: i, Arrival: at, Prompt: 1 + rng.IntN(3000), Output: 1 + rng.IntN(300)})
	}
	cfg := Monolith(Llama32_11BVision, 1)
	cfg.MaxBatchSize = 16
	s, err := New(cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(&fewest{}); err != nil {
		t.Fatal(err)
	}
	first, end := naive(s.Costs(Mono), cfg.Model, cfg.MaxBatchSize, reqs)
	worst := 0.0
	for i := range reqs {
		r := s.Result(i)
		worst = max(worst, math.Abs(r.FirstToken-first[i]), math.Abs(r.End-end[i]))
	}
	if worst > 1e-9 {
		t.Errorf("largest difference from the naive loop %v s, want <= 1e-9", worst)
	}
}

// TestDeterministic runs six hours twice: identical results.
func TestDeterministic(t *testing.T) {
	reqs := week(t, 360)
	var got [2][]Result
	for k := range got {
		s, err := New(Decoupled(InternVL25_26B, 48, 20), reqs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(&fewest{}); err != nil {
			t.Fatal(err)
		}
		got[k] = s.Results()
	}
	if d := cmp.Diff(got[0], got[1], cmp.Comparer(func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) })); d != "" {
		t.Errorf("two runs differ (-first,+second):\n%s", d)
	}
}

// TestDay runs six hours of the trace on both deployments of both
// models: every request finishes, none is dropped, TBT stays positive.
func TestDay(t *testing.T) {
	reqs := week(t, 360)
	for _, cfg := range []Config{Monolith(Llama32_11BVision, 32), Decoupled(Llama32_11BVision, 48, 20), Monolith(InternVL25_26B, 32), Decoupled(InternVL25_26B, 48, 20)} {
		s, err := New(cfg, reqs)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := s.Run(&fewest{})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Finished != len(reqs) || sum.Dropped != 0 || !(sum.TTFT.P50 > 0) || !(sum.TBT.Mean > 0) {
			t.Errorf("%s %v: %d of %d finished, %d dropped, TTFT %+v", cfg.Model.Name, cfg.Instances, sum.Finished, len(reqs), sum.Dropped, sum.TTFT)
		}
		if want := 128 * 6.0; math.Abs(sum.GPUHours-want) > 0.5*128 {
			t.Errorf("%s %v: %v GPU-hours, want about %v", cfg.Model.Name, cfg.Instances, sum.GPUHours, want)
		}
		if len(sum.Derived) == 0 {
			t.Errorf("%s: no derived cost listed", cfg.Model.Name)
		}
		for i, v := range s.View().Instances {
			in := &s.inst[i]
			if v != (InstanceView{Pool: v.Pool, State: v.State, TP: v.TP}) || in.kvUsed != 0 || in.runKV != 0 || len(in.run) != 0 || len(in.waitQ) != 0 || len(in.encQ) != 0 {
				t.Errorf("%s %v: instance %d left %+v, KV %v reserved, %v read", cfg.Model.Name, cfg.Instances, i, v, in.kvUsed, in.runKV)
				break
			}
		}
	}
}

// TestScaling adds and removes instances: an added one takes requests
// after its start-up, a removed one drains and holds its GPUs until gone.
func TestScaling(t *testing.T) {
	reqs := []Request{
		{ID: 0, Arrival: 0, Prompt: 100, Output: 50000, Images: 1},
		{ID: 1, Arrival: 100, Prompt: 100, Output: 10, Images: 2},
	}
	s, err := New(Decoupled(Llama32_11BVision, 1, 1), reqs)
	if err != nil {
		t.Fatal(err)
	}
	r := &fewest{}
	if err := s.RunUntil(1, r); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddInstance(Mono); !errors.Is(err, ErrBadAction) {
		t.Errorf("AddInstance(Mono) in a decoupled deployment: %v, want ErrBadAction", err)
	}
	i, err := s.AddInstance(Text)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveInstance(1); !errors.Is(err, ErrBadAction) {
		t.Errorf("removing the last active text instance: %v, want ErrBadAction", err)
	}
	if err := s.RunUntil(1+DefaultStartupSec, r); err != nil {
		t.Fatal(err)
	}
	if got := s.View().Instances[i].State; got != Active {
		t.Errorf("new instance after start-up: %v, want active", got)
	}
	if err := s.RemoveInstance(1); err != nil { // the old text instance drains
		t.Fatal(err)
	}
	if got := s.View().Instances[1].State; got != Draining {
		t.Errorf("old text instance %v, want draining", got)
	}
	if _, err := s.Run(r); err != nil {
		t.Fatal(err)
	}
	if got := s.Result(1).Instance; int(got) != i {
		t.Errorf("request 1 ran on %d, want the new instance %d", got, i)
	}
	in := s.inst[1]
	if got, want := in.down, s.Result(0).End; got != want {
		t.Errorf("old instance gone at %v, want when its request ended, %v", got, want)
	}
	want := 1*s.now + 4*in.down + 4*(s.now-1)
	if got := s.GPUSeconds(); math.Abs(got-want) > 1e-9 {
		t.Errorf("GPU-seconds %v, want %v", got, want)
	}
}

// TestMaxPrompt: Config.MaxPrompt cuts prompts and counts the tokens cut.
func TestMaxPrompt(t *testing.T) {
	cfg := Monolith(Llama32_11BVision, 1)
	cfg.MaxPrompt = 1000
	s, err := New(cfg, []Request{{ID: 0, Prompt: 5000, Output: 2}, {ID: 1, Arrival: 1, Prompt: 10, Output: 2}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.Run(&fewest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := []int32{s.Result(0).Prompt, s.Result(1).Prompt}; got[0] != 1000 || got[1] != 10 || sum.CutTokens != 4000 {
		t.Errorf("prompts %v, %d tokens cut; want [1000 10], 4000", got, sum.CutTokens)
	}
}

// TestDropped: a request whose KV cache can never fit its instance is
// dropped (Result.Dropped, Summary.Dropped); the others run.
func TestDropped(t *testing.T) {
	cfg := Monolith(Llama32_11BVision, 1)
	cfg.MemoryUtil = 0.07 // 4 x 80 GiB x 0.07 - 21.3 GB of weights: 2.7 GB of KV
	s, err := New(cfg, []Request{{ID: 0, Prompt: 100000, Output: 2}, {ID: 1, Arrival: 1, Prompt: 10, Output: 2}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.Run(&fewest{})
	if err != nil {
		t.Fatal(err)
	}
	if r0, r1 := s.Result(0), s.Result(1); !r0.Dropped || !math.IsNaN(r0.End) || r1.Dropped || math.IsNaN(r1.End) || sum.Dropped != 1 || sum.Finished != 1 {
		t.Errorf("results %+v, %+v, summary dropped %d finished %d; want request 0 dropped, 1 finished", r0, r1, sum.Dropped, sum.Finished)
	}
}

// late defers every image request's text instance and then picks the
// last text instance, counting its calls.
type late struct {
	fewest
	calls int
}

func (l *late) Route(v *View, r *Request, d *Decision) error {
	if err := l.fewest.Route(v, r, d); err != nil {
		return err
	}
	if len(d.Images) > 0 {
		d.Instance = Deferred
	}
	return nil
}

func (l *late) RouteText(v *View, r *Request) (int, error) {
	l.calls++
	if v.Instances[len(v.Instances)-1].Outstanding != 0 {
		return 0, errors.New("the text instance was counted before it was chosen")
	}
	return len(v.Instances) - 1, nil
}

// TestDeferred: a deferred request's text instance is chosen once its
// images are encoded (not counted on any text instance before), and the
// request then runs as if routed there at arrival; a text-only request
// cannot be deferred.
func TestDeferred(t *testing.T) {
	req := []Request{{ID: 0, Arrival: 2, Prompt: 700, Output: 30, Images: 2}}
	run := func(r Router) Result {
		s, err := New(Decoupled(InternVL25_26B, 2, 3), req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(r); err != nil {
			t.Fatal(err)
		}
		return s.Result(0)
	}
	l := &late{}
	got := run(l)
	want := run(&fixedText{4})
	if l.calls != 1 || got != want || got.Instance != 4 {
		t.Errorf("deferred: %d calls, %+v; want 1 call and %+v", l.calls, got, want)
	}
	s, err := New(Decoupled(InternVL25_26B, 1, 1), []Request{{ID: 0, Prompt: 10, Output: 2}})
	if err != nil {
		t.Fatal(err)
	}
	s.SetTextRouter(l)
	_, d, _ := s.Next()
	d.Instance = Deferred
	if err := s.Apply(d); !errors.Is(err, ErrBadDecision) {
		t.Errorf("text-only request deferred: %v, want ErrBadDecision", err)
	}
}

// fixedText sends the text to instance i, the images as fewest does.
type fixedText struct{ i int }

func (f *fixedText) Route(v *View, r *Request, d *Decision) error {
	if err := (&fewest{}).Route(v, r, d); err != nil {
		return err
	}
	d.Instance = f.i
	return nil
}

func TestBadDecision(t *testing.T) {
	s, err := New(Decoupled(Llama32_11BVision, 1, 1), []Request{{ID: 0, Prompt: 10, Output: 2, Images: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, d, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	d.Instance = 0 // an image instance
	if err := s.Apply(d); !errors.Is(err, ErrBadDecision) {
		t.Errorf("text to an image instance: %v, want ErrBadDecision", err)
	}
	d.Instance, d.Images[0] = 1, 1
	if err := s.Apply(d); !errors.Is(err, ErrBadDecision) {
		t.Errorf("image to a text instance: %v, want ErrBadDecision", err)
	}
	d.Images[0] = 0
	if err := s.Apply(d); err != nil {
		t.Errorf("good decision: %v", err)
	}
}

// BenchmarkWeek simulates the LMM 2025 week (998,047 requests) on the
// paper's static deployments, images drawn and all 896x896 (Fixed896).
// go test ./env/infer/mm -run '^$' -bench Week -benchtime 1x -cpu 1
func BenchmarkWeek(b *testing.B) {
	reqs := week(b, 0)
	for _, cfg := range []Config{Monolith(InternVL25_26B, 32), Decoupled(InternVL25_26B, 48, 20),
		Monolith(InternVL25_26B, 32).Fixed896(), Decoupled(InternVL25_26B, 48, 20).Fixed896()} {
		images := map[bool]string{true: "fixed896", false: "drawn"}[cfg.Images.Fixed]
		b.Run(cfg.Model.Name+"/"+map[bool]string{true: "decoupled", false: "monolith"}[cfg.Decoupled()]+"/"+images, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := New(cfg, reqs)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Run(&fewest{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(reqs)), "requests/op")
		})
	}
}

// TestEncoderTP: the encoder's TP-4 to TP-8 speedup is the paper's 1.3x.
func TestEncoderTP(t *testing.T) {
	g, _ := infer.LookupGPU("a100-80gb")
	c4 := DeriveCosts(InternVL25_26B, g, 4, DefaultEfficiency, 0)
	c8 := DeriveCosts(InternVL25_26B, g, 8, DefaultEfficiency, 0)
	if got := c4.Encode(3) / c8.Encode(3); math.Abs(got-1.3) > 1e-9 {
		t.Errorf("TP-4/TP-8 encode time %v, want 1.3", got)
	}
}
