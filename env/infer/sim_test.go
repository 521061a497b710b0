package infer

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/internal/sharedtraces"
	"github.com/google/go-cmp/cmp"
)

// handTable is a performance table small enough to work by hand: two
// knots, at 100 and 1,100 batch tokens. Prompt: 10 ms and 110 ms, so
// prompt(x) = 0.01 + 1e-4 (x - 100) s, 0.1 s at 1,000 tokens. Token:
// 20 ms and 30 ms, so token(x) = 0.02 + 1e-5 (x - 100) s, extrapolated
// below 100: token(1) = 0.01901 s, token(2) = 0.01902 s.
const handTable = `model,hardware,prompt_size,batch_size,token_size,prompt_time,token_time,tensor_parallel
m,h100-80gb,100,1,128,10,20,8
m,h100-80gb,1100,1,128,110,30,8
m,a100-80gb,100,1,128,10,20,8
m,a100-80gb,1100,1,128,110,30,8
`

func handPerf(t testing.TB) *PerfTable {
	t.Helper()
	p, err := ParsePerfTable([]byte(handTable))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func handConfig(t testing.TB, roles ...Role) Config {
	c := Config{Model: Model{Name: "m", WeightBytes: 1 << 30, KVBytesPerToken: 1000}, Perf: handPerf(t),
		Link: LinkConfig{BytesPerSec: 1e6}}
	for _, r := range roles {
		c.Instances = append(c.Instances, InstanceConfig{GPU: "h100-80gb", TP: 8, Role: r, MaxBatchSize: 512, MaxBatchTokens: 2048, MaxPreemptions: 4})
	}
	return c
}

// fixed routes every request to the same instances.
type fixed Decision

func (f fixed) Route(*View, Request) (Decision, error) { return Decision(f), nil }

// leastTokens is token_jsq, written here because env must not import
// policies.
type leastTokens struct{}

func (leastTokens) Route(v *View, _ Request) (Decision, error) {
	best := 0
	for i := 1; i < v.NumInstances(); i++ {
		if v.Instance(i).PendingTokens < v.Instance(best).PendingTokens {
			best = i
		}
	}
	return Decision{Prefill: best, Decode: best}, nil
}

const tol = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestInterp(t *testing.T) {
	p := handPerf(t)
	tests := []struct {
		x           int
		prompt, tok float64
	}{
		{100, 0.01, 0.02},
		{1000, 0.1, 0.029},
		{1100, 0.11, 0.03},
		{1, 0.0001, 0.01901}, // extrapolated below the first knot
		{2100, 0.21, 0.04},   // and above the last
	}
	for _, tt := range tests {
		pt, _ := p.PromptTime("m", "h100-80gb", 8, tt.x)
		tk, _ := p.TokenTime("m", "h100-80gb", 8, tt.x)
		if !near(pt, tt.prompt) || !near(tk, tt.tok) {
			t.Errorf("x=%d: prompt %v token %v, want %v %v", tt.x, pt, tk, tt.prompt, tt.tok)
		}
	}
}

// TestPerfTableMedians checks the reduction of the real table: the knot at
// 2,048 batch tokens of llama2-70b on H100 TP8 is the median of the 10
// rows whose prompt_size x batch_size is 2,048 (picked by hand with awk
// and sort -g: prompt times 131.90 to 136.93 ms, the middle two 133.177...
// and 135.669... ms), in seconds, divided before the median as pandas
// sees them.
func TestPerfTableMedians(t *testing.T) {
	data, err := os.ReadFile(sharedtraces.Path(t, "llm", "calibration", "splitwise_perf_model.csv"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePerfTable(data)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := p.PromptTime("llama2-70b", "h100-80gb", 8, 2048)
	want := (133.17716598976403/1000 + 135.66924002952874/1000) / 2
	if math.Abs(got-want) > 1e-15 {
		t.Fatalf("prompt time at 2048 = %v, want %v", got, want)
	}
}

func TestSingleRequest(t *testing.T) {
	// One colocated instance, one request: the prompt runs at once
	// (TTFT = prompt(1000) = 0.1 s), then the 10 remaining tokens as 10
	// back-to-back iterations of one decode (10 x token(1) = 0.1901 s).
	s, err := New(handConfig(t, Colocated), []Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 11}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.Run(fixed{Prefill: 0, Decode: 0})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Results()[0]
	if !near(r.TTFT(), 0.1) || !near(r.E2E(), 0.1+10*0.01901) || r.Queue() != 0 {
		t.Fatalf("TTFT %v E2E %v queue %v, want 0.1, 0.2901, 0", r.TTFT(), r.E2E(), r.Queue())
	}
	if sum.Finished != 1 || sum.Iterations != 11 || sum.KVBytesMoved != 0 {
		t.Fatalf("summary %+v", sum)
	}
}

func TestPromptQueues(t *testing.T) {
	// Batch limit 1,000 tokens: r1's prompt waits for r0's (0.1 s); then
	// both decodes run as one batch of two for their one token.
	c := handConfig(t, Colocated)
	c.Instances[0].MaxBatchTokens = 1000
	s, _ := New(c, []Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 2}, {ID: 1, Arrival: 1.001, Prompt: 1000, Output: 2}})
	if _, err := s.Run(fixed{Prefill: 0, Decode: 0}); err != nil {
		t.Fatal(err)
	}
	rs := s.Results()
	want := []float64{0.1, 1.2 - 1.001}
	for i, r := range rs {
		if !near(r.TTFT(), want[i]) || !near(r.End, 1.2+0.01902) {
			t.Errorf("request %d: TTFT %v end %v, want %v and %v", i, r.TTFT(), r.End, want[i], 1.2+0.01902)
		}
	}
	if !near(rs[1].Queue(), 0.099) {
		t.Errorf("request 1 queued %v, want 0.099", rs[1].Queue())
	}
}

func TestTransferWaitsOnBusyLink(t *testing.T) {
	// Prefill on 0, decode on 1. The prompts (1,000 tokens, 1e6 bytes of
	// KV at 1,000 bytes a token) end at 1.1 and 1.2 s; each transfer takes
	// 0.5 s overhead + 1e6 / 1e6 B/s = 1.5 s. On a shared link the second
	// waits for the first: 1.1-2.6, then 2.6-4.1; each then decodes its one
	// token alone (token(1) = 0.01901 s). On a fair-share link both start
	// at once and their bytes join at 1.6 and 1.7: the first sends 1e5
	// bytes alone, then both send at 5e5 B/s, so the first ends at 1.7 +
	// 9e5 / 5e5 = 3.5, and the second sends its last 1e5 bytes alone, to
	// 3.6.
	tests := []struct {
		name   string
		link   LinkConfig
		starts []float64
		ends   []float64
	}{
		{"shared", LinkConfig{BytesPerSec: 1e6, Overhead: 0.5, Shared: true}, []float64{1.1, 2.6}, []float64{2.6, 4.1}},
		{"per-transfer", LinkConfig{BytesPerSec: 1e6, Overhead: 0.5}, []float64{1.1, 1.2}, []float64{2.6, 2.7}},
		{"fair-share", LinkConfig{BytesPerSec: 1e6, Overhead: 0.5, Shared: true, FairShare: true}, []float64{1.1, 1.2}, []float64{3.5, 3.6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := handConfig(t, Prefill, Decode)
			c.Link = tt.link
			s, _ := New(c, []Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 2}, {ID: 1, Arrival: 1, Prompt: 1000, Output: 2}})
			sum, err := s.Run(fixed{Prefill: 0, Decode: 1})
			if err != nil {
				t.Fatal(err)
			}
			r := s.Results()
			got := []float64{r[0].TransferStart, r[0].TransferEnd, r[0].End, r[1].TransferStart, r[1].TransferEnd, r[1].End}
			want := []float64{tt.starts[0], tt.ends[0], tt.ends[0] + 0.01901, tt.starts[1], tt.ends[1], tt.ends[1] + 0.01901}
			for i := range got {
				if !near(got[i], want[i]) {
					t.Fatalf("(start, end, done) x 2 = %v, want %v", got, want)
				}
			}
			if sum.KVBytesMoved != 2e6 || sum.Transfers != 2 {
				t.Fatalf("moved %d bytes in %d transfers, want 2e6 in 2", sum.KVBytesMoved, sum.Transfers)
			}
		})
	}
}

