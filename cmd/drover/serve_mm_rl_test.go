package main

import (
	"context"
	"math"
	"math/rand/v2"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/env/mmgym"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/policies/modserve"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// rlScaler serves an mm-rl policy (a network over env/mmgym's
// observation) as an mmscale.Scaler: within a period ModServe's rule acts
// on its triggers; at a period's end the rule asks, the network picks an
// action, and each pool's ask is scaled by the action's factors, as
// mmgym.Env.Step does (mmgym.Observe, mmgym.Scale); TestMMRLServed checks
// that it plays a held-out episode as the environment does.
type rlScaler struct {
	rule *mmscale.ModServe
	cfg  mmgym.Config
	act  func(obs []float64) int
	now  float64
	// Actions counts the actions taken, by action.
	actions [9]int
}

func newRLScaler(c mmgym.Config, act func([]float64) int) (*rlScaler, error) {
	rule, err := mmscale.NewModServe(c.Scale, c.Profile, mmrlInitial)
	if err != nil {
		return nil, err
	}
	return &rlScaler{rule: rule, cfg: c, act: act}, nil
}

func (s *rlScaler) Initial() mmscale.Sizes { return s.rule.Initial() }

func (s *rlScaler) Decide(w mmscale.Window, cur mmscale.Sizes, tick bool) mmscale.Sizes {
	ask := s.rule.Decide(w, cur, tick)
	if !tick {
		return ask
	}
	s.now += w.Seconds
	a := s.act(mmgym.Observe(w, cur, ask, s.now, s.cfg.Profile))
	s.actions[a]++
	return mmgym.Scale(ask, a, s.cfg.Scale)
}

// mmrlInitial is the pools' sizes at an mm-rl test episode's start.
var mmrlInitial = mmscale.Sizes{Image: 2, Text: 2}

// mmrlTestConfig is a small mm-rl setting: Llama-3.2-11B-Vision's pools
// over 3-hour episodes of the week at 2M requests, the profile of
// serve/mm_test.go.
func mmrlTestConfig(days []int) mmgym.Config {
	cfg := mmscale.DefaultConfig()
	cfg.SLO = mmscale.Objective{Factor: 5, Text: 0.026287, Image: 0.104971}
	c := mmgym.Config{Model: mm.Llama32_11BVision, Requests: 2_000_000, Days: days, Hours: 3, Scale: cfg,
		Profile: mmscale.Profile{ImageTokensPerSec: 21701, TextTokensPerSec: 9552, MonoRequestsPerSec: 0.8225, EncodeSeconds: 0.1224},
		Penalty: 0.05, RewardScale: 10,
		Router: func() mm.Router { r, _ := modserve.New(modserve.RouteOnly); return r }}
	c.NewRule = modServeRule(c.Scale, c.Profile, mmrlInitial)
	return c
}

// trainTinyMMRL trains mm-rl for 96 periods (PPO, 2 environments of 48
// steps, one update) on day 0 and returns its greedy policy. Seed 9 is one
// whose policy takes two different actions on TestMMRLServed's held-out
// episode, which the test checks.
func trainTinyMMRL(t *testing.T) func([]float64) int {
	t.Helper()
	c := mmrlTestConfig([]int{0})
	pc := ppo.DefaultConfig()
	pc.Seed, pc.TotalSteps, pc.NumEnvs, pc.NumSteps, pc.Hidden = 9, 96, 2, 48, []int{16, 16}
	agent, err := ppo.Train(pc, func(int) gym.Env {
		e, err := mmgym.New(c)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	inf, err := nn.NewInfer(agent.Actor)
	if err != nil {
		t.Fatal(err)
	}
	all := make([]bool, 9)
	for i := range all {
		all[i] = true
	}
	return func(obs []float64) int { return nn.MaskedArgmax(inf.Forward(obs), all) }
}

// heldOut returns the requests of the held-out episode mmgym plays for
// seed on day 2.
func heldOut(t *testing.T, c mmgym.Config, seed uint64) []mm.Request {
	t.Helper()
	reqs, err := llm.LMMSynth{Requests: c.Requests, Start: c.Days[seed%uint64(len(c.Days))] * 1440, Minutes: int(math.Round(c.Hours * 60))}.Generate(rand.NewPCG(seed, 0x6d6d67796d))
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// runScaler runs reqs under sc with mmgym's router and rule config.
func runScaler(t *testing.T, c mmgym.Config, reqs []mm.Request, sc mmscale.Scaler) mmscale.Outcome {
	t.Helper()
	s, err := mm.New(mm.Decoupled(c.Model, 1, 1), reqs)
	if err != nil {
		t.Fatal(err)
	}
	out, err := mmscale.Run(s, reqs, c.Router(), sc, c.Scale)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMMRLServed: a tiny test-trained mm-rl policy (PPO on env/mmgym,
// one update) served by drover serve's multimodal core behind the gate.
// First, the served form of the policy (rlScaler) plays a held-out episode
// (day 2) exactly as mmgym does: the same GPU-hours and attainment bit for
// bit. Then the episode's pools are asked of a server over bufconn every
// minute and 5 minutes: with the checkpoint's verdict "not converged"
// ModServe's rule answers every call and the run is ModServe's (mmgym's
// Rule episode); with "converged" mm-rl answers and the run is mm-rl's,
// with ModServe's sizes in shadow in the log.
func TestMMRLServed(t *testing.T) {
	act := trainTinyMMRL(t)
	c := mmrlTestConfig([]int{2})
	const seed = 7
	reqs := heldOut(t, c, seed)
	episode := func(policy func([]float64) int) gym.Info {
		e, err := mmgym.New(c)
		if err != nil {
			t.Fatal(err)
		}
		obs, _ := e.Reset(seed)
		for {
			var done bool
			var info gym.Info
			obs, _, done, _, info = e.Step(policy(obs))
			if done {
				return info
			}
		}
	}
	rl, rule := episode(act), episode(func([]float64) int { return mmgym.Rule })
	local, err := newRLScaler(c, act)
	if err != nil {
		t.Fatal(err)
	}
	lo := runScaler(t, c, reqs, local)
	if lo.Summary.GPUHours != rl["gpu_hours"] || lo.Attainment != rl["attainment"] {
		t.Fatalf("served form of mm-rl: %v GPU-hours, attainment %v; mmgym's episode %v, %v", lo.Summary.GPUHours, lo.Attainment, rl["gpu_hours"], rl["attainment"])
	}
	t.Logf("held-out episode (day 2, 3 h, %d requests): mm-rl %.2f GPU-hours at %.4f attainment (actions %v), ModServe's rule %.2f at %.4f",
		len(reqs), rl["gpu_hours"], rl["attainment"], local.actions, rule["gpu_hours"], rule["attainment"])
	if kinds := len(local.actions) - countZero(local.actions[:]); kinds < 2 {
		t.Fatalf("mm-rl took %d kind of action (%v); want at least two, so that the match covers a change of action", kinds, local.actions)
	}
	for _, tt := range []struct {
		name      string
		converged bool
		want      gym.Info
		policy    string
	}{
		{"not converged: ModServe answers", false, rule, "heuristic:modserve"},
		{"converged: mm-rl answers", true, rl, "learned:mm-rl@test"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sink := &serve.MemorySink{}
			core, err := serve.NewCore(serve.WithSink(sink), serve.WithMM(serve.MMConfig{Base: mm.Decoupled(c.Model, 1, 1), NoRouter: true,
				Scaler:  func() (mmscale.Scaler, error) { return mmscale.NewModServe(c.Scale, c.Profile, mmrlInitial) },
				Learned: func() (mmscale.Scaler, error) { return newRLScaler(c, act) }, Version: "test", Converged: tt.converged}))
			if err != nil {
				t.Fatal(err)
			}
			client := bufconnClient(t, core)
			remote := &serve.RemoteScaler{Client: client, Deployment: "held-out"}
			out := runScaler(t, c, reqs, remote)
			if err := remote.Err(); err != nil {
				t.Fatal(err)
			}
			if out.Summary.GPUHours != tt.want["gpu_hours"] || out.Attainment != tt.want["attainment"] {
				t.Fatalf("served: %v GPU-hours, attainment %v; want %v, %v", out.Summary.GPUHours, out.Attainment, tt.want["gpu_hours"], tt.want["attainment"])
			}
			if n := remote.Sources[tt.policy]; n != 1+len(out.Samples) {
				t.Fatalf("answers by %v, want all %d by %s", remote.Sources, 1+len(out.Samples), tt.policy)
			}
			for _, r := range sink.Scales() {
				if r.Shadow == "" || r.Shadow == r.Policy {
					t.Fatalf("record %+v: want the other autoscaler in shadow", r)
				}
			}
		})
	}
}

// countZero counts the zeros in n.
func countZero(n []int) int {
	z := 0
	for _, v := range n {
		if v == 0 {
			z++
		}
	}
	return z
}

// bufconnClient serves core over bufconn until the test ends.
func bufconnClient(t *testing.T, core *serve.Core) pb.SchedulerClient {
	t.Helper()
	srv, err := serve.NewServer(core, serve.ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	lis := bufconn.Listen(1 << 20)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufnet", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return pb.NewSchedulerClient(conn)
}
