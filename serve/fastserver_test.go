package serve_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/drover-sched/drover/env/infer/mm"
	"github.com/drover-sched/drover/internal/leakcheck"
	"github.com/drover-sched/drover/internal/testpki"
	"github.com/drover-sched/drover/policies/mmscale"
	"github.com/drover-sched/drover/serve"
	pb "github.com/drover-sched/drover/serve/proto"
)

// fastPair is one Server serving both the gRPC listener and the fast
// listener, with a grpc-go client connection to each.
type fastPair struct {
	srv        *serve.Server
	grpc, fast *grpc.ClientConn
	done       chan error
}

// startFastPair serves a fresh core (opts) with cfg on two loopback
// listeners: Serve and ServeFast. The clients dial with dialOpts, or
// plaintext when there are none.
func startFastPair(t *testing.T, cfg serve.ServerConfig, dialOpts []grpc.DialOption, opts ...serve.Option) *fastPair {
	t.Helper()
	core, err := serve.NewCore(append([]serve.Option{serve.WithModelTimeout(testDeadline)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.NewServer(core, cfg)
	if err != nil {
		t.Fatal(err)
	}
	glis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	flis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &fastPair{srv: srv, done: make(chan error, 2)}
	go func() { p.done <- srv.Serve(glis) }()
	go func() { p.done <- srv.ServeFast(flis) }()
	if len(dialOpts) == 0 {
		dialOpts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	if p.grpc, err = grpc.NewClient(glis.Addr().String(), dialOpts...); err != nil {
		t.Fatal(err)
	}
	if p.fast, err = grpc.NewClient(flis.Addr().String(), dialOpts...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop closes the clients, shuts the server down and checks that both
// Serve and ServeFast returned nil (idempotent).
func (p *fastPair) stop(t *testing.T) {
	if p.grpc == nil {
		return
	}
	p.grpc.Close()
	p.fast.Close()
	p.grpc = nil
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	if err := p.srv.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	for range 2 {
		if err := <-p.done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
}

// sameAnswer fails unless the two calls' answers agree: the same status
// code and message, and equal responses but for the decision id, which
// names each decision.
func sameAnswer(t *testing.T, what string, g, f proto.Message, gerr, ferr error) {
	t.Helper()
	gs, fs := status.Convert(gerr), status.Convert(ferr)
	if gs.Code() != fs.Code() || gs.Message() != fs.Message() {
		t.Errorf("%s: gRPC listener answered %v %q, fast listener %v %q", what, gs.Code(), gs.Message(), fs.Code(), fs.Message())
		return
	}
	if gerr != nil {
		return
	}
	if gp, ok := g.(*pb.PlaceResponse); ok {
		fp := f.(*pb.PlaceResponse)
		if gp.DecisionId == "" || fp.DecisionId == "" || gp.DecisionId == fp.DecisionId {
			t.Errorf("%s: decision ids %q and %q, want two distinct", what, gp.DecisionId, fp.DecisionId)
		}
		g, f = proto.CloneOf(gp), proto.CloneOf(fp)
		g.(*pb.PlaceResponse).DecisionId, f.(*pb.PlaceResponse).DecisionId = "", ""
	}
	if !proto.Equal(g, f) {
		t.Errorf("%s: answers differ:\ngRPC %v\nfast %v", what, g, f)
	}
}

// TestFastMatchesGRPC calls the gRPC listener and the fast listener of
// one server with grpc-go's client and requires the same answers: Place
// on clusters of 8 and 64 nodes, invalid and oversized requests, a
// request that is not protobuf, Report, Status, the health check of a
// known and an unknown service, a wrong token and an unknown method.
// Every call carries a deadline (grpc-timeout). The core is stateless, so
// that an answer depends on its request alone.
func TestFastMatchesGRPC(t *testing.T) {
	leakcheck.Check(t)
	const token = "s3cret"
	cfg := serve.ServerConfig{Token: token, MaxRecvMsgSize: 64 << 10}
	creds := grpc.WithPerRPCCredentials(serve.BearerToken{Token: token, AllowInsecure: true})
	p := startFastPair(t, cfg, []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), creds})
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	gc, fc := pb.NewSchedulerClient(p.grpc), pb.NewSchedulerClient(p.fast)

	noWorkers := makeRequest(8, 4, 2)
	noWorkers.Job.Workers = 0
	tooBig := makeRequest(1024, 4, 8) // about 80 KB: over MaxRecvMsgSize
	if n := proto.Size(tooBig); n <= cfg.MaxRecvMsgSize {
		t.Fatalf("oversized request is %d bytes", n)
	}
	notFit := makeRequest(8, 4, 200)
	for _, c := range []struct {
		name string
		req  *pb.PlaceRequest
		code codes.Code
	}{
		{"8 nodes", makeRequest(8, 4, 2), codes.OK},
		{"64 nodes", makeRequest(64, 4, 8), codes.OK},
		{"64 nodes again", makeRequest(64, 4, 8), codes.OK},
		{"does not fit", notFit, codes.OK},
		{"no workers", noWorkers, codes.InvalidArgument},
		{"oversized", tooBig, codes.ResourceExhausted},
	} {
		g, gerr := gc.Place(ctx, c.req)
		f, ferr := fc.Place(ctx, c.req)
		if status.Code(gerr) != c.code {
			t.Errorf("Place %s: gRPC listener answered %v, want %v", c.name, gerr, c.code)
		}
		sameAnswer(t, "Place "+c.name, g, f, gerr, ferr)
	}

	// Bytes that are not a PlaceRequest: the job's id (field 1 of field
	// 1) is not UTF-8.
	raw := wrapperspb.Bytes([]byte{0x0a, 0x01, 0xff})
	gerr := p.grpc.Invoke(ctx, pb.Scheduler_Place_FullMethodName, raw, new(pb.PlaceResponse))
	ferr := p.fast.Invoke(ctx, pb.Scheduler_Place_FullMethodName, raw, new(pb.PlaceResponse))
	if status.Code(ferr) != codes.InvalidArgument || !strings.Contains(status.Convert(ferr).Message(), "malformed protobuf request") {
		t.Errorf("Place of bytes that are not a PlaceRequest on the fast listener: %v, want InvalidArgument naming a malformed request", ferr)
	}
	sameAnswer(t, "Place of bytes that are not a PlaceRequest", nil, nil, gerr, ferr)

	placed, err := gc.Place(ctx, makeRequest(8, 4, 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		req  *pb.ReportRequest
	}{
		{"finished", &pb.ReportRequest{Outcomes: []*pb.Outcome{{DecisionId: placed.DecisionId, JobId: "job-1", Event: &pb.Outcome_Finished{Finished: &pb.Finished{Success: true, JctS: 3600}}}}}},
		{"negative jct", &pb.ReportRequest{Outcomes: []*pb.Outcome{{DecisionId: placed.DecisionId, JobId: "job-1", Event: &pb.Outcome_Finished{Finished: &pb.Finished{Success: true, JctS: -1}}}}}},
	} {
		g, gerr := gc.Report(ctx, c.req)
		f, ferr := fc.Report(ctx, c.req)
		sameAnswer(t, "Report "+c.name, g, f, gerr, ferr)
	}

	g, gerr2 := gc.Status(ctx, &pb.StatusRequest{})
	f, ferr2 := fc.Status(ctx, &pb.StatusRequest{})
	if gerr2 != nil || ferr2 != nil || g.GetActivePolicy() != f.GetActivePolicy() || g.GetHeuristic() != f.GetHeuristic() || f.GetActivePolicy() == "" {
		t.Errorf("Status: gRPC %v %v, fast %v %v", g, gerr2, f, ferr2)
	}

	gh, fh := healthpb.NewHealthClient(p.grpc), healthpb.NewHealthClient(p.fast)
	for _, svc := range []string{"", serve.ServiceName, "no.such.Service"} {
		g, gerr := gh.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		f, ferr := fh.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		sameAnswer(t, "health "+svc, g, f, gerr, ferr)
	}

	// A wrong token, and none; the health check needs none.
	for _, tok := range []string{"wrong", ""} {
		dial := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
		if tok != "" {
			dial = append(dial, grpc.WithPerRPCCredentials(serve.BearerToken{Token: tok, AllowInsecure: true}))
		}
		var answers [2]error
		for i, target := range []string{p.grpc.Target(), p.fast.Target()} {
			conn, err := grpc.NewClient(target, dial...)
			if err != nil {
				t.Fatal(err)
			}
			_, answers[i] = pb.NewSchedulerClient(conn).Place(ctx, makeRequest(8, 4, 2))
			if r, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
				t.Errorf("health check on %s with token %q: %v %v", target, tok, r, err)
			}
			conn.Close()
		}
		if status.Code(answers[1]) != codes.Unauthenticated {
			t.Errorf("Place with token %q on the fast listener: %v", tok, answers[1])
		}
		sameAnswer(t, "token "+tok, nil, nil, answers[0], answers[1])
	}

	// An unknown method: both Unimplemented (the messages differ).
	gerr = p.grpc.Invoke(ctx, "/drover.v1.Scheduler/Nope", &pb.StatusRequest{}, new(pb.StatusResponse))
	ferr = p.fast.Invoke(ctx, "/drover.v1.Scheduler/Nope", &pb.StatusRequest{}, new(pb.StatusResponse))
	if status.Code(gerr) != codes.Unimplemented || status.Code(ferr) != codes.Unimplemented {
		t.Errorf("unknown method: gRPC %v, fast %v; want Unimplemented", gerr, ferr)
	}
	// A stream, served on the gRPC listener only.
	w, err := healthpb.NewHealthClient(p.fast).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err == nil {
		_, err = w.Recv()
	}
	if status.Code(err) != codes.Unimplemented || !strings.Contains(status.Convert(err).Message(), "-addr") {
		t.Errorf("health Watch on the fast listener: %v, want Unimplemented naming -addr", err)
	}
}

// TestFastConcurrent runs Place from several goroutines on several fast
// connections at once, with metrics: every call is answered OK (each
// connection answers its calls in turn), the metrics count every one
// under listener="fast" (a Place and a health check through grpc-go's
// listener and the fast one are told apart), and nothing races (the
// suite runs under -race).
func TestFastConcurrent(t *testing.T) {
	leakcheck.Check(t)
	m := serve.NewMetrics()
	p := startFastPair(t, serve.ServerConfig{Metrics: m}, nil)
	conns := []*grpc.ClientConn{p.fast}
	for range 2 {
		c, err := grpc.NewClient(p.fast.Target(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	const workers, calls = 6, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := pb.NewSchedulerClient(conns[w%len(conns)])
			for range calls {
				ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
				r, err := c.Place(ctx, makeRequest(16, 4, 4))
				cancel()
				if err == nil && !r.Placed {
					err = errors.New("not placed")
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	if _, err := pb.NewSchedulerClient(p.grpc).Place(ctx, makeRequest(8, 4, 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := healthpb.NewHealthClient(p.fast).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	got := scrape(t, m)
	for _, want := range []string{
		`drover_grpc_requests_total{code="OK",listener="fast",method="/drover.v1.Scheduler/Place"} 300`,
		`drover_grpc_requests_total{code="OK",listener="grpc",method="/drover.v1.Scheduler/Place"} 1`,
		`drover_grpc_requests_total{code="OK",listener="fast",method="/grpc.health.v1.Health/Check"} 1`,
		`drover_grpc_request_duration_seconds_count{listener="fast",method="/drover.v1.Scheduler/Place"} 300`,
		`drover_grpc_request_duration_seconds_count{listener="fast",method="/grpc.health.v1.Health/Check"} 1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("metrics lack %s:\n%s", want, got)
		}
	}
}

// TestFastTLS serves the fast listener with the server's TLS (mTLS):
// grpc-go's TLS client, which offers ALPN h2, is answered; a client
// without a certificate, and one that offers no ALPN, are not.
func TestFastTLS(t *testing.T) {
	leakcheck.Check(t)
	pki, err := testpki.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	scfg, err := serve.LoadTLS(pki.ServerCert, pki.ServerKey, pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	creds := grpc.WithTransportCredentials(credentials.NewTLS(pki.ClientTLS(true)))
	p := startFastPair(t, serve.ServerConfig{TLS: scfg}, []grpc.DialOption{creds})
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	if r, err := pb.NewSchedulerClient(p.fast).Place(ctx, makeRequest(8, 4, 2)); err != nil || !r.Placed {
		t.Fatalf("Place over TLS: %v %v", r, err)
	}

	noCert, err := grpc.NewClient(p.fast.Target(), grpc.WithTransportCredentials(credentials.NewTLS(pki.ClientTLS(false))))
	if err != nil {
		t.Fatal(err)
	}
	defer noCert.Close()
	sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
	defer scancel()
	if _, err := pb.NewSchedulerClient(noCert).Place(sctx, makeRequest(8, 4, 2)); status.Code(err) != codes.Unavailable && status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("Place without a client certificate: %v, want Unavailable", err)
	}

	// No ALPN: the handshake completes (crypto/tls refuses only a
	// client whose protocols all differ from the server's), then the
	// server closes without a frame, preface or not.
	noALPN := pki.ClientTLS(true)
	tc, err := tls.Dial("tcp", p.fast.Target(), noALPN)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	tc.Write([]byte(http2.ClientPreface))
	tc.SetReadDeadline(time.Now().Add(time.Minute))
	var b [1]byte
	if n, rerr := tc.Read(b[:]); n != 0 || rerr == nil || errors.Is(rerr, os.ErrDeadlineExceeded) {
		t.Errorf("a client without ALPN read %d bytes (%v), want the connection closed", n, rerr)
	}
}

// TestFastShutdownHealth: the fast listener's health check answers
// SERVING; after Shutdown, ServeFast has returned nil, a new call fails,
// and a fast listener served then returns serve.ErrClosed. (The raw-frame
// tests check the GOAWAY and the calls in progress.)
func TestFastShutdownHealth(t *testing.T) {
	leakcheck.Check(t)
	p := startFastPair(t, serve.ServerConfig{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	fh := healthpb.NewHealthClient(p.fast)
	if r, err := fh.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health before shutdown: %v %v", r, err)
	}
	fast := p.fast
	p.grpc.Close()
	p.grpc = nil // stop() is done here
	if err := p.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-p.done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
	cctx, ccancel := context.WithTimeout(ctx, time.Second)
	defer ccancel()
	if _, err := fh.Check(cctx, &healthpb.HealthCheckRequest{}); err == nil {
		t.Error("health check after shutdown answered")
	}
	fast.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.ServeFast(lis); !errors.Is(err, serve.ErrClosed) {
		t.Errorf("ServeFast after Shutdown: %v, want ErrClosed", err)
	}
}

// TestFastRoute: the fast listener answers Route as the gRPC listener
// does, errors included.
func TestFastRoute(t *testing.T) {
	defer leakcheck.Check(t)
	cfg, _ := routeFixture(t)
	p := startFastPair(t, serve.ServerConfig{}, nil, serve.WithRouter(serve.RouteConfig{Encoder: routeEncoding(cfg)}))
	good := &pb.RouteRequest{RequestId: "1", PromptTokens: 900, OutputTokens: 20, Instances: []*pb.Instance{
		{Id: "p", Role: pb.InstanceRole_INSTANCE_PREFILL, Gpu: "a100-80gb", Tp: 8, MaxBytes: 1 << 40, PendingTokens: 5},
		{Id: "q", Role: pb.InstanceRole_INSTANCE_PREFILL, Gpu: "a100-80gb", Tp: 8, MaxBytes: 1 << 40},
		{Id: "d", Role: pb.InstanceRole_INSTANCE_DECODE, Gpu: "a100-80gb", Tp: 8, MaxBytes: 1 << 40}}}
	bad := proto.CloneOf(good)
	bad.Instances[2].Gpu = "tpu"
	for _, req := range []*pb.RouteRequest{good, bad} {
		ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
		g, gerr := pb.NewSchedulerClient(p.grpc).Route(ctx, req)
		f, ferr := pb.NewSchedulerClient(p.fast).Route(ctx, req)
		cancel()
		if gerr == nil {
			if g.PrefillId != "q" || f.DecisionId == g.DecisionId {
				t.Fatalf("answers %v and %v", g, f)
			}
			g, f = proto.CloneOf(g), proto.CloneOf(f)
			g.DecisionId, f.DecisionId = "", ""
		}
		sameAnswer(t, "route", g, f, gerr, ferr)
	}
}

// TestFastMM: the fast listener answers RouteMM and Scale as the gRPC
// listener does, errors included, and both answer one core: the Scale
// calls of the two listeners take turns in one autoscaler's state.
func TestFastMM(t *testing.T) {
	defer leakcheck.Check(t)
	p := startFastPair(t, serve.ServerConfig{}, nil, serve.WithMM(serve.MMConfig{Base: mm.Decoupled(mm.InternVL25_26B, 1, 1).Fixed896(), Scaler: newModServeScaler})) // 1,280-token images
	img := func(id string, load int64) *pb.MMInstance {
		return &pb.MMInstance{Id: id, Pool: pb.MMPool_MM_POOL_IMAGE, State: pb.MMState_MM_STATE_ACTIVE, Tp: 1, PendingImageTokens: load}
	}
	good := &pb.RouteMMRequest{RequestId: "1", Images: 3, PromptTokens: 900, OutputTokens: 20, ArrivalSeconds: 4, Instances: []*pb.MMInstance{
		img("a", 1280), img("b", 0), {Id: "t", Pool: pb.MMPool_MM_POOL_TEXT, State: pb.MMState_MM_STATE_ACTIVE, Tp: 4}}}
	bad := proto.CloneOf(good)
	bad.PromptTokens = 0
	for _, req := range []*pb.RouteMMRequest{good, bad} {
		ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
		g, gerr := pb.NewSchedulerClient(p.grpc).RouteMM(ctx, req)
		f, ferr := pb.NewSchedulerClient(p.fast).RouteMM(ctx, req)
		cancel()
		if gerr == nil {
			// Three images over two instances by pending image tokens:
			// b, then a and b tie at 1,280 (the first wins), then b.
			if g.InstanceId != "t" || !slices.Equal(g.Images, []int32{1, 0, 1}) || f.DecisionId == g.DecisionId {
				t.Fatalf("answers %v and %v", g, f)
			}
			g, f = proto.CloneOf(g), proto.CloneOf(f)
			g.DecisionId, f.DecisionId = "", ""
		}
		sameAnswer(t, "route-mm", g, f, gerr, ferr)
	}
	w := serve.ScaleRequestOf(mmscale.Window{Seconds: 300, ImageTokens: 300 * 21701 * 2.5, TextLoad: 300 * 9552 * 1.5}, mmscale.Sizes{Image: 2, Text: 2}, true)
	badW := proto.CloneOf(w)
	badW.Seconds = -1
	for _, req := range []*pb.ScaleRequest{w, badW} {
		ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
		g, gerr := pb.NewSchedulerClient(p.grpc).Scale(ctx, req)
		f, ferr := pb.NewSchedulerClient(p.fast).Scale(ctx, req)
		cancel()
		if gerr == nil {
			if g.GetSizes().GetImage() != 3 || g.GetSizes().GetText() != 2 {
				t.Fatalf("answer %v, want 3 image and 2 text instances", g)
			}
			g, f = proto.CloneOf(g), proto.CloneOf(f)
			g.DecisionId, f.DecisionId = "", ""
		}
		sameAnswer(t, "scale", g, f, gerr, ferr)
	}
}