func TestMemoryAdmission(t *testing.T) {
	// The decode instance holds 1 GiB of weights in 8 x 80 GiB; a request
	// whose KV cache (prompt + 1 + output - 1 tokens at 1e9 bytes: 700e9)
	// passes the rest never runs. SplitwiseSim keeps it (RetryUnfit): its
	// prompt's 501e9 bytes fit, cross the link and wait there, and the
	// run stalls. Otherwise Apply rejects it and the run ends with
	// ErrRejected, and the request after it (102e9 bytes) runs.
	for _, tt := range []struct {
		name  string
		retry bool
		want  error
	}{{"retry", true, ErrStalled}, {"reject", false, ErrRejected}} {
		t.Run(tt.name, func(t *testing.T) {
			c := handConfig(t, Prefill, Decode)
			c.Model.KVBytesPerToken = 1e9
			c.RetryUnfit = tt.retry
			s, _ := New(c, []Request{{ID: 0, Arrival: 1, Prompt: 500, Output: 200}, {ID: 1, Arrival: 2, Prompt: 100, Output: 2}})
			sum, err := s.Run(fixed{Prefill: 0, Decode: 1})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Run = %v, want %v", err, tt.want)
			}
			// The stall names the request, the instance it waits on, the
			// bytes its decode needs (199 tokens) and those free (8 x 80
			// GiB less 1 GiB of weights and its own 501e9-byte prompt).
			if want := "request 0's decode task waits for 199000000000 bytes on instance 1, idle with 185121025536 free"; tt.retry && !strings.Contains(err.Error(), want) {
				t.Errorf("Run = %v\nwant it to contain %q", err, want)
			}
			r := s.Results()
			if r[0].Rejected != !tt.retry || sum.Rejected != map[bool]int{true: 0, false: 1}[tt.retry] {
				t.Errorf("request 0 rejected %v, summary %d rejected", r[0].Rejected, sum.Rejected)
			}
			if !tt.retry && (sum.Finished != 1 || math.IsNaN(r[1].End)) {
				t.Errorf("%d finished, request 1 ended at %v: want it to run", sum.Finished, r[1].End)
			}
		})
	}
}

// TestRejectBeforeLoop: a prompt whose KV cache (prompt + 1 tokens) passes
// the decode instance's memory less its weights, though it fits the
// larger prefill instance, would wait on the shared link forever (its
// transfer looking again every second, holding up the link): Apply
// rejects it, the next request runs.
func TestRejectBeforeLoop(t *testing.T) {
	c := handConfig(t, Prefill, Decode)
	c.Instances[0].TP = 16
	c.Model.KVBytesPerToken = 1e9
	c.Link.Shared = true
	s, _ := New(c, []Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 2}, {ID: 1, Arrival: 2, Prompt: 100, Output: 2}})
	sum, err := s.Run(fixed{Prefill: 0, Decode: 1})
	if !errors.Is(err, ErrRejected) || sum.Rejected != 1 || sum.Finished != 1 {
		t.Fatalf("Run = %v, %d rejected, %d finished; want ErrRejected, 1, 1", err, sum.Rejected, sum.Finished)
	}
}

