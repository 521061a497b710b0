package loadgen_test

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/drover-sched/drover/internal/loadgen"
	pb "github.com/drover-sched/drover/serve/proto"
)

// script is a Scheduler whose Place answers in arrival order: call
// stall sleeps 50 ms, calls in fail answer ResourceExhausted, the rest
// answer at once. A request whose job id is not "job-1" is refused
// (InvalidArgument), so the pre-encoded bytes are checked to arrive whole.
type script struct {
	pb.UnimplementedSchedulerServer
	calls atomic.Int64
	stall int64
	fail  map[int64]bool
	first func() // when set, called on the first call
}

func (s *script) Place(_ context.Context, req *pb.PlaceRequest) (*pb.PlaceResponse, error) {
	i := s.calls.Add(1) - 1
	if i == 0 && s.first != nil {
		s.first()
	}
	if req.GetJob().GetId() != "job-1" || len(req.GetCluster().GetNodes()) != 2 {
		return nil, status.Errorf(codes.InvalidArgument, "bad request %v", req)
	}
	if i == s.stall {
		time.Sleep(50 * time.Millisecond)
	}
	if s.fail[i] {
		return nil, status.Error(codes.ResourceExhausted, "no")
	}
	return &pb.PlaceResponse{Placed: true, Policy: "script"}, nil
}

// serveScript serves s over bufconn and returns n grpc-go client
// connections.
func serveScript(t *testing.T, s *script, n int) []grpc.ClientConnInterface {
	t.Helper()
	lis, _ := listen(t, s)
	var conns []grpc.ClientConnInterface
	for range n {
		c, err := grpc.NewClient("passthrough:///bufnet", grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns = append(conns, c)
	}
	return conns
}

// listen serves s over bufconn.
func listen(t *testing.T, s pb.SchedulerServer) (*bufconn.Listener, *grpc.Server) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	pb.RegisterSchedulerServer(srv, s)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis, srv
}

// serveScriptH2 serves s over bufconn and returns n connections of the
// lean HTTP/2 client, sending header.
func serveScriptH2(t *testing.T, s *script, n int, header map[string]string) []*loadgen.H2Conn {
	t.Helper()
	lis, _ := listen(t, s)
	return dialH2(t, lis, n, header)
}

