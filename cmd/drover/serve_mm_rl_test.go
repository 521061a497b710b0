package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/agents/ppo"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/datasets/llm"
	"github.com/drover-sched/drover/env/gym"
	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/env/mmgym"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/policies/modserve"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// mmrlInitial is the pools' sizes at an mm-rl test episode's start.
var mmrlInitial = mmscale.Sizes{Image: 2, Text: 2}

// mmrlTestConfig is a small mm-rl setting: Llama-3.2-11B-Vision's pools
// over 3-hour episodes of the week at 2M requests, every image 896x896
// (the profile below is serve/mm_test.go's, made with them).
func mmrlTestConfig(days []int) mmgym.Config {
	cfg := mmscale.DefaultConfig()
	cfg.SLO = mmscale.Objective{Factor: 5, Text: 0.026287, Image: 0.104971}
	c := mmgym.Config{Model: mm.Llama32_11BVision, Requests: 2_000_000, Days: days, Hours: 3, Scale: cfg,
		Profile: mmscale.Profile{ImageTokensPerSec: 21701, TextTokensPerSec: 9552, MonoRequestsPerSec: 0.8225, EncodeSeconds: 0.1224},
		Penalty: 0.05, RewardScale: 10,
		Router:   func() mm.Router { r, _ := modserve.New(modserve.RouteOnly); return r },
		Fixed896: true}
	c.NewRule = modServeRule(c.Scale, c.Profile, mmrlInitial)
	return c
}