func randomTrace(seed uint64, n int) []Request {
	rng := rand.New(rand.NewPCG(seed, 1))
	reqs := make([]Request, n)
	at := 1.0
	for i := range reqs {
		at += rng.ExpFloat64() / 4
		reqs[i] = Request{ID: i, Arrival: at, Prompt: 1 + rng.IntN(4000), Output: 1 + rng.IntN(300)}
	}
	return reqs
}

func TestDeterministic(t *testing.T) {
	run := func() ([]Result, Summary) {
		s, err := New(handConfig(t, Colocated, Colocated, Prefill, Decode), randomTrace(7, 2000))
		if err != nil {
			t.Fatal(err)
		}
		sum, err := s.Run(leastTokens{})
		if err != nil {
			t.Fatal(err)
		}
		return s.Results(), sum
	}
	r1, s1 := run()
	r2, s2 := run()
	if d := cmp.Diff(fmt.Sprintf("%v %+v", r1, s1), fmt.Sprintf("%v %+v", r2, s2)); d != "" {
		t.Fatalf("two runs differ (-first,+second):\n%s", d)
	}
}

func TestBadInput(t *testing.T) {
	good := handConfig(t, Colocated)
	req := []Request{{Arrival: 1, Prompt: 10, Output: 10}}
	tests := []struct {
		name string
		edit func(c *Config)
		reqs []Request
		want error
	}{
		{"no perf", func(c *Config) { c.Perf = nil }, req, ErrBadConfig},
		{"no instances", func(c *Config) { c.Instances = nil }, req, ErrBadConfig},
		{"unknown gpu", func(c *Config) { c.Instances[0].GPU = "tpu" }, req, ErrBadConfig},
		{"tp 0", func(c *Config) { c.Instances[0].TP = 0 }, req, ErrBadConfig},
		{"weights too big", func(c *Config) { c.Model.WeightBytes = 1 << 50 }, req, ErrBadConfig},
		{"no bandwidth", func(c *Config) { c.Link.BytesPerSec = 0 }, req, ErrBadConfig},
		{"nan overhead", func(c *Config) { c.Link.Overhead = math.NaN() }, req, ErrBadConfig},
		{"no kv", func(c *Config) { c.Model.KVBytesPerToken = 0 }, req, ErrBadConfig},
		{"bad request", func(*Config) {}, []Request{{Arrival: -1, Prompt: 1, Output: 1}}, ErrBadRequest},
		{"no model rows", func(c *Config) { c.Model.Name = "other" }, req, ErrBadConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			c.Instances = append([]InstanceConfig(nil), good.Instances...)
			tt.edit(&c)
			if _, err := New(c, tt.reqs); !errors.Is(err, tt.want) {
				t.Fatalf("New = %v, want %v", err, tt.want)
			}
		})
	}
	s, _ := New(good, req)
	if _, err := s.Run(fixed{Prefill: 0, Decode: 3}); !errors.Is(err, ErrBadDecision) {
		t.Fatalf("Run with a decode on instance 3 of 1 = %v, want ErrBadDecision", err)
	}
	if _, err := s.Run(fixed{Prefill: 0, Decode: 0}); !errors.Is(err, ErrRan) {
		t.Fatalf("second Run = %v, want ErrRan", err)
	}
}

func TestParsePerfTableErrors(t *testing.T) {
	tests := map[string]string{
		"empty":     "",
		"no column": "model,hardware\nm,h\n",
		"bad tp":    "model,hardware,prompt_size,batch_size,prompt_time,token_time,tensor_parallel\nm,h,1,1,1,1,x\n",
		"zero time": "model,hardware,prompt_size,batch_size,prompt_time,token_time,tensor_parallel\nm,h,1,1,0,1,8\nm,h,2,1,1,1,8\n",
		"one knot":  "model,hardware,prompt_size,batch_size,prompt_time,token_time,tensor_parallel\nm,h,1,1,1,1,8\n",
		"ragged":    "model,hardware,prompt_size,batch_size,prompt_time,token_time,tensor_parallel\nm,h,1\n",
	}
	for name, in := range tests {
		if _, err := ParsePerfTable([]byte(in)); !errors.Is(err, ErrBadPerfTable) {
			t.Errorf("%s: err = %v, want ErrBadPerfTable", name, err)
		}
	}
}

func FuzzParsePerfTable(f *testing.F) {
	f.Add([]byte(handTable), 7.5)
	f.Add([]byte("model,hardware,prompt_size,batch_size,prompt_time,token_time,tensor_parallel\nm,h,1,1,1e308,1,8\nm,h,2,1,1,1,8\n"), 1.0)
	f.Fuzz(func(t *testing.T, data []byte, x float64) {
		p, err := ParsePerfTable(data)
		if err != nil {
			return
		}
		for k, c := range p.curves {
			if len(c.x) < 2 || len(c.x) != len(c.prompt) || len(c.x) != len(c.token) {
				t.Fatalf("%v: ragged curve", k)
			}
			for i := 1; i < len(c.x); i++ {
				if !(c.x[i] > c.x[i-1]) {
					t.Fatalf("%v: knots not ascending: %v", k, c.x)
				}
			}
			_ = interp(c.x, c.prompt, x)
		}
	})
}

func TestHeapOrderMatchesHeapq(t *testing.T) {
	// Four events at one time pushed a, b, c, d come out of CPython's
	// heapq as a, c, b, d (worked through heappush/_siftup by hand).
	var h eventHeap
	for id := range int32(4) {
		h.push(heapEntry{t: 1, id: id})
	}
	var got []int32
	for len(h) > 0 {
		got = append(got, h.pop().id)
	}
	if d := cmp.Diff([]int32{0, 2, 1, 3}, got); d != "" {
		t.Fatalf("pop order (-heapq,+got):\n%s", d)
	}
}

