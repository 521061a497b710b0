package pdrl

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/env/infergym"
	"github.com/drover-sched/drover/internal/sharedtraces"
	"github.com/drover-sched/drover/policies/hack"
)

func inst(role infer.Role, pending int64) infer.InstanceState {
	return infer.InstanceState{Role: role, GPU: "a100-80gb", TP: 8, PendingTokens: pending, MaxBytes: 8 * (80 << 30)}
}

// full is an instance whose routed requests reserve all its memory.
func full(role infer.Role, pending int64) infer.InstanceState {
	s := inst(role, pending)
	s.ReservedBytes = s.MaxBytes
	return s
}

func encCfg() infergym.Config {
	return infergym.Config{Slots: 2, Arch: kv.Llama2_70B, LinkBytesPerSec: 1e9}
}

// TestHACK: the prefill and decode instances with the fewest queued
// tokens of their pools, the lower index on ties, the decode among those
// the cache fits, in HACK's format; colocated instances only when a pool
// is empty; no instance is an error.
func TestHACK(t *testing.T) {
	tests := []struct {
		name     string
		s        []infer.InstanceState
		pre, dec int
	}{
		{"disaggregated", []infer.InstanceState{inst(infer.Prefill, 9), inst(infer.Decode, 5), inst(infer.Prefill, 3), inst(infer.Decode, 5)}, 2, 1},
		{"decode's load does not count for prefill", []infer.InstanceState{inst(infer.Decode, 0), inst(infer.Prefill, 7)}, 1, 0},
		{"colocated ones only without a pool", []infer.InstanceState{inst(infer.Prefill, 9), inst(infer.Colocated, 1), inst(infer.Decode, 4)}, 0, 2},
		{"all colocated", []infer.InstanceState{inst(infer.Colocated, 9), inst(infer.Colocated, 1), inst(infer.Colocated, 4)}, 1, 1},
		{"decode where the cache fits", []infer.InstanceState{inst(infer.Prefill, 9), full(infer.Decode, 1), inst(infer.Decode, 4)}, 0, 2},
		{"fewest pending when none fits", []infer.InstanceState{inst(infer.Prefill, 9), full(infer.Decode, 1), full(infer.Decode, 4)}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewHACK(kv.Llama2_70B).Decide(infergym.State{Instances: tt.s}, infer.Request{Prompt: 10, Output: 10})
			if err != nil || d.Prefill != tt.pre || d.Decode != tt.dec || d.Format != kv.HACKPi(64) {
				t.Fatalf("got %+v, %v; want prefill %d decode %d hack-pi64", d, err, tt.pre, tt.dec)
			}
		})
	}
	if _, err := NewHACK(kv.Llama2_70B).Decide(infergym.State{}, infer.Request{Prompt: 1, Output: 1}); err != ErrNoInstances {
		t.Fatalf("no instance: %v, want ErrNoInstances", err)
	}
}

// TestTeacherAndPolicy: HACK's decision is the encoding's (slot 0, HACK,
// slot 0), which the teacher records; a policy taking that action decides
// as HACK does, and one taking an invalid action falls back to the first
// valid one and counts it.
func TestTeacherAndPolicy(t *testing.T) {
	s := infergym.State{Instances: []infer.InstanceState{inst(infer.Prefill, 9), inst(infer.Decode, 5), inst(infer.Prefill, 3), inst(infer.Decode, 2)}}
	r := infer.Request{Prompt: 100, Output: 20}
	var got []Sample
	tc, err := Teacher(encCfg(), NewHACK(kv.Llama2_70B), func(x Sample) { got = append(got, x) })
	if err != nil {
		t.Fatal(err)
	}
	want, _ := NewHACK(kv.Llama2_70B).Decide(s, r)
	d, err := tc.Decide(s, r)
	if err != nil || d != want {
		t.Fatalf("teacher decided %+v %v, want HACK's %+v", d, err, want)
	}
	enc, _ := infergym.NewEncoder(encCfg())
	a := enc.Action(0, enc.FormatIndex(kv.HACKPi(64)), 0)
	if len(got) != 1 || got[0].Action != a || !got[0].Mask[a] || len(got[0].Obs) != enc.ObsDim() {
		t.Fatalf("samples %+v, want one of action %d", got, a)
	}
	p, _ := New(encCfg(), func([]float64, []bool) int { return a })
	if d, err := p.Decide(s, r); err != nil || d != want {
		t.Fatalf("policy of HACK's action: %+v %v, want %+v", d, err, want)
	}
	bad, _ := New(encCfg(), func([]float64, []bool) int { return -1 })
	d, err = bad.Decide(s, r)
	if n, inv := bad.Counts(); err != nil || n != 1 || inv != 1 || d.Prefill != 2 || d.Decode != 3 || d.Format != kv.FP16() {
		t.Fatalf("invalid action: %+v %v, counts %d %d; want the first valid action (slot 0, fp16, slot 0)", d, err, n, inv)
	}
}