func dialH2(t *testing.T, lis *bufconn.Listener, n int, header map[string]string) []*loadgen.H2Conn {
	t.Helper()
	var conns []*loadgen.H2Conn
	for range n {
		nc, err := lis.Dial()
		if err != nil {
			t.Fatal(err)
		}
		c, err := loadgen.NewH2Conn(nc, "bufnet", false, header, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns = append(conns, c)
	}
	return conns
}

// transports are the two clients every Run test drives: each returns a
// Config holding n connections to a server of s.
var transports = []struct {
	name  string
	conns func(t *testing.T, s *script, n int) loadgen.Config
}{
	{"grpc", func(t *testing.T, s *script, n int) loadgen.Config {
		return loadgen.Config{Conns: serveScript(t, s, n)}
	}},
	{"h2", func(t *testing.T, s *script, n int) loadgen.Config {
		return loadgen.Config{H2: serveScriptH2(t, s, n, nil)}
	}},
}

func payload(t *testing.T) []byte {
	t.Helper()
	b, err := proto.Marshal(&pb.PlaceRequest{Job: &pb.Job{Id: "job-1", Workers: 2},
		Cluster: &pb.Cluster{Nodes: []*pb.Node{{Id: "a", Gpus: 4}, {Id: "b", Gpus: 4}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRunCountsQueueing runs 60 requests at 200/s on one in-flight slot
// against a server that stalls the 11th for 50 ms. Open loop, the nine
// requests due during the stall (5, 10, ..., 45 ms after it began) wait
// for the slot, and their latencies, measured from the time they were
// due, are about 45, 40, ..., 5 ms: ten requests (the stalled one
// included) take over 4 ms. A closed-loop client timing from the send
// would show one.
func TestRunCountsQueueing(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			s := &script{stall: 10, fail: map[int64]bool{20: true, 21: true, 22: true}}
			cfg := tr.conns(t, s, 1)
			cfg.Method, cfg.Payload, cfg.Rate, cfg.N, cfg.Concurrency, cfg.Timeout = pb.Scheduler_Place_FullMethodName, payload(t), 200, 60, 1, 5*time.Second
			testRunCountsQueueing(t, cfg)
		})
	}
}

func testRunCountsQueueing(t *testing.T, cfg loadgen.Config) {
	n, rate := uint64(cfg.N), cfg.Rate
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	type counts struct {
		Sent, OK, Latencies, Lags uint64
		Errors                    map[string]uint64
	}
	want := counts{Sent: n, OK: n - 3, Latencies: n - 3, Lags: n, Errors: map[string]uint64{"ResourceExhausted": 3}}
	got := counts{Sent: res.Sent, OK: res.OK, Latencies: res.Latency.Count(), Lags: res.Lag.Count(), Errors: res.Errors}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("counts (-want,+got)\n%s", d)
	}
	if got := res.Latency.CountAbove(4 * time.Millisecond); got < 10 {
		t.Errorf("%d latencies above 4 ms, want >= 10 (the stall and the 9 requests queued behind it)", got)
	}
	if got := res.Lag.CountAbove(4 * time.Millisecond); got < 9 {
		t.Errorf("%d sends more than 4 ms late, want >= 9", got)
	}
	if res.Latency.Max() < 50*time.Millisecond {
		t.Errorf("max latency %v, want >= 50ms", res.Latency.Max())
	}
	// The schedule is kept: the last request is not sent before it is due.
	if min := time.Duration(float64(n-1) / rate * 1e9); res.Elapsed < min {
		t.Errorf("elapsed %v, want >= %v", res.Elapsed, min)
	}
	if a := res.Achieved(); a > rate*float64(n)/float64(n-1)+1e-9 {
		t.Errorf("achieved %g/s, above the asked %g/s", a, rate)
	}
}

// TestRunManySlots spreads 100 requests at 500/s over 8 slots and 2
// connections.
func TestRunManySlots(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			s := &script{stall: -1}
			cfg := tr.conns(t, s, 2)
			cfg.Method, cfg.Payload, cfg.Rate, cfg.N, cfg.Concurrency = pb.Scheduler_Place_FullMethodName, payload(t), 500, 100, 8
			res, err := loadgen.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Sent != 100 || res.OK != 100 || len(res.Errors) != 0 || s.calls.Load() != 100 {
				t.Errorf("sent %d, ok %d, errors %v, server saw %d; want 100, 100, none, 100", res.Sent, res.OK, res.Errors, s.calls.Load())
			}
			if res.ClientCPU <= 0 {
				t.Errorf("client CPU %v, want > 0", res.ClientCPU)
			}
		})
	}
}

// TestRunStopsWithContext cancels a run that would take 100 s, at the
// server's first call: Run returns, having sent far fewer than its 1000
// requests. (The bounds leave a loaded machine under -race a minute; a
// 200 ms timeout had left it no time to send the first.)
func TestRunStopsWithContext(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := tr.conns(t, &script{stall: -1, first: cancel}, 1)
			cfg.Method, cfg.Payload, cfg.Rate, cfg.N, cfg.Concurrency = pb.Scheduler_Place_FullMethodName, payload(t), 10, 1000, 4
			start := time.Now()
			res, err := loadgen.Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el > time.Minute {
				t.Errorf("Run took %v, its context ended at the first call", el)
			}
			if res.Sent < 1 || res.Sent >= uint64(cfg.N) {
				t.Errorf("sent %d of %d, want the first and not all", res.Sent, cfg.N)
			}
		})
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	conns := []grpc.ClientConnInterface{nil}
	ok := loadgen.Config{Conns: conns, Method: "/m", Rate: 1, N: 1, Concurrency: 1}
	tests := []struct {
		name string
		edit func(*loadgen.Config)
		want string
	}{
		{"no conns", func(c *loadgen.Config) { c.Conns = nil }, "no connections"},
		{"both clients", func(c *loadgen.Config) { c.H2 = []*loadgen.H2Conn{nil} }, "both"},
		{"no method", func(c *loadgen.Config) { c.Method = "" }, "no method"},
		{"zero rate", func(c *loadgen.Config) { c.Rate = 0 }, "rate 0"},
		{"zero n", func(c *loadgen.Config) { c.N = 0 }, "0 requests"},
		{"zero concurrency", func(c *loadgen.Config) { c.Concurrency = 0 }, "concurrency 0"},
		{"negative timeout", func(c *loadgen.Config) { c.Timeout = -1 }, "timeout -1ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			_, err := loadgen.Run(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
