package infergym

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/internal/sharedtraces"
)

func perf(tb testing.TB) *infer.PerfTable {
	tb.Helper()
	data, err := os.ReadFile(sharedtraces.Path(tb, "llm", "calibration", "splitwise_perf_model.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	p, err := infer.ParsePerfTable(data)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// poisson is n requests at rate per second with prompts and outputs drawn
// from seed.
func poisson(seed uint64, n int, rate float64) []infer.Request {
	rng := rand.New(rand.NewPCG(seed, 7))
	t := 1.0
	out := make([]infer.Request, n)
	for i := range out {
		t += rng.ExpFloat64() / rate
		out[i] = infer.Request{ID: i, Arrival: t, Prompt: 100 + rng.IntN(3000), Output: 10 + rng.IntN(400)}
	}
	return out
}

func newEnv(tb testing.TB, penalty float64) *Env {
	tb.Helper()
	e, err := NewEnv(EnvConfig{Deploy: Deployment(perf(tb)), SLOPenalty: penalty, RewardScale: 10,
		Requests: func(seed uint64) []infer.Request { return poisson(seed, 120, 6) }})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// TestCheck: the env keeps the gym contract (one seed and one action
// sequence give one trajectory, bit for bit; masks; spaces).
func TestCheck(t *testing.T) {
	p := perf(t)
	mk := func() gym.Env {
		e, err := NewEnv(EnvConfig{Deploy: Deployment(p), SLOPenalty: 5, RewardScale: 10,
			Requests: func(seed uint64) []infer.Request { return poisson(seed, 60, 6) }})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if err := gym.Check(mk, 1, 300, nil); err != nil {
		t.Fatal(err)
	}
}

// TestReturnIsMinusSumOfJCT: with no SLO penalty, an episode's return is
// minus the sum of its requests' JCTs over RewardScale (Little's law: the
// time each request spends in the system, summed step by step), whatever
// the actions.
func TestReturnIsMinusSumOfJCT(t *testing.T) {
	for _, penalty := range []float64{0, 5} {
		e := newEnv(t, penalty)
		rng := rand.New(rand.NewPCG(3, 3))
		e.Reset(11)
		ret := 0.0
		var info gym.Info
		for {
			mask := e.ActionMask(nil)
			var valid []int
			for a, ok := range mask {
				if ok {
					valid = append(valid, a)
				}
			}
			_, r, term, trunc, inf := e.Step(valid[rng.IntN(len(valid))])
			ret += r
			if trunc {
				t.Fatal("truncated")
			}
			if term {
				info = inf
				break
			}
		}
		sum, missed := 0.0, 0
		slo := e.cfg.Deploy.SLO
		for _, r := range e.Sim().Results() {
			sum += r.E2E()
			if r.TTFT() > slo.TTFT || r.TPOT() > slo.TPOT {
				missed++
			}
		}
		want := -(sum + penalty*float64(missed)) / 10
		if math.Abs(ret-want) > 1e-9*math.Abs(want) {
			t.Fatalf("penalty %v: return %v, want %v (%d missed)", penalty, ret, want, missed)
		}
		if got := info["mean_jct"]; math.Abs(got-sum/120) > 1e-9*got {
			t.Fatalf("mean_jct %v, want %v", got, sum/120)
		}
		if got, wantSLO := info["slo_attainment"], 1-float64(missed)/120; got != wantSLO {
			t.Fatalf("slo_attainment %v, want %v", got, wantSLO)
		}
	}
}

func inst(role infer.Role, gpu string, pending, reserved int64) infer.InstanceState {
	g, _ := infer.LookupGPU(gpu)
	return infer.InstanceState{Role: role, GPU: gpu, TP: 8, PendingTokens: pending, ReservedBytes: reserved, MaxBytes: 8 * g.MemoryBytes}
}

// TestEncoder: the slots are the pools' least-loaded instances in order;
// the observation's size does not depend on the cluster's; memory
// admission masks an instance the request's cache does not fit in that
// format only; Decode inverts the action.
func TestEncoder(t *testing.T) {
	a := kv.Llama2_70B
	enc, err := NewEncoder(Config{Slots: 2, Arch: a, LinkBytesPerSec: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	r := infer.Request{Prompt: 1000, Output: 200}
	dense := int64(1200) * a.KVBytesPerToken() // 393,216,000 bytes
	max := int64(8 * (80 << 30))
	// Decode instance 4 has room for 1.5 dense caches' worth less than
	// full: the dense format does not fit, HACK's (about a sixth) does.
	s := State{Instances: []infer.InstanceState{
		inst(infer.Prefill, "a10g", 500, 0), inst(infer.Prefill, "a100-80gb", 100, 0), inst(infer.Prefill, "a10g", 100, 0),
		inst(infer.Decode, "a100-80gb", 30, 0), inst(infer.Decode, "a100-80gb", 10, max-dense/2),
	}}
	enc.Begin(s)
	pre, dec := enc.Candidates()
	if want := []int{1, 2}; pre[0] != want[0] || pre[1] != want[1] || len(pre) != 2 {
		t.Fatalf("prefill slots %v, want %v (fewest pending, lower index on ties, 2 shown)", pre, want)
	}
	if dec[0] != 4 || dec[1] != 3 {
		t.Fatalf("decode slots %v, want [4 3]", dec)
	}
	mask := enc.Mask(nil, s, r)
	fp16, hack := enc.FormatIndex(kv.FP16()), enc.FormatIndex(kv.HACKPi(64))
	for p := range 2 {
		if mask[enc.Action(p, fp16, 0)] || !mask[enc.Action(p, hack, 0)] || !mask[enc.Action(p, fp16, 1)] {
			t.Fatalf("prefill slot %d: fp16 on the full instance %v, hack there %v, fp16 on the other %v; want false true true",
				p, mask[enc.Action(p, fp16, 0)], mask[enc.Action(p, hack, 0)], mask[enc.Action(p, fp16, 1)])
		}
	}
	d, ok := enc.Decode(enc.Action(1, hack, 0))
	if want := (infer.Decision{Prefill: 2, Decode: 4, Format: kv.HACKPi(64)}); !ok || d != want {
		t.Fatalf("Decode %+v %v, want %+v", d, ok, want)
	}
	obs := enc.Observe(nil, s, r)
	if len(obs) != enc.ObsDim() {
		t.Fatalf("observation of %d, ObsDim %d", len(obs), enc.ObsDim())
	}
	// The expected-time features: prefill slot 0 (an A100 x 8, 100 pending
	// + 1,000 prompt tokens) log1p(1100)/10 and 0 against the pool's
	// least; slot 1 (an A10G x 8, 125 against 312 TFLOPS) log1p(1100 x
	// 312/125)/10 and the difference x 10, log(2.496) to 1e-3 = 0.915; decode
	// slot 0 (an A100 x 8, 10 pending) log1p(10)/10.
	want := map[int]float64{6: math.Log1p(1100) / 10, 7: 0, prefillFeatures + 6: math.Log1p(1100*312.0/125) / 10,
		2*prefillFeatures + 7: math.Log1p(10) / 10, 2*prefillFeatures + 8: 0}
	for i, w := range want {
		if math.Abs(obs[i]-w) > 1e-12 {
			t.Errorf("feature %d: %v, want %v", i, obs[i], w)
		}
	}
	if r := obs[prefillFeatures+7]; math.Abs(r-0.915) > 1e-3 {
		t.Errorf("A10G prefill slot's time against the A100's: %v, want log(2.496) = 0.915", r)
	}
	// A cluster of one instance per pool: same size, absent slots zero
	// and masked.
	small := State{Instances: []infer.InstanceState{inst(infer.Prefill, "a100-80gb", 0, 0), inst(infer.Decode, "a100-80gb", 0, 0)}}
	enc.Begin(small)
	obs = enc.Observe(nil, small, r)
	mask = enc.Mask(nil, small, r)
	if len(obs) != enc.ObsDim() || obs[prefillFeatures] != 0 || mask[enc.Action(1, hack, 0)] || !mask[enc.Action(0, hack, 0)] {
		t.Fatalf("small cluster: %d features (want %d), slot 1 present %v, masks %v %v", len(obs), enc.ObsDim(), obs[prefillFeatures], mask[enc.Action(1, hack, 0)], mask[enc.Action(0, hack, 0)])
	}
	if _, ok := enc.Decode(enc.Action(1, hack, 0)); ok {
		t.Fatal("Decode of an absent slot succeeded")
	}
}

func TestNewEnvErrors(t *testing.T) {
	p := perf(t)
	reqs := func(uint64) []infer.Request { return poisson(1, 5, 1) }
	onlyDecode := Deployment(p)
	onlyDecode.Instances = onlyDecode.Instances[3:]
	for name, cfg := range map[string]EnvConfig{
		"no requests": {Deploy: Deployment(p)},
		"no prefill":  {Deploy: onlyDecode, Requests: reqs},
		"bad penalty": {Deploy: Deployment(p), Requests: reqs, SLOPenalty: -1},
		"zero slots":  {Deploy: Deployment(p), Requests: reqs, Encoder: Config{Slots: -1}},
		"bad format":  {Deploy: Deployment(p), Requests: reqs, Encoder: Config{Formats: []kv.Format{{Kind: 99}}}},
	} {
		if _, err := NewEnv(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestUnservedRequest: a request whose KV cache fits no instance (3
// million prompt tokens in FP16, the env's one format: 983 GB of
// llama2-70b's cache at 327,680 bytes a token, beyond even the A100
// instance's 687 GB less the weights) leaves the mask nothing to forbid; whichever action
// routes it, the simulation rejects it. The episode still terminates
// without a panic: Err wraps infer.ErrRejected, the info counts the
// rejected request, and the return is minus the other requests' JCTs and
// one SLO penalty for it on top of theirs.
func TestUnservedRequest(t *testing.T) {
	const big, n, penalty = 7, 30, 5.0
	e, err := NewEnv(EnvConfig{Deploy: Deployment(perf(t)), SLOPenalty: penalty, RewardScale: 10,
		Encoder: Config{Formats: []kv.Format{kv.FP16()}},
		Requests: func(seed uint64) []infer.Request {
			reqs := poisson(seed, n, 6)
			reqs[big].Prompt = 3_000_000
			return reqs
		}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	e.Reset(3)
	ret := 0.0
	var info gym.Info
	for step := 0; ; step++ {
		mask := e.ActionMask(nil)
		var valid []int
		for a, ok := range mask {
			if ok {
				valid = append(valid, a)
			}
		}
		if step == big && len(valid) != 3*2 {
			t.Fatalf("the mask allows %d actions for a request that fits none, want all 6 (3 prefill x 2 decode instances)", len(valid))
		}
		_, r, term, _, inf := e.Step(valid[rng.IntN(len(valid))])
		ret += r
		if term {
			info = inf
			break
		}
	}
	if !errors.Is(e.Err(), infer.ErrRejected) {
		t.Fatalf("Err() = %v, want infer.ErrRejected", e.Err())
	}
	sum, missed := 0.0, 0
	slo := e.cfg.Deploy.SLO
	for i, r := range e.Sim().Results() {
		if r.Rejected != (i == big) {
			t.Fatalf("request %d rejected: %v", i, r.Rejected)
		}
		if r.Rejected {
			continue
		}
		sum += r.E2E()
		if r.TTFT() > slo.TTFT || r.TPOT() > slo.TPOT {
			missed++
		}
	}
	if want := -(sum + penalty*float64(missed+1)) / 10; math.Abs(ret-want) > 1e-9*math.Abs(want) {
		t.Errorf("return %v, want %v", ret, want)
	}
	want := gym.Info{"mean_jct": sum / (n - 1), "slo_attainment": 1 - float64(missed+1)/n, "requests": n, "rejected": 1, "unfinished": 0}
	if diff := cmp.Diff(want, info, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
		t.Errorf("info (-want,+got):\n%s", diff)
	}
	if e.Reset(3); e.Err() != nil {
		t.Errorf("Err() = %v after Reset", e.Err())
	}
}

// TestStalledEpisode: two colocated TP2 H100 instances (160 GiB less
// llama2-70b's 135 GB of weights: 14,037 tokens of SplitwiseSim-sized KV
// each) running every request on one instance, with prompts up to 9,100
// tokens at 1 req/s, fill their memory with caches that cannot grow and
// the simulation stalls (infer.ErrStalled). The episode terminates
// without a panic, the info counts the requests that never finished, and
// the return is minus the finished requests' JCTs, the unfinished ones'
// time until the simulation's last event, and an SLO penalty for each
// unfinished request and each finished one that missed.
func TestStalledEpisode(t *testing.T) {
	const n, penalty = 100, 5.0
	inst := infer.InstanceConfig{GPU: "h100-80gb", TP: 2, Role: infer.Colocated, MaxBatchSize: infer.SplitwiseMaxBatchSize,
		MaxBatchTokens: infer.SplitwiseMaxBatchTokens, MaxPreemptions: infer.SplitwiseMaxPreemptions}
	dep := infer.Config{Model: infer.Llama2_70B, Perf: perf(t), Instances: []infer.InstanceConfig{inst, inst},
		Link: infer.LinkConfig{BytesPerSec: infer.SplitwiseTransferBytesPerSec}, SLO: infer.SLO{TTFT: 2, TPOT: 0.2}}
	e, err := NewEnv(EnvConfig{Deploy: dep, Encoder: Config{Arch: kv.Llama2_70B, Formats: []kv.Format{kv.FP16()}}, SLOPenalty: penalty, RewardScale: 10,
		Requests: func(seed uint64) []infer.Request {
			reqs := poisson(seed, n, 1)
			rng := rand.New(rand.NewPCG(seed, 9))
			for i := range reqs {
				reqs[i].Prompt = 100 + rng.IntN(9000)
			}
			return reqs
		}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(0, 1))
	e.Reset(0)
	ret := 0.0
	var info gym.Info
	for {
		var same []int // both phases on one instance
		for a, ok := range e.ActionMask(nil) {
			if d, _ := e.enc.Decode(a); ok && d.Prefill == d.Decode {
				same = append(same, a)
			}
		}
		_, r, term, _, inf := e.Step(same[rng.IntN(len(same))])
		ret += r
		if term {
			info = inf
			break
		}
	}
	if !errors.Is(e.Err(), infer.ErrStalled) {
		t.Fatalf("Err() = %v, want infer.ErrStalled", e.Err())
	}
	end := e.view.Now()
	sum, missed, left := 0.0, 0, 0
	slo := dep.SLO
	for _, r := range e.Sim().Results() {
		if math.IsNaN(r.End) {
			sum += end - r.Arrival
			left++
			continue
		}
		sum += r.E2E()
		if r.TTFT() > slo.TTFT || r.TPOT() > slo.TPOT {
			missed++
		}
	}
	if left == 0 || info["unfinished"] != float64(left) || info["rejected"] != 0 || info["requests"] != n {
		t.Errorf("info %v; %d requests never finished", info, left)
	}
	if want := -(sum + penalty*float64(missed+left)) / 10; math.Abs(ret-want) > 1e-9*math.Abs(want) {
		t.Errorf("return %v, want %v", ret, want)
	}
}

// TestTransferDeadlock: one A100 decode and one H100 prefill instance at
// TP2 (171.8 GB each, 135 GB of it llama2-70b's weights), SplitwiseSim-
// sized KV (2,621,440 bytes a token), prompts of 100-9,100 tokens at 1
// req/s, routed by random valid actions. The decode instance fills with
// moved caches whose decodes cannot start (each needs room for its
// output), while the transfers behind them wait for that room: a circular
// wait. The simulation used to retry those transfers every second
// forever (1,000,001 retries by t = 333,553 s); it now ends with
// infer.ErrStalled naming the waiting request, its decode instance, the
// bytes it needs and those free, at the last event that changed anything.
func TestTransferDeadlock(t *testing.T) {
	inst := func(g string, r infer.Role) infer.InstanceConfig {
		return infer.InstanceConfig{GPU: g, TP: 2, Role: r, MaxBatchSize: infer.SplitwiseMaxBatchSize,
			MaxBatchTokens: infer.SplitwiseMaxBatchTokens, MaxPreemptions: infer.SplitwiseMaxPreemptions}
	}
	dep := infer.Config{Model: infer.Llama2_70B, Perf: perf(t), Instances: []infer.InstanceConfig{inst("a100-80gb", infer.Decode), inst("h100-80gb", infer.Prefill)},
		Link: infer.LinkConfig{BytesPerSec: infer.SplitwiseTransferBytesPerSec}, SLO: infer.SLO{TTFT: 2, TPOT: 0.2}}
	const n = 200
	e, err := NewEnv(EnvConfig{Deploy: dep, Encoder: Config{Arch: kv.Llama2_70B, Formats: []kv.Format{kv.FP16()}}, SLOPenalty: 5,
		Requests: func(seed uint64) []infer.Request {
			reqs := poisson(seed, n, 1)
			rng := rand.New(rand.NewPCG(seed, 9))
			for i := range reqs {
				reqs[i].Prompt = 100 + rng.IntN(9000)
			}
			return reqs
		}})
	if err != nil {
		t.Fatal(err)
	}
	e.Reset(0)
	rng := rand.New(rand.NewPCG(0, 1))
	var info gym.Info
	for steps := 0; ; steps++ {
		if steps > n {
			t.Fatalf("%d steps for %d requests", steps, n)
		}
		var valid []int
		for a, ok := range e.ActionMask(nil) {
			if ok {
				valid = append(valid, a)
			}
		}
		_, _, term, _, inf := e.Step(valid[rng.IntN(len(valid))])
		if term {
			info = inf
			break
		}
	}
	err = e.Err()
	if !errors.Is(err, infer.ErrStalled) {
		t.Fatalf("Err() = %v, want infer.ErrStalled", err)
	}
	// Request 60's prompt cache (727 tokens x 2,621,440 bytes) waits on decode instance 0,
	// 77.6 MB free of 171.8 GB: 135 GB of weights and two moved caches
	// (36.7 GB) whose decodes wait for room.
	const want = "108 of 200 requests never finished: request 60's KV transfer waits for 1905786880 bytes on decode instance 0, which has 77560320 free"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("Err() = %v\nwant it to contain %q", err, want)
	}
	if info["unfinished"] != 108 || info["requests"] != n {
		t.Errorf("info %v, want 108 of %d unfinished", info, n)
	}
	if now := e.view.Now(); now > 1000 {
		t.Errorf("stalled at t = %v s, want the time of the last event that freed or moved anything (463 s)", now)
	}
}