// TestFromCheckpoint: a pd-rl checkpoint of the encoding's sizes loads and
// decides greedily; another env's or another encoding's is refused.
func TestFromCheckpoint(t *testing.T) {
	enc, _ := infergym.NewEncoder(encCfg())
	m := checkpoints.Meta{Env: Name, ObsDim: enc.ObsDim(), Actions: enc.Actions(), Hidden: []int{8}, Activation: "tanh",
		Networks: []string{"actor"}, Hyperparams: map[string]float64{}}
	PutConfig(m.Hyperparams, enc.Config())
	actor := checkpoints.Build(enc.ObsDim(), []int{8}, enc.Actions(), "tanh")
	nets := map[string]*nn.MLP{"actor": actor}
	newP, err := FromCheckpoint(m, nets, encCfg())
	if err != nil {
		t.Fatal(err)
	}
	s := infergym.State{Instances: []infer.InstanceState{inst(infer.Prefill, 9), inst(infer.Decode, 5)}}
	if _, err := newP().Decide(s, infer.Request{Prompt: 10, Output: 5}); err != nil {
		t.Fatal(err)
	}
	other := m
	other.Env = "strn-rl"
	if _, err := FromCheckpoint(other, nets, encCfg()); err == nil {
		t.Error("a strn-rl checkpoint loaded")
	}
	wide := encCfg()
	wide.Slots = 3
	if _, err := FromCheckpoint(m, nets, wide); err == nil {
		t.Error("a checkpoint of 2 slots loaded for 3")
	}
	// A checkpoint of the observation before the expected-time features
	// (6 and 7 features per prefill and decode slot: 2 x 13 + 2 + 2 x 4
	// = 36 for 2 slots) is refused, saying to retrain it.
	old := m
	old.ObsDim = 36
	oldNets := map[string]*nn.MLP{"actor": checkpoints.Build(36, []int{8}, enc.Actions(), "tanh")}
	if _, err := FromCheckpoint(old, oldNets, encCfg()); err == nil || !strings.Contains(err.Error(), "retrained") {
		t.Errorf("a checkpoint of the old observation: %v", err)
	}
}

// TestSpeed: the prefill instance where the pending and the prompt's
// tokens take the least time at its FP16 throughput, the decode instance
// with the fewest pending tokens per memory bandwidth among those the
// cache fits; on one GPU type HACK's choice.
func TestSpeed(t *testing.T) {
	on := func(s infer.InstanceState, gpu string) infer.InstanceState { s.GPU = gpu; return s }
	tests := []struct {
		name     string
		s        []infer.InstanceState
		pre, dec int
	}{
		{"one GPU type: HACK's", []infer.InstanceState{inst(infer.Prefill, 9), inst(infer.Decode, 5), inst(infer.Prefill, 3), inst(infer.Decode, 5)}, 2, 1},
		// (300 + 100) / 125 = 3.2 > (400 + 100) / 312 = 1.6: the A100, though more is pending there (HACK: the A10G).
		{"a faster prefill GPU with more pending", []infer.InstanceState{on(inst(infer.Prefill, 300), "a10g"), inst(infer.Prefill, 400), inst(infer.Decode, 0)}, 1, 2},
		// 1,000 / 125 = 8 < 3,000 / 312 = 9.6: the A10G.
		{"the slower GPU when the faster is loaded", []infer.InstanceState{on(inst(infer.Prefill, 900), "a10g"), inst(infer.Prefill, 2900), inst(infer.Decode, 0)}, 0, 2},
		// 10 / 900 GB/s > 20 / 2,039 GB/s: the A100.
		{"decode by pending per bandwidth", []infer.InstanceState{inst(infer.Prefill, 0), on(inst(infer.Decode, 10), "v100-32gb"), inst(infer.Decode, 20)}, 0, 2},
		{"decode where the cache fits", []infer.InstanceState{inst(infer.Prefill, 0), on(inst(infer.Decode, 10), "v100-32gb"), full(infer.Decode, 0)}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewSpeed(kv.Llama2_70B).Decide(infergym.State{Instances: tt.s}, infer.Request{Prompt: 100, Output: 10})
			if err != nil || d.Prefill != tt.pre || d.Decode != tt.dec || d.Format != kv.HACKPi(64) {
				t.Fatalf("got %+v, %v; want prefill %d decode %d hack-pi64", d, err, tt.pre, tt.dec)
			}
		})
	}
}

// both routes with policies/hack's Router and fails the run when HACK's
// Decider decides otherwise on the same arrival.
type both struct {
	ref *hack.Router
	dec *HACK
	s   infergym.State
	n   int
}

func (b *both) Route(v *infer.View, r infer.Request) (infer.Decision, error) {
	want, err := b.ref.Route(v, r)
	if err != nil {
		return want, err
	}
	b.s = infergym.StateOf(v, b.s)
	got, err := b.dec.Decide(b.s, r)
	if err != nil || got != want {
		return want, fmt.Errorf("request %d: decided %+v (%v), policies/hack %+v", r.ID, got, err, want)
	}
	b.n++
	return want, nil
}

// TestHACKIsHACK: on every arrival of 400 s of Poisson arrivals at 6 per
// second on pd-rl's deployment (queues build and decode memory fills),
// the Decider decides as policies/hack's Router.
func TestHACKIsHACK(t *testing.T) {
	data, err := os.ReadFile(sharedtraces.Path(t, "llm", "calibration", "splitwise_perf_model.csv"))
	if err != nil {
		t.Fatal(err)
	}
	perf, err := infer.ParsePerfTable(data)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	var reqs []infer.Request
	for at := 1.0; at < 400; at += rng.ExpFloat64() / 6 {
		reqs = append(reqs, infer.Request{ID: len(reqs), Arrival: at, Prompt: 100 + rng.IntN(4000), Output: 10 + rng.IntN(800)})
	}
	cfg := infergym.Deployment(perf)
	s, err := infer.New(cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	b := &both{ref: hack.New(kv.HACKPi(64)), dec: NewHACK(cfg.Model.Arch)}
	if _, err := s.Run(b); err != nil {
		t.Fatal(err)
	}
	if b.n != len(reqs) {
		t.Fatalf("%d of %d decisions compared", b.n, len(reqs))
	}
}
