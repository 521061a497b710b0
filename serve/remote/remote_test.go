package remote_test

import (
	"context"
	"math"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/drover-sched/drover/datasets"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/trace"
	"github.com/drover-sched/drover/policies"
	"github.com/drover-sched/drover/policies/strn"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/remote"
	"github.com/drover-sched/drover/serve/state"
)

// startServer serves a fresh core answering with heuristic over bufconn,
// with every record kept in sink; it is shut down when the test ends.
func startServer(t *testing.T, heuristic string, sink serve.Sink, opts ...serve.Option) pb.SchedulerClient {
	t.Helper()
	core, err := serve.NewCore(append([]serve.Option{serve.WithHeuristic(heuristic), serve.WithSink(sink)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
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
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return pb.NewSchedulerClient(conn)
}

// telemetryOnly shows a policy the model's telemetry and nothing else: no
// env.Prober, as a Place request gives the server.
type telemetryOnly struct{ p policies.Policy }

type telModel struct {
	env.Model
	tel env.Telemetry
}

func (m telModel) NodeLoad(n int, now float64) env.Usage { return m.tel.NodeLoad(n, now) }

func (w telemetryOnly) Schedule(v *env.View) ([]env.Decision, error) {
	tel, _ := v.Model.(env.Telemetry)
	view := *v
	view.Model = telModel{v.Model, tel}
	return w.p.Schedule(&view)
}

// run simulates the first n jobs of the built-in workload under p on 16
// nodes x 4 GPUs with the per-worker model (builtin background, seed 1).
func run(t *testing.T, p policies.Policy, n int) *trace.Result {
	t.Helper()
	w := datasets.Builtin()
	w.Jobs = w.Jobs[:n]
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := trace.Run(trace.Options{Workload: w, Model: trace.ModelDrover, Profiles: profiles, Policy: p, Nodes: 16, GPUsPerNode: 4,
		Interval: -1, RestartDelay: -1, Stragglers: &trace.Stragglers{Background: "builtin", Seed: 1, Regime: trace.RegimeDedicated}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRemoteMatchesSTRN: a simulation that asks a server answering with
// STRN gives the same per-job JCTs as STRN in the simulator. The stateful
// server (serve.WithState, drover serve's default) probes each job as the
// simulator's STRN does, so it matches policy strn itself; the stateless
// one (drover serve -stateless) cannot probe (strn.Fallback sensitivities,
// BSP), so it matches strn behind a telemetry-only model. Every placed
// job's start and finish reach the server's log, with the job's submit
// time and the finish's JCT.
func TestRemoteMatchesSTRN(t *testing.T) {
	const n = 400
	stateless, err := strn.New(policies.Config{})
	if err != nil {
		t.Fatal(err)
	}
	stateful, err := strn.New(policies.Config{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.New(state.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts []serve.Option
		want policies.Policy
	}{
		{"stateful", []serve.Option{serve.WithState(store, nil)}, stateful},
		{"stateless", nil, telemetryOnly{stateless}},
	}
	avg := map[string]float64{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &serve.MemorySink{}
			r, err := remote.New(remote.Config{Client: startServer(t, strn.Name, sink, tt.opts...)})
			if err != nil {
				t.Fatal(err)
			}
			got := run(t, r, n)
			if err := r.Flush(); err != nil {
				t.Fatal(err)
			}
			want := run(t, tt.want, n)
			if got.Summary.Finished != n || want.Summary.Finished != n {
				t.Fatalf("finished %d remote, %d local, want %d", got.Summary.Finished, want.Summary.Finished, n)
			}
			for i := range want.Jobs {
				if g, w := got.Jobs[i], want.Jobs[i]; g.JCT != w.JCT || g.Start != w.Start {
					t.Fatalf("job %s: remote start %v JCT %v, local STRN start %v JCT %v", w.Name, g.Start, g.JCT, w.Start, w.JCT)
				}
			}
			avg[tt.name] = got.Summary.AvgJCT
			checkLog(t, sink, got, n)
		})
	}
	t.Logf("avg JCT: stateful served STRN (= strn in the simulator) %.2f s, stateless served STRN %.2f s", avg["stateful"], avg["stateless"])
}

// checkLog checks what the server heard of a run of n jobs: one decision
// per job (each was asked only when it fit, and placed then), with its
// submission; one start and one finish each, at the simulated times.
func checkLog(t *testing.T, sink *serve.MemorySink, got *trace.Result, n int) {
	t.Helper()
	ds := sink.Decisions()
	if len(ds) != n {
		t.Errorf("%d decisions, want %d", len(ds), n)
	}
	jobs := map[string]env.JobResult{}
	for _, j := range got.Jobs {
		jobs[j.Name] = j
	}
	for _, d := range ds {
		j := jobs[d.JobID]
		if !d.Placed || d.Policy != "heuristic:strn" {
			t.Errorf("decision %s: placed %v by %s, want placed by heuristic:strn", d.ID, d.Placed, d.Policy)
		}
		if want := remote.DefaultEpoch.UnixNano() + int64(j.Submit*1e9); d.Submitted.UnixNano() != want {
			t.Errorf("job %s: submitted %v, want epoch + %v s", d.JobID, d.Submitted, j.Submit)
		}
	}
	started, finished := 0, 0
	for _, o := range sink.Outcomes() {
		j := jobs[o.JobID]
		switch o.Kind {
		case serve.OutcomeStarted:
			started++
			if at := o.At.Sub(remote.DefaultEpoch).Seconds(); math.Abs(at-j.Start) > 1e-6 {
				t.Errorf("job %s started at %v s, want %v", o.JobID, at, j.Start)
			}
		case serve.OutcomeFinished:
			finished++
			if o.JCTSeconds != j.JCT {
				t.Errorf("job %s: reported JCT %v, want %v", o.JobID, o.JCTSeconds, j.JCT)
			}
		}
	}
	if started != n || finished != n {
		t.Errorf("%d started and %d finished outcomes, want %d each", started, finished, n)
	}
}

// TestRemoteErrors: a server that cannot be reached fails Schedule with
// an error naming the job; New refuses a config without a client.
func TestRemoteErrors(t *testing.T) {
	if _, err := remote.New(remote.Config{}); err == nil {
		t.Error("New without a client: no error")
	}
	conn, err := grpc.NewClient("passthrough:///nowhere", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return nil, net.ErrClosed }))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := remote.New(remote.Config{Client: pb.NewSchedulerClient(conn), Context: ctx})
	if err != nil {
		t.Fatal(err)
	}
	w := datasets.Builtin()
	w.Jobs = w.Jobs[:3]
	profiles, _, err := trace.Profiles("builtin", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = trace.Run(trace.Options{Workload: w, Model: trace.ModelDrover, Profiles: profiles, Policy: r, Nodes: 2, GPUsPerNode: 4, Interval: -1, RestartDelay: -1})
	if err == nil || !strings.Contains(err.Error(), "remote: place job") {
		t.Errorf("run against an unreachable server: %v, want a failed place", err)
	}
}