// tinyMMRLCheckpoint trains mm-rl through drover train --env mm-rl's
// path (trainMMRL) for 96 periods (PPO, 2 environments of 48 steps, one
// update, no prior on the rule action) on day 0, judged on one held-out
// episode of day 2, and saves its checkpoint to dir. Seed 9 is one whose
// policy takes two different actions on TestMMRLServed's held-out
// episode, which the test checks.
func tinyMMRLCheckpoint(t *testing.T, dir string) checkpoints.Meta {
	t.Helper()
	c := mmrlTestConfig([]int{0})
	var log strings.Builder
	meta, nets, err := trainMMRL(mmrlTraining{model: c.Model, scale: c.Scale, profile: c.Profile, initial: mmrlInitial, router: modserve.RouteOnly,
		requests: c.Requests, histSeed: 2, trainDays: []int{0}, testDays: []int{2}, hours: c.Hours, penalty: c.Penalty,
		steps: 96, numEnvs: 2, numSteps: 48, seed: 9, hidden: []int{16, 16}, lr: ppo.DefaultConfig().LR, tests: 1, log: &log, fixed896: c.Fixed896})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(strings.TrimSpace(log.String()))
	for _, want := range []string{"mm-rl: update 1/1, step 96/96, 2 episodes, mean cost", "mm-rl: held-out episode 1 (seed 1009, day 2): mm-rl"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("progress lines lack %q", want)
		}
	}
	if err := checkpoints.Save(dir, meta, nets); err != nil {
		t.Fatal(err)
	}
	return meta
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
	s, err := mm.New(mm.Decoupled(c.Model, 1, 1).Fixed896(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	out, err := mmscale.Run(s, reqs, c.Router(), sc, c.Scale)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMMRLServed: a tiny mm-rl trained through drover train --env mm-rl's
// path, its checkpoint loaded as drover serve -mm-policy loads it, and
// served behind the gate. First, the checkpoint's policy, served form
// (serve.MMRL's scaler), plays a held-out episode (day 2) exactly as
// mmgym does with the same actor: the same GPU-hours and attainment bit
// for bit. Then the episode's pools are asked of a server over bufconn
// every minute and 5 minutes, once with the checkpoint's verdict as
// trained and once with it flipped: "not converged", ModServe's rule
// answers every call and the run is mmgym's Rule episode; "converged",
// mm-rl answers and the run is its own, bit for bit, with the other
// autoscaler in shadow in the log.
func TestMMRLServed(t *testing.T) {
	dir := t.TempDir()
	meta := tinyMMRLCheckpoint(t, dir)
	if g := meta.MM.Gate; g.Episodes != 1 || g.Baseline != "modserve" || g.Converged != meta.Converged || !(g.GPUHours > 0) || !(g.RuleGPUHours > 0) {
		t.Fatalf("the checkpoint's gate: %+v", g)
	}
	// drover train --env mm-rl --judge re-judges it from its meta.json alone
	// to the recorded figures, bit for bit.
	var judged, stderr strings.Builder
	if err := runTrain([]string{"--env", "mm-rl", "--judge", dir, "--quiet"}, &judged, &stderr); err != nil || !strings.Contains(judged.String(), "(the same figures)") {
		t.Fatalf("--judge: %v\n%s", err, judged.String())
	}
	p, err := loadMMPolicy(dir, mm.Llama32_11BVision)
	if err != nil {
		t.Fatal(err)
	}
	c := mmrlTestConfig([]int{2})
	const seed = 7
	reqs := heldOut(t, c, seed)
	var actions [9]int
	act := p.Policy()
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
	rl := episode(func(obs []float64) int { a := act(obs); actions[a]++; return a })
	rule := episode(func([]float64) int { return mmgym.Rule })
	local, err := p.NewScaler()
	if err != nil {
		t.Fatal(err)
	}
	lo := runScaler(t, c, reqs, local)
	if lo.Summary.GPUHours != rl["gpu_hours"] || lo.Attainment != rl["attainment"] {
		t.Fatalf("served form of mm-rl: %v GPU-hours, attainment %v; mmgym's episode %v, %v", lo.Summary.GPUHours, lo.Attainment, rl["gpu_hours"], rl["attainment"])
	}
	t.Logf("held-out episode (day 2, 3 h, %d requests): mm-rl %.2f GPU-hours at %.4f attainment (actions %v), ModServe's rule %.2f at %.4f",
		len(reqs), rl["gpu_hours"], rl["attainment"], actions, rule["gpu_hours"], rule["attainment"])
	if kinds := len(actions) - countZero(actions[:]); kinds < 2 {
		t.Fatalf("mm-rl took %d kind of action (%v); want at least two, so that the match covers a change of action", kinds, actions)
	}
	// The same checkpoint with the other verdict.
	flipped := meta
	mmFlipped := *meta.MM
	flipped.MM = &mmFlipped
	flipped.Converged, flipped.MM.Gate.Converged = !meta.Converged, !meta.Converged
	if flipped.Converged {
		flipped.MM.Gate.Episodes = max(1, flipped.MM.Gate.Episodes)
	}
	_, nets, err := checkpoints.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	dirFlipped := t.TempDir()
	if err := checkpoints.Save(dirFlipped, flipped, nets); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, dirFlipped} {
		q, err := loadMMPolicy(d, mm.Llama32_11BVision)
		if err != nil {
			t.Fatal(err)
		}
		want, policy := rule, "heuristic:modserve"
		if q.Meta.Converged {
			want, policy = rl, "learned:mm-rl@ppo/9/96"
		}
		t.Run(fmt.Sprintf("converged %v", q.Meta.Converged), func(t *testing.T) {
			sink := &serve.MemorySink{}
			cfg := serve.MMConfig{Base: mm.Decoupled(c.Model, 1, 1), NoRouter: true}
			if err := mmPolicyConfig(&cfg, q, serve.SwitchConverged); err != nil {
				t.Fatal(err)
			}
			core, err := serve.NewCore(serve.WithSink(sink), serve.WithMM(cfg))
			if err != nil {
				t.Fatal(err)
			}
			client := bufconnClient(t, core)
			remote := &serve.RemoteScaler{Client: client, Deployment: "held-out"}
			out := runScaler(t, c, reqs, remote)
			if err := remote.Err(); err != nil {
				t.Fatal(err)
			}
			if out.Summary.GPUHours != want["gpu_hours"] || out.Attainment != want["attainment"] {
				t.Fatalf("served: %v GPU-hours, attainment %v; want %v, %v", out.Summary.GPUHours, out.Attainment, want["gpu_hours"], want["attainment"])
			}
			if n := remote.Sources[policy]; n != 1+len(out.Samples) {
				t.Fatalf("answers by %v, want all %d by %s", remote.Sources, 1+len(out.Samples), policy)
			}
			for _, r := range sink.Scales() {
				if r.Shadow == "" || r.Shadow == r.Policy {
					t.Fatalf("record %+v: want the other autoscaler in shadow", r)
				}
			}
		})
	}
}

// drover serve -mm-policy refuses a checkpoint for another model, a
// corrupt one and flags that would change the rule it was judged against,
// each error naming the file or flag and the field; drover train --env
// mm-rl refuses bad flags, and other environments its --mm flags.
func TestMMRLFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	meta, nets := func() (checkpoints.Meta, map[string]*nn.MLP) {
		c := mmrlTestConfig([]int{0})
		s := serve.MMRLScale(c.Model, c.Scale, c.Profile, mmrlInitial)
		s.Training = checkpoints.MMTraining{Hours: 3, RewardScale: 10, Images: "fixed896"}
		s.Gate.Baseline = serve.MMRLBaseline
		return checkpoints.Meta{Env: mmrlEnv, Algo: "ppo", ObsDim: mmgym.ObsDim, Actions: 9, Hidden: []int{4}, Activation: "tanh", Networks: []string{"actor"}, MM: &s},
			map[string]*nn.MLP{"actor": checkpoints.Build(mmgym.ObsDim, []int{4}, 9, "tanh")}
	}()
	if err := checkpoints.Save(dir, meta, nets); err != nil {
		t.Fatal(err)
	}
	corrupt := t.TempDir()
	meta.MM.Profile.ImageTokensPerSec = 0
	meta.Version = checkpoints.Version
	mj, _ := checkpoints.EncodeMeta(meta)
	wb, _ := os.ReadFile(filepath.Join(dir, checkpoints.WeightsFile))
	os.WriteFile(filepath.Join(corrupt, checkpoints.MetaFile), mj, 0o644)
	os.WriteFile(filepath.Join(corrupt, checkpoints.WeightsFile), wb, 0o644)
	for _, tt := range []struct {
		cmd  func([]string, io.Writer, io.Writer) error
		args []string
		want string
	}{
		{runServe, []string{"-mm-model", "internvl", "-mm-policy", dir}, "-mm-policy " + filepath.Join(dir, "meta.json") + `: mm.model: "llama-3.2-11b-vision", the served model is "internvl-2.5-26b" (-mm-model)`},
		{runServe, []string{"-mm-model", "llama", "-mm-policy", corrupt}, "-mm-policy " + corrupt + ": checkpoints: corrupt checkpoint: meta.json: mm.profile.image_tokens_per_sec: 0, want a finite value > 0"},
		{runServe, []string{"-mm-model", "llama", "-mm-policy", t.TempDir()}, "meta.json"},
		{runServe, []string{"-mm-model", "llama", "-mm-policy", dir, "-mm-target", "0.8"}, "-mm-target with -mm-policy"},
		{runServe, []string{"-mm-model", "llama", "-mm-policy", dir, "-mm-scale", "monolith"}, "-mm-scale monolith with -mm-policy"},
		{runServe, []string{"-mm-model", "llama", "-mm-policy", dir, "-mm-switch", "live"}, `-mm-switch "live": want converged, gate or shadow`},
		{runServe, []string{"-mm-model", "llama", "-mm-policy", dir, "-mm-switch", "gate", "-mm-router", "off"}, "-mm-switch gate replays the requests RouteMM routes: it needs -mm-router (not off)"},
		{runServe, []string{"-mm-model", "llama", "-mm-gate-every", "3"}, "-mm-gate-every given without -mm-policy"},
		{runServe, []string{"-mm-model", "llama", "-mm-switch", "shadow"}, "-mm-switch given without -mm-policy"},
		{runServe, []string{"-mm-policy", dir}, "-mm-policy given without -mm-model"},
		{runTrain, []string{"--env", "mm-rl", "--mm-hours", "0.5"}, "--mm-hours"},
		{runTrain, []string{"--env", "mm-rl", "--mm-router", "modserve-late"}, "--mm-router"},
		{runTrain, []string{"--env", "mm-rl", "--mm-test-days", "5,7"}, "--mm-test-days"},
		{runTrain, []string{"--env", "mm-rl", "--mm-train-days", "6", "--mm-hours", "24", "--mm-model", "nope"}, "--mm-model"},
		{runTrain, []string{"--env", "mm-rl", "--algo", "dqn"}, "want ppo"},
		{runTrain, []string{"--env", "mm-rl", "--resume", dir}, "does not take --resume"},
		{runTrain, []string{"--env", "pd-rl", "--mm-model", "llama", "--mm-hours", "3"}, "--mm-hours, --mm-model given without --env mm-rl"},
		{runTrain, []string{"--env", "mm-rl", "--judge", dir, "--mm-hours", "3"}, "does not take --mm-hours"},
		{runTrain, []string{"--env", "mm-rl", "--judge", dir, "--steps", "5"}, "does not take --steps"},
		{runTrain, []string{"--env", "mm-rl", "--judge", corrupt}, "--judge " + corrupt + ": checkpoints: corrupt checkpoint: meta.json: mm.profile.image_tokens_per_sec: 0"},
		{runTrain, []string{"--env", "mm-rl", "--judge", dir, "--eval-seeds", "0"}, "--eval-seeds 0: want 1 to 1000"},
		{runTrain, []string{"--env", "sync", "--judge", dir}, "--judge given without --env pd-rl or mm-rl"},
	} {
		var out, errw strings.Builder
		err := tt.cmd(tt.args, &out, &errw)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want one with %q", tt.args, err, tt.want)
		}
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