func TestPyFloorDiv(t *testing.T) {
	tests := []struct{ a, b, want float64 }{
		{7, 2, 3}, {0.3, 0.1, 2}, {1, 0.1, 9}, {0, 3, 0}, {5.5, 0.5, 11},
	}
	// 0.3 // 0.1 is 2.0 and 1 // 0.1 is 9.0 in Python (fmod leaves
	// 0.09999999999999998 and 0.09999999999999995).
	for _, tt := range tests {
		if got := pyFloorDiv(tt.a, tt.b); got != tt.want {
			t.Errorf("%v // %v = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestDecodeReadsKV(t *testing.T) {
	// One request, 1,000 prompt tokens, 3 output tokens: the prompt (0.1 s)
	// then two decode iterations, each token(1) = 0.01901 s plus reading
	// the context's KV cache (1,001 then 1,002 tokens x 1,000 bytes) at
	// 8 x 3.35e12 B/s.
	c := handConfig(t, Colocated)
	c.DecodeReadsKV = true
	s, _ := New(c, []Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 3}})
	if _, err := s.Run(fixed{Prefill: 0, Decode: 0}); err != nil {
		t.Fatal(err)
	}
	want := 0.1 + 2*0.01901 + (1001+1002)*1000/(8*3.35e12)
	if got := s.Results()[0].E2E(); !near(got, want) {
		t.Fatalf("E2E %v, want %v", got, want)
	}
}

func TestExtrapolatedGPU(t *testing.T) {
	// An A10G instance has no measured rows: the A100's curves, prompt
	// scaled by 312/125 TFLOPS and decode by 2,039/600 GB/s. TTFT of a
	// 1,000-token prompt: 0.1 x 312/125 s; E2E adds one decode of
	// 0.01901 x 2039/600 s.
	c := handConfig(t, Colocated)
	c.Instances[0].GPU = "a10g"
	s, _ := New(c, []Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 2}})
	sum, err := s.Run(fixed{Prefill: 0, Decode: 0})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Results()[0]
	if !near(r.TTFT(), 0.1*312/125) || !near(r.E2E(), 0.1*312/125+0.01901*2039/600) {
		t.Fatalf("TTFT %v E2E %v, want %v and %v", r.TTFT(), r.E2E(), 0.1*312/125, 0.1*312/125+0.01901*2039/600)
	}
	if d := cmp.Diff([]string{"a10g"}, sum.Extrapolated); d != "" {
		t.Fatalf("Extrapolated (-want,+got):\n%s", d)
	}
}

func TestSummary(t *testing.T) {
	// Two requests on one instance, worked by hand from TestPromptQueues:
	// TTFT 0.1 and 0.199 s; E2E 0.21902 and 0.21802 s; an E2E objective
	// of 0.2185 s is met by one of two.
	c := handConfig(t, Colocated)
	c.Instances[0].MaxBatchTokens = 1000
	c.SLO = SLO{E2E: 0.2185}
	s, _ := New(c, []Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 2}, {ID: 1, Arrival: 1.001, Prompt: 1000, Output: 2}})
	sum, err := s.Run(fixed{Prefill: 0, Decode: 0})
	if err != nil {
		t.Fatal(err)
	}
	if !near(sum.TTFT.Mean, (0.1+0.199)/2) || !near(sum.TTFT.Max, 0.199) || !near(sum.TTFT.P50, (0.1+0.199)/2) || sum.SLOAttainment != 0.5 {
		t.Fatalf("summary %+v", sum)
	}
	if !near(sum.Makespan, 1.2+0.01902) || !near(sum.GPUHours, 8*sum.Makespan/3600) {
		t.Fatalf("makespan %v, GPU hours %v", sum.Makespan, sum.GPUHours)
	}
}

func TestModelOf(t *testing.T) {
	m := ModelOf(kv.Llama2_70B)
	if m.Name != "llama2-70b" || m.KVBytesPerToken != Llama2_70BGQA.KVBytesPerToken || m.WeightBytes != 2*68_976_648_192 {
		t.Fatalf("ModelOf(kv.Llama2_70B) = %+v", m)
	}
}

func TestNextApply(t *testing.T) {
	reqs := randomTrace(3, 300)
	c := handConfig(t, Colocated, Colocated)
	s, _ := New(c, reqs)
	if err := s.Apply(Decision{}); !errors.Is(err, ErrNoPending) {
		t.Fatalf("Apply before Next = %v, want ErrNoPending", err)
	}
	n := 0
	for {
		req, v, err := s.Next()
		if err == ErrDone {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if v.Now() != req.Arrival {
			t.Fatalf("request %d arrives at %v, view at %v", req.ID, req.Arrival, v.Now())
		}
		if _, _, err := s.Next(); !errors.Is(err, ErrPending) {
			t.Fatalf("second Next = %v, want ErrPending", err)
		}
		if err := s.Apply(Decision{Prefill: 2}); !errors.Is(err, ErrBadDecision) {
			t.Fatalf("Apply to instance 2 of 2 = %v, want ErrBadDecision", err)
		}
		d, _ := leastTokens{}.Route(v, req)
		if err := s.Apply(d); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != len(reqs) {
		t.Fatalf("%d requests stepped, want %d", n, len(reqs))
	}
	// The same decisions through Run give the same results.
	r, _ := New(c, reqs)
	if _, err := r.Run(leastTokens{}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(fmt.Sprint(r.Results()), fmt.Sprint(s.Results())); d != "" {
		t.Fatalf("Run and Next/Apply differ (-run,+step):\n%s", d)
	}
	if _, err := s.Run(leastTokens{}); !errors.Is(err, ErrRan) {
		t.Fatalf("Run after stepping = %v, want ErrRan", err)
	}
}

func TestParseFloatPandas(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1", 1, true},
		{"-2.5", -2.5, true},
		{"+1e3", 1000, true},
		{"1.5E-2", 0.015, true},
		{"0.1", 0.1, true},
		// SplitwiseSim's perf_model.csv holds this prompt time; pandas
		// reads it (17 digits accumulated, then / 1e13) one ulp above the
		// correctly rounded 2974.3569858837877: 2974.356985883788.
		{"2974.3569858837877", 2974.356985883788, true},
		{"", 0, false},
		{".", 0, false},
		{"1x", 0, false},
		{"1e400", 0, false},
		{"nan", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseFloatPandas(tt.in)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("ParseFloatPandas(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestKVFormat(t *testing.T) {
	// Qwen3-8B's cache (147,456 bytes a token dense) in INT8, prefill on
	// instance 0, decode on 1 (H100 x 8 each), a 1e9 B/s link. The
	// prompt's iteration adds INT8's encoding of 1,000 tokens at
	// 8 x 67e12 ops/s; the link carries INT8's bytes; each of the two
	// decode iterations adds the dequantization of the context (1,001 then
	// 1,002 tokens): its operations at 8 x 67e12 ops/s and its traffic at
	// 8 x 3.35e12 B/s. The numbers of operations and bytes are package
	// kv's (Work, TransferBytes); the sums are this test's.
	a := kv.Qwen3_8B
	c := handConfig(t, Prefill, Decode)
	c.Model = ModelOf(a)
	c.Model.Name, c.Model.WeightBytes = "m", 1<<30
	c.Link = LinkConfig{BytesPerSec: 1e9}
	f := kv.Int8()
	s, err := New(c, []Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(fixed{Prefill: 0, Decode: 1, Format: f}); err != nil {
		t.Fatal(err)
	}
	const ops, hbm = 8 * 67e12, 8 * 3.35e12
	encode := f.Work(a, 1000).Encode / ops
	step := func(ctx int) float64 {
		w := f.Work(a, ctx)
		return (w.Dequant+w.Approx)/ops + float64(w.DequantBytes)/hbm
	}
	xfer := float64(f.TransferBytes(a, 1000)) / 1e9
	r := s.Results()[0]
	wantTTFT := 0.1 + encode
	wantE2E := wantTTFT + xfer + 2*0.01901 + step(1001) + step(1002)
	if !near(r.TTFT(), wantTTFT) || !near(r.E2E(), wantE2E) || r.TransferBytes != f.TransferBytes(a, 1000) || r.Format != "int8" {
		t.Fatalf("TTFT %v E2E %v bytes %d format %q; want %v %v %d int8", r.TTFT(), r.E2E(), r.TransferBytes, r.Format, wantTTFT, wantE2E, f.TransferBytes(a, 1000))
	}
	if want := encode + step(1001) + step(1002); !near(r.FormatTime, want) {
		t.Fatalf("FormatTime %v, want %v", r.FormatTime, want)
	}
	if encode <= 0 || step(1001) <= 0 {
		t.Fatalf("INT8 costs nothing: encode %v, step %v", encode, step(1001))
	}

	// Without an architecture only the dense cache is allowed.
	s, _ = New(handConfig(t, Prefill, Decode), []Request{{ID: 0, Arrival: 1, Prompt: 10, Output: 3}})
	if _, err := s.Run(fixed{Prefill: 0, Decode: 1, Format: kv.HACKPi(64)}); !errors.Is(err, ErrBadDecision) {
		t.Fatalf("a HACK decision without Model.Arch: %v, want ErrBadDecision", err)
	}
}

// FuzzParseFloatPandas: no input panics, and a plain decimal of at most 15
// significant digits and a small exponent (where both parsers are exact:
// the digits fit a float64 exactly and the power of ten is exact) reads
// as strconv reads it.
func FuzzParseFloatPandas(f *testing.F) {
	for _, s := range []string{"1", "-2.5", "2974.3569858837877", "1e400", "1.5E-2", "", "+.", "12345678901234567890"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseFloatPandas(s)
		if !ok {
			return
		}
		if math.IsNaN(got) || math.IsInf(got, 0) {
			t.Fatalf("%q reads as %v", s, got)
		}
		digits, expOK := 0, true
		for i, c := range s {
			switch {
			case c >= '0' && c <= '9':
				digits++
			case c == 'e' || c == 'E':
				expOK = len(s)-i <= 3 // e, optional sign, one or two digits
			}
		}
		if digits > 15 || !expOK || strings.ContainsAny(s, "eE") {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err == nil && want != got && decimals(s) <= 15 {
			t.Fatalf("%q: pandas-style %v, strconv %v", s, got, want)
		}
	})
}

// decimals counts the digits after the point.
func decimals(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

func TestSortedCopy(t *testing.T) {
	// The radix sort against slices.Sort, on random latencies (with
	// repeats and zeros) and on input the fallback takes.
	rng := rand.New(rand.NewPCG(5, 5))
	for n := range 300 {
		xs := make([]float64, n)
		for i := range xs {
			switch rng.IntN(4) {
			case 0:
				xs[i] = 0
			case 1:
				xs[i] = float64(rng.IntN(5))
			default:
				xs[i] = rng.ExpFloat64() * math.Pow(10, float64(rng.IntN(9)-4))
			}
		}
		if n%50 == 7 {
			xs[0] = -1
		}
		want := append([]float64(nil), xs...)
		slices.Sort(want)
		if got := sortedCopy(xs); !slices.Equal(got, want) {
			t.Fatalf("n=%d: sortedCopy differs from slices.Sort", n)
		}
	}
}

func TestOneTokenOutput(t *testing.T) {
	// A one-token output ends with its prompt (0.1 s for 1,000 tokens),
	// even when it would be disaggregated and while other decodes and
	// prompts share the batch.
	reqs := []Request{
		{ID: 0, Arrival: 1, Prompt: 100, Output: 50},
		{ID: 1, Arrival: 1.2, Prompt: 1000, Output: 1},
		{ID: 2, Arrival: 1.2001, Prompt: 100, Output: 1},
	}
	s, _ := New(handConfig(t, Prefill, Decode), reqs)
	if _, err := s.Run(fixed{Prefill: 0, Decode: 1}); err != nil {
		t.Fatal(err)
	}
	r := s.Results()[1]
	if r.Decode != 0 || !near(r.E2E(), r.TTFT()) || r.TransferBytes != 0 {
		t.Fatalf("one-token request: %+v", r)
	}
	s, _ = New(handConfig(t, Colocated), reqs)
	if _, err := s.Run(fixed{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Results()[1:] {
		if !near(r.E2E(), r.TTFT()) {
			t.Fatalf("colocated one-token request: %+v", r)
		}
	}
}

func TestTransferRetriesForMemory(t *testing.T) {
	// KV of 1e9 bytes a token; weights leave the decode instance (8 x 80
	// GiB) room for one request of 100 + 11 tokens, not two. The prefill
	// instance has 16 GPUs (its TP-8 curve halved: prompt(100) = 0.005
	// s). Request 0's prompt runs 1-1.005 s, its transfer (1e11 bytes at
	// 1e12 B/s) 1.005-1.105, its 10 decodes to 1.2951. Request 1's prompt
	// runs 1.005-1.010, but its KV does not fit the decode instance
	// beside request 0's: the transfer looks again every second (as
	// SplitwiseSim's link retries) and starts at 2.010, once request 0 has
	// finished; it ends at 2.110 and the decodes at 2.3001.
	// A fair-share link's head looks again the same way; a FIFO shared
	// link's first looks when request 0's transfer frees it, at 1.105,
	// and again at 2.105.
	for _, tt := range []struct {
		link  LinkConfig
		start float64
	}{
		{LinkConfig{BytesPerSec: 1e12}, 2.010},
		{LinkConfig{BytesPerSec: 1e12, Shared: true}, 2.105},
		{LinkConfig{BytesPerSec: 1e12, Shared: true, FairShare: true}, 2.010},
	} {
		link, start := tt.link, tt.start
		c := handConfig(t, Prefill, Decode)
		c.Instances[0].TP = 16
		c.Model.KVBytesPerToken = 1e9
		c.Model.WeightBytes = 8*(80<<30) - 150e9
		c.Link = link
		s, err := New(c, []Request{{ID: 0, Arrival: 1, Prompt: 100, Output: 11}, {ID: 1, Arrival: 1.001, Prompt: 100, Output: 11}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(fixed{Prefill: 0, Decode: 1}); err != nil {
			t.Fatal(err)
		}
		r := s.Results()
		got := []float64{r[0].FirstToken, r[0].TransferEnd, r[0].End, r[1].FirstToken, r[1].TransferStart, r[1].TransferEnd, r[1].End}
		want := []float64{1.005, 1.105, 1.105 + 10*0.01901, 1.010, start, start + 0.1, start + 0.1 + 10*0.01901}
		for i := range got {
			if !near(got[i], want[i]) {
				t.Fatalf("%+v: times %v, want %v", link, got, want)
			}
		}
	}
}

// TestFairShareAgainstNaive: on a fair-share link, every transfer of a
// random trace (prompts of up to 4,000 tokens, 4 s of bytes each at 1e6
// B/s, arriving 4 a second, so that many overlap) ends when a slow,
// obviously correct fluid simulation of processor sharing says: steps of
// 100 us in which each transfer whose bytes have joined (its start plus
// the overhead) and are not all sent gets an equal share of the
// bandwidth. The starts are the simulator's (memory never binds).
func TestFairShareAgainstNaive(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		c := handConfig(t, Prefill, Decode)
		c.Link = LinkConfig{BytesPerSec: 1e6, Overhead: 0.05, Shared: true, FairShare: true}
		s, _ := New(c, randomTrace(seed, 40))
		if _, err := s.Run(fixed{Prefill: 0, Decode: 1}); err != nil {
			t.Fatal(err)
		}
		var join, size, want []float64
		var idx []int
		for i, r := range s.Results() {
			if r.Output > 1 {
				join = append(join, r.TransferStart+c.Link.Overhead)
				size = append(size, float64(r.TransferBytes))
				idx = append(idx, i)
			}
		}
		want = make([]float64, len(join))
		sent := make([]float64, len(join))
		const dt = 1e-4
		left := len(join)
		maxOverlap := 0
		for now := slices.Min(join); left > 0; now += dt {
			n := 0
			for i := range join {
				if join[i] <= now && want[i] == 0 {
					n++
				}
			}
			maxOverlap = max(maxOverlap, n)
			for i := range join {
				if join[i] <= now && want[i] == 0 {
					sent[i] += dt * c.Link.BytesPerSec / float64(n)
					if sent[i] >= size[i] {
						want[i] = now + dt
						left--
					}
				}
			}
		}
		if maxOverlap < 5 {
			t.Fatalf("seed %d: at most %d transfers at once: the test needs overlap", seed, maxOverlap)
		}
		for k, i := range idx {
			if got := s.Results()[i].TransferEnd; math.Abs(got-want[k]) > 2e-3 {
				t.Errorf("seed %d: request %d's transfer ends at %.4f, the fluid simulation at %.4f", seed, i, got, want[k])
			}
		}
	}
}

// TestFormatStepSeconds: a fixed format step time is paid once by each
// decode iteration whose batch holds a decode in that format, whatever
// the batch: two INT8 requests decoding together (output 3: two decode
// iterations each, side by side) take 2 x 5 ms longer than without it,
// each, and count it as format time; a dense request is not charged.
func TestFormatStepSeconds(t *testing.T) {
	a := kv.Qwen3_8B
	run := func(step float64, f kv.Format) []Result {
		c := handConfig(t, Prefill, Decode)
		c.Model = ModelOf(a)
		c.Model.Name, c.Model.WeightBytes = "m", 1<<30
		c.Link = LinkConfig{BytesPerSec: 1e9}
		if step > 0 {
			c.FormatStepSeconds = map[string]float64{kv.Int8().Name(): step}
		}
		s, err := New(c, []Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 3}, {ID: 1, Arrival: 1, Prompt: 1000, Output: 3}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(fixed{Prefill: 0, Decode: 1, Format: f}); err != nil {
			t.Fatal(err)
		}
		return slices.Clone(s.Results())
	}
	base, with := run(0, kv.Int8()), run(0.005, kv.Int8())
	for i := range base {
		if d := with[i].E2E() - base[i].E2E(); !near(d, 0.010) {
			t.Errorf("request %d: %v s longer, want 0.010", i, d)
		}
		if d := with[i].FormatTime - base[i].FormatTime; !near(d, 0.010) {
			t.Errorf("request %d: %v s more format time, want 0.010", i, d)
		}
	}
	if dense, withDense := run(0, kv.Format{}), run(0.005, kv.Format{}); dense[0].E2E() != withDense[0].E2E() {
		t.Errorf("a dense request is charged: %v against %v", withDense[0].E2E(), dense[0].E2E())
	}
	c := handConfig(t, Prefill, Decode)
	c.FormatStepSeconds = map[string]float64{"int8": math.Inf(1)}
	if _, err := New(c, nil); !errors.Is(err, ErrBadConfig) {
		t.Errorf("an infinite step time: %v, want ErrBadConfig", err)
	}
}

// TestStageBytesPerSec: staging a prompt's KV cache (1,000 tokens x 1,000
// bytes) at 1e7 B/s adds 0.1 s to its prompt's iteration (0.1 s), so its
// first token comes at 1.2 s instead of 1.1 s; a colocated request sends
// nothing and is not charged.
func TestStageBytesPerSec(t *testing.T) {
	for _, tt := range []struct {
		name       string
		roles      []Role
		d          fixed
		firstToken float64
	}{
		{"disaggregated", []Role{Prefill, Decode}, fixed{Prefill: 0, Decode: 1}, 1.2},
		{"colocated", []Role{Colocated}, fixed{Prefill: 0, Decode: 0}, 1.1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := handConfig(t, tt.roles...)
			c.Link.StageBytesPerSec = 1e7
			s, _ := New(c, []Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 2}})
			if _, err := s.Run(tt.d); err != nil {
				t.Fatal(err)
			}
			if got := s.Results()[0].FirstToken; !near(got, tt.firstToken) {
				t.Errorf("first token at %v, want %v", got, tt.firstToken)
			}
		})
	}
}

// FuzzPlainCSV checks ParsePerfTable's own split of plain CSV
// (eachRecord without encoding/csv) against encoding/csv's: on any plain
// data, the same records, or an error from both.
func FuzzPlainCSV(f *testing.F) {
	f.Add([]byte(handTable))
	f.Add([]byte("a,b\n\n1,2\n3,4"))
	f.Add([]byte("a,b\n1\n"))
	f.Add([]byte(",\n,\n"))
	f.Add([]byte(" \n\n\n x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !isPlainCSV(data) {
			return
		}
		read := func(useCSV bool) ([][]string, error) {
			var recs [][]string
			err := eachRecord(data, useCSV, func(rec []string) error {
				recs = append(recs, slices.Clone(rec))
				return nil
			})
			return recs, err
		}
		got, gotErr := read(false)
		want, wantErr := read(true)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%q: error %v, encoding/csv's %v", data, gotErr, wantErr)
		}
		if gotErr == nil && !cmp.Equal(got, want) {
			t.Fatalf("%q: records (-encoding/csv +own):\n%s", data, cmp.Diff(want, got))
		}
	})
}

// TestPlainCSVRealTable checks that the real performance table is plain
// CSV, read without encoding/csv, and that it gives the curves encoding/csv
// gives.
func TestPlainCSVRealTable(t *testing.T) {
	data, err := os.ReadFile(sharedtraces.Path(t, "llm", "calibration", "splitwise_perf_model.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !isPlainCSV(data) {
		t.Fatal("the real table is not plain CSV")
	}
	got, err := ParsePerfTable(data)
	if err != nil {
		t.Fatal(err)
	}
	// The same table with one field quoted goes through encoding/csv.
	quoted := bytes.Replace(data, []byte("llama2-70b"), []byte(`"llama2-70b"`), 1)
	want, err := ParsePerfTable(quoted)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(got.curves, want.curves, cmp.AllowUnexported(perfCurve{})) {
		t.Fatal("the real table's curves differ between the own split and encoding/csv")
	}
}

// insortRight is bisect.insort (insort_right) with a key as a func: the
// obvious version of the Sim's bisect methods.
func insortRight(a []int32, x int32, less func(a, b int32) bool) []int32 {
	lo, hi := 0, len(a)
	for lo < hi {
		mid := (lo + hi) / 2
		if less(x, a[mid]) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return slices.Insert(a, lo, x)
}

// TestBisectMatchesInsort checks the Sim's bisect methods against
// insortRight with their orders as funcs, on lists sorted or not (keys
// change after insertion: a task's preemptions grow) with ties everywhere.
func TestBisectMatchesInsort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 40
	s := &Sim{reqs: make([]Request, n), npre: make([]int32, 2*n), poolSeq: make([]uint64, n)}
	pqLess := func(a, b int32) bool {
		if s.npre[a] != s.npre[b] {
			return s.npre[a] < s.npre[b]
		}
		return s.reqs[a>>1].Arrival < s.reqs[b>>1].Arrival
	}
	arrivalLess := func(a, b int32) bool { return s.reqs[a].Arrival < s.reqs[b].Arrival }
	waitLess := func(a, b int32) bool {
		if x, y := s.reqs[a].Arrival, s.reqs[b].Arrival; x != y {
			return x < y
		}
		return s.poolSeq[a] < s.poolSeq[b]
	}
	for trial := range 2000 {
		for i := range s.reqs {
			s.reqs[i].Arrival = float64(rng.IntN(5))
			s.poolSeq[i] = uint64(rng.IntN(5))
		}
		for i := range s.npre {
			s.npre[i] = int32(rng.IntN(3))
		}
		var pq, pool, wait []int32
		for range rng.IntN(30) {
			tk, r := int32(rng.IntN(2*n)), int32(rng.IntN(n))
			if i := s.bisectPending(pq, tk); !slices.Equal(slices.Insert(slices.Clone(pq), i, tk), insortRight(slices.Clone(pq), tk, pqLess)) {
				t.Fatalf("trial %d: bisectPending(%v, %d) = %d, insort disagrees", trial, pq, tk, i)
			}
			if i := s.bisectArrival(pool, r); !slices.Equal(slices.Insert(slices.Clone(pool), i, r), insortRight(slices.Clone(pool), r, arrivalLess)) {
				t.Fatalf("trial %d: bisectArrival(%v, %d) = %d, insort disagrees", trial, pool, r, i)
			}
			if i := s.bisectWaiting(wait, r); !slices.Equal(slices.Insert(slices.Clone(wait), i, r), insortRight(slices.Clone(wait), r, waitLess)) {
				t.Fatalf("trial %d: bisectWaiting(%v, %d) = %d, insort disagrees", trial, wait, r, i)
			}
			pq = insortRight(pq, tk, pqLess)
			pool = insortRight(pool, r, arrivalLess)
			wait = insortRight(wait, r, waitLess)
			s.npre[rng.IntN(2*n)]++ // keys change under the lists
			s.reqs[rng.IntN(n)].Arrival = float64(rng.IntN(5))
		}
	}
}

// TestInterpRoundsApart checks interp against scipy's interp1d (NumPy
// 1.24.2, SciPy 1.10.1, Debian's; fill_value="extrapolate") on knots
// where rounding the product apart and a fused multiply-add differ in the
// last bit (a GOAMD64=v3 build fuses slope*(x-x0)+y0 unless told not to).
func TestInterpRoundsApart(t *testing.T) {
	tests := []struct {
		x, y     []float64
		xn, want float64
	}{
		{[]float64{0, 3}, []float64{0.06496798187191603, 1.9306603801101503}, 6.4706816264497276, 4.089068489167607},
		{[]float64{0, 1}, []float64{0.12323600060349335, 1.4738170743600603}, 0.7922694066129257, 1.1932600664912567},
		{[]float64{0, 7}, []float64{0.016960000189137226, 1.9024403330759307}, 1.0941583700612232, 0.3116762984482668},
	}
	for _, tt := range tests {
		if got := interp(tt.x, tt.y, tt.xn); got != tt.want {
			t.Errorf("interp(%v, %v, %v) = %v, scipy gives %v", tt.x, tt.y, tt.xn, got, tt.want)
		}
	}
}

// TestStalledTransfer: TestRejectBeforeLoop's request kept (RetryUnfit):
// its prompt's cache (1,001 tokens at 1e9 bytes) fits the TP16 prefill
// instance but never the decode instance's room (8 x 80 GiB less 1 GiB
// of weights), so its transfer would look again every second forever.
// Once nothing but that retry is queued, the run ends with ErrStalled
// naming the request, its decode instance, the bytes it needs and those
// free. On the shared link the request behind it never moves; with a
// link per transfer it finishes first.
func TestStalledTransfer(t *testing.T) {
	for _, tt := range []struct {
		name     string
		shared   bool
		finished int
	}{{"shared link", true, 0}, {"link per transfer", false, 1}} {
		t.Run(tt.name, func(t *testing.T) {
			c := handConfig(t, Prefill, Decode)
			c.Instances[0].TP = 16
			c.Model.KVBytesPerToken = 1e9
			c.Link.Shared = tt.shared
			c.RetryUnfit = true
			s, _ := New(c, []Request{{ID: 0, Arrival: 1, Prompt: 1000, Output: 2}, {ID: 1, Arrival: 2, Prompt: 100, Output: 2}})
			sum, err := s.Run(fixed{Prefill: 0, Decode: 1})
			if !errors.Is(err, ErrStalled) || sum.Finished != tt.finished {
				t.Fatalf("Run = %v, %d finished; want ErrStalled, %d", err, sum.Finished, tt.finished)
			}
			free := int64(8*80<<30) - c.Model.WeightBytes
			want := fmt.Sprintf("request 0's KV transfer waits for 1001000000000 bytes on decode instance 1, which has %d free", free)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Run = %v\nwant it to contain %q", err, want)
			}
		})
	}
}
