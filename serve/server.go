package serve

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/drover-sched/drover/internal/connlimit"
	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/serve/fast"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/state"
)

// ServiceName is the gRPC service's full name, as the health service
// reports it.
const ServiceName = "drover.v1.Scheduler"

// service is the gRPC Scheduler service over a Core.
type service struct {
	pb.UnimplementedSchedulerServer
	core *Core
}

var _ pb.SchedulerServer = (*service)(nil)

// Place implements pb.SchedulerServer.
func (s *service) Place(ctx context.Context, req *pb.PlaceRequest) (*pb.PlaceResponse, error) {
	resp, err := s.core.Place(ctx, req)
	return resp, toStatus(err)
}

// Report implements pb.SchedulerServer.
func (s *service) Report(ctx context.Context, req *pb.ReportRequest) (*pb.ReportResponse, error) {
	resp, err := s.core.Report(ctx, req)
	return resp, toStatus(err)
}

// Status implements pb.SchedulerServer.
func (s *service) Status(_ context.Context, req *pb.StatusRequest) (*pb.StatusResponse, error) {
	return s.core.StatusFor(req), nil
}

// Route implements pb.SchedulerServer.
func (s *service) Route(ctx context.Context, req *pb.RouteRequest) (*pb.RouteResponse, error) {
	resp, err := s.core.Route(ctx, req)
	return resp, toStatus(err)
}

// RouteMM implements pb.SchedulerServer.
func (s *service) RouteMM(ctx context.Context, req *pb.RouteMMRequest) (*pb.RouteMMResponse, error) {
	resp, err := s.core.RouteMM(ctx, req)
	return resp, toStatus(err)
}

// Scale implements pb.SchedulerServer.
func (s *service) Scale(ctx context.Context, req *pb.ScaleRequest) (*pb.ScaleResponse, error) {
	resp, err := s.core.Scale(ctx, req)
	return resp, toStatus(err)
}

// toStatus maps the core's errors to gRPC status codes, the one place
// where they are chosen.
func toStatus(err error) error {
	var fe *FieldError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return status.Error(codes.InvalidArgument, fe.Error())
	case errors.Is(err, ErrOverloaded):
		return status.Error(codes.ResourceExhausted, "drover: overloaded, retry with backoff")
	case errors.Is(err, ErrClosed):
		return status.Error(codes.Unavailable, "drover: shutting down")
	case errors.Is(err, ErrNoRouter), errors.Is(err, ErrNoMM):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Internal, err.Error())
}

// ServerConfig configures a Server. The zero value serves plaintext with
// no authentication.
type ServerConfig struct {
	// TLS, when set, serves TLS (mTLS when it requires client
	// certificates; see LoadTLS).
	TLS *tls.Config
	// Token, when set, is the bearer token every call but the health
	// check must carry ("authorization: Bearer <token>").
	Token string
	// MaxRecvMsgSize is the largest request in bytes (0: gRPC's 4 MiB).
	MaxRecvMsgSize int
	// Metrics, when set, receives the gRPC request metrics.
	Metrics *Metrics
	// Clock times requests for the metrics (default RealClock).
	Clock Clock
	// Conns bounds the gRPC listener's connections (zero fields:
	// DefaultGRPCConns's), FastConns each fast listener's
	// (DefaultFastConns's).
	Conns, FastConns ConnLimits
}

// Server is the gRPC server of a Core: the Scheduler service, the health
// service and server reflection, with metrics and authentication
// interceptors.
type Server struct {
	core   *Core
	cfg    ServerConfig
	grpc   *grpc.Server
	health *health.Server
	// telemetry is the Telemetry service of a stateful core (nil: none).
	telemetry *state.Service

	// Place's metrics, looked up once.
	placeLatency prometheus.Observer
	placeOK      prometheus.Counter

	// fast serves the fast listeners (ServeFast).
	fast *fast.Server
	// refused counts the gRPC listeners' refused connections (nil: no
	// metrics).
	refused func(connlimit.Reason)
}

// The server's flow-control windows (see NewServer): a stream may carry
// a request of up to 1 MiB without waiting for window, and a connection
// 4 MiB in flight.
const (
	staticStreamWindow = 1 << 20
	staticConnWindow   = 4 << 20
)

// NewServer builds the gRPC server of core.
func NewServer(core *Core, cfg ServerConfig) (*Server, error) {
	if core == nil {
		return nil, errors.New("serve: nil core")
	}
	if cfg.MaxRecvMsgSize < 0 {
		return nil, fmt.Errorf("serve: max message size %d, want >= 0", cfg.MaxRecvMsgSize)
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock{}
	}
	if int64(cfg.Conns.MaxStreams) > math.MaxUint32 {
		return nil, fmt.Errorf("serve: %d streams per connection, want at most 2^32-1", cfg.Conns.MaxStreams)
	}
	cfg.Conns = cfg.Conns.withDefaults(DefaultGRPCConns)
	cfg.FastConns = cfg.FastConns.withDefaults(DefaultFastConns)
	s := &Server{core: core, cfg: cfg, health: health.NewServer()}
	fc := cfg.FastConns
	fcfg := fast.Config{TLS: cfg.TLS, Token: cfg.Token, MaxRecvMsgSize: cfg.MaxRecvMsgSize, Now: cfg.Clock.Now,
		MaxConns: fc.MaxConns, MaxConnsPerPeer: fc.MaxConnsPerPeer, HandshakeTimeout: fc.HandshakeTimeout, IdleTimeout: fc.IdleTimeout}
	// fast takes zero for its own defaults and a negative value for
	// off, which withDefaults made zero.
	for _, v := range []*int{&fcfg.MaxConns, &fcfg.MaxConnsPerPeer} {
		if *v == 0 {
			*v = -1
		}
	}
	for _, v := range []*time.Duration{&fcfg.HandshakeTimeout, &fcfg.IdleTimeout} {
		if *v == 0 {
			*v = -1
		}
	}
	if m := cfg.Metrics; m != nil {
		s.placeLatency = m.latency.WithLabelValues(pb.Scheduler_Place_FullMethodName, listenerGRPC)
		s.placeOK = m.requests.WithLabelValues(pb.Scheduler_Place_FullMethodName, codes.OK.String(), listenerGRPC)
		fcfg.Metrics = m.fast()
		cm, l := m.conns(), prometheus.Labels{"listener": listenerFast}
		fcfg.Metrics.Refused, fcfg.Metrics.Closed = cm.refused.MustCurryWith(l), cm.closed.MustCurryWith(l)
		s.refused = refusedFunc(m, listenerGRPC)
	}
	s.fast = fast.NewServer(fastBackend{s}, fcfg)
	opts := []grpc.ServerOption{
		// One interceptor for metrics and the token: a chain of two costs
		// a closure per call.
		grpc.UnaryInterceptor(s.unary),
		grpc.StreamInterceptor(s.authStream),
		// Requests run on reused goroutines whose stacks have grown,
		// instead of a new goroutine (and stack growth) per call.
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))),
		grpc.ForceServerCodecV2(fast.NewCodec()),
		// Static flow-control windows turn off gRPC's bandwidth-delay
		// estimation, which pings the client about once per request
		// under a steady load of small calls: a PING and its ACK are two
		// more frames, and wake-ups, per Place on both sides.
		grpc.StaticStreamWindowSize(staticStreamWindow),
		grpc.StaticConnWindowSize(staticConnWindow),
		// Connections that do nothing end (ConnLimits): the handshake is
		// bounded, a connection without calls or streams is closed after
		// IdleTimeout (each costs three goroutines and ~16 KiB while it
		// lasts), a dead peer is found by a ping after two minutes of
		// silence, and a client pinging more than every 20 s is closed
		// (too_many_pings) rather than served.
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: cfg.Conns.IdleTimeout, Time: 2 * time.Minute, Timeout: 20 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 20 * time.Second, PermitWithoutStream: true}),
	}
	if d := cfg.Conns.HandshakeTimeout; d > 0 {
		opts = append(opts, grpc.ConnectionTimeout(d))
	}
	if n := cfg.Conns.MaxStreams; n > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(uint32(n)))
	}
	if cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.TLS)))
	}
	if cfg.MaxRecvMsgSize > 0 {
		opts = append(opts, grpc.MaxRecvMsgSize(cfg.MaxRecvMsgSize))
	}
	s.grpc = grpc.NewServer(opts...)
	s.grpc.RegisterService(withDecodeStatus(&pb.Scheduler_ServiceDesc), &service{core: core})
	if st := core.State(); st != nil {
		s.telemetry = state.NewService(st, cfg.Clock.Now)
		pb.RegisterTelemetryServer(s.grpc, s.telemetry)
	}
	s.grpc.RegisterService(withDecodeStatus(&healthpb.Health_ServiceDesc), s.health)
	reflection.Register(s.grpc)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(ServiceName, healthpb.HealthCheckResponse_SERVING)
	return s, nil
}

// GRPC returns the underlying gRPC server, to register more services.
func (s *Server) GRPC() *grpc.Server { return s.grpc }

// Serve accepts connections on lis until Shutdown, within the
// configuration's Conns limits (counted per listener: each Serve has
// its own).
func (s *Server) Serve(lis net.Listener) error {
	c := s.cfg.Conns
	if c.MaxConns > 0 || c.MaxConnsPerPeer > 0 {
		lis = connlimit.Listen(lis, connlimit.New(connlimit.Limits{Max: c.MaxConns, PerPeer: c.MaxConnsPerPeer}), s.refused)
	}
	return s.grpc.Serve(lis)
}

// ServeFast serves the hot unary calls (Place, Report, Status, Route,
// RouteMM, Scale and the health check) on lis with the lean HTTP/2 endpoint of serve/fast, with
// the server's core, health status, TLS (ALPN h2), token, size limit and
// metrics (listener label "fast"), until Shutdown. It returns nil after
// Shutdown, and ErrClosed when called after it.
func (s *Server) ServeFast(lis net.Listener) error {
	err := s.fast.Serve(lis)
	if errors.Is(err, fast.ErrClosed) {
		return ErrClosed
	}
	return err
}

// fastBackend is the fast listener's view of a Server: the core's calls
// with the gRPC listener's status codes, and its health status.
type fastBackend struct{ s *Server }

// Place implements fast.Backend.
func (b fastBackend) Place(ctx context.Context, req *pb.PlaceRequest) (*pb.PlaceResponse, error) {
	resp, err := b.s.core.Place(ctx, req)
	return resp, toStatus(err)
}

// Report implements fast.Backend.
func (b fastBackend) Report(ctx context.Context, req *pb.ReportRequest) (*pb.ReportResponse, error) {
	resp, err := b.s.core.Report(ctx, req)
	return resp, toStatus(err)
}

// Status implements fast.Backend.
func (b fastBackend) Status(_ context.Context, req *pb.StatusRequest) (*pb.StatusResponse, error) {
	return b.s.core.StatusFor(req), nil
}

// Route implements fast.Backend.
func (b fastBackend) Route(ctx context.Context, req *pb.RouteRequest) (*pb.RouteResponse, error) {
	resp, err := b.s.core.Route(ctx, req)
	return resp, toStatus(err)
}

// RouteMM implements fast.Backend.
func (b fastBackend) RouteMM(ctx context.Context, req *pb.RouteMMRequest) (*pb.RouteMMResponse, error) {
	resp, err := b.s.core.RouteMM(ctx, req)
	return resp, toStatus(err)
}

// Scale implements fast.Backend.
func (b fastBackend) Scale(ctx context.Context, req *pb.ScaleRequest) (*pb.ScaleResponse, error) {
	resp, err := b.s.core.Scale(ctx, req)
	return resp, toStatus(err)
}

// Check implements fast.Backend.
func (b fastBackend) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	return b.s.health.Check(ctx, req)
}

// Shutdown reports NOT_SERVING to health checks, ends the agents'
// telemetry streams (they reconnect to the next server), stops accepting calls,
// waits for the calls in progress (GracefulStop, and GOAWAY on the fast
// listeners' connections; when ctx ends first, it cancels them with Stop
// and closes the fast connections), then closes the core, which flushes
// and closes the decision sink.
func (s *Server) Shutdown(ctx context.Context) error {
	s.health.Shutdown()
	if s.telemetry != nil {
		// Agents' streams never end by themselves.
		s.telemetry.Close()
	}
	deadline, _ := ctx.Deadline()
	s.fast.Drain(deadline)
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		s.fast.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.grpc.Stop()
		s.fast.CloseAll()
		<-done
	}
	return s.core.Close()
}

// unary is the unary interceptor: the token check, then the handler,
// measured when the server has metrics.
func (s *Server) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	m := s.cfg.Metrics
	if m == nil {
		if err := s.authorized(ctx, info.FullMethod); err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
	place := info.FullMethod == pb.Scheduler_Place_FullMethodName
	if place {
		m.inflight.Inc()
		defer m.inflight.Dec()
	}
	start := s.cfg.Clock.Now()
	var resp any
	err := s.authorized(ctx, info.FullMethod)
	if err == nil {
		resp, err = handler(ctx, req)
	}
	took := s.cfg.Clock.Now().Sub(start).Seconds()
	code := status.Code(err)
	if place {
		s.placeLatency.Observe(took)
	} else {
		m.latency.WithLabelValues(info.FullMethod, listenerGRPC).Observe(took)
	}
	if place && code == codes.OK {
		s.placeOK.Inc()
	} else {
		m.requests.WithLabelValues(info.FullMethod, code.String(), listenerGRPC).Inc()
	}
	return resp, err
}

// authorized checks the bearer token of a call.
func (s *Server) authorized(ctx context.Context, method string) error {
	if s.cfg.Token == "" || strings.HasPrefix(method, "/grpc.health.v1.Health/") {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if fast.TokenOK(md.Get("authorization"), s.cfg.Token) {
		return nil
	}
	return status.Error(codes.Unauthenticated, fast.Unauthenticated)
}

func (s *Server) authStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := s.authorized(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return handler(srv, decodeStatusStream{ss})
}

// recvDecoded receives a message into m through recv, and answers
// InvalidArgument when the message does not decode: the client sent bad
// bytes, the server is fine. The codec keeps the error in a fast.DecodeTarget
// instead of returning it, which gRPC would answer with Internal before
// any handler or interceptor could choose the code.
func recvDecoded(recv func(any) error, m any) error {
	t := &fast.DecodeTarget{M: m}
	if err := recv(t); err != nil {
		return err
	}
	if t.Err != nil {
		return status.Error(codes.InvalidArgument, t.Err.Error())
	}
	return nil
}

// withDecodeStatus returns a copy of sd whose unary methods answer
// InvalidArgument for a request that does not decode (recvDecoded).
// Its streams get the same from the stream interceptor (authStream).
func withDecodeStatus(sd *grpc.ServiceDesc) *grpc.ServiceDesc {
	c := *sd
	c.Methods = slices.Clone(sd.Methods)
	for i := range c.Methods {
		if sd == &pb.Scheduler_ServiceDesc && c.Methods[i].MethodName == "Place" {
			c.Methods[i].Handler = placeHandler
			continue
		}
		h := c.Methods[i].Handler
		c.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
			return h(srv, ctx, func(m any) error { return recvDecoded(dec, m) }, ic)
		}
	}
	return &c
}

// placeInPool holds the Place handler's requests between calls (see
// fast.PlaceIn).
var placeInPool = sync.Pool{New: func() any { return new(fast.PlaceIn) }}

// placeHandler is the generated Place handler with recvDecoded's
// decoding, its messages decoded into a reused fast.PlaceIn (Place is the hot
// path: a 64-node request's nodes were 9 of the server's 16 KB of garbage
// per call, and garbage sets how often the collector runs).
func placeHandler(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
	in := placeInPool.Get().(*fast.PlaceIn)
	defer func() {
		if in.Reset() {
			placeInPool.Put(in)
		}
	}()
	in.Target.M, in.Target.Scratch = &in.Req, &in.Scratch
	if err := dec(&in.Target); err != nil {
		return nil, err
	}
	if in.Target.Err != nil {
		return nil, status.Error(codes.InvalidArgument, in.Target.Err.Error())
	}
	if ic == nil {
		return srv.(pb.SchedulerServer).Place(ctx, &in.Req)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: pb.Scheduler_Place_FullMethodName}
	handler := func(ctx context.Context, req any) (any, error) {
		return srv.(pb.SchedulerServer).Place(ctx, req.(*pb.PlaceRequest))
	}
	return ic(ctx, &in.Req, info, handler)
}

// decodeStatusStream is a server stream whose RecvMsg answers
// InvalidArgument for a message that does not decode.
type decodeStatusStream struct{ grpc.ServerStream }

// RecvMsg implements grpc.ServerStream.
func (s decodeStatusStream) RecvMsg(m any) error { return recvDecoded(s.ServerStream.RecvMsg, m) }

// LoadTLS returns a server TLS configuration (TLS 1.2 or later) from PEM
// files; with clientCA it requires and verifies client certificates
// signed by it (mTLS).
func LoadTLS(certFile, keyFile, clientCA string) (*tls.Config, error) {
	cert, err := inputfile.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("serve: load TLS key pair %s, %s: %w", certFile, keyFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCA != "" {
		pem, err := inputfile.ReadFile(clientCA, inputfile.Secret)
		if err != nil {
			return nil, fmt.Errorf("serve: read client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("serve: client CA %s: no PEM certificates", clientCA)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// BearerToken is the client side of the token check: per-call credentials
// that send "authorization: Bearer <Token>".
type BearerToken struct {
	// Token is the token.
	Token string
	// AllowInsecure sends it over plaintext connections too, but only to
	// a loopback address (LoopbackHost): for tests and local use.
	AllowInsecure bool
}

var _ credentials.PerRPCCredentials = BearerToken{}

// GetRequestMetadata implements credentials.PerRPCCredentials. Over a
// plaintext connection (AllowInsecure) it refuses, with Unauthenticated,
// to send the token to a server whose address is not loopback.
func (b BearerToken) GetRequestMetadata(ctx context.Context, uri ...string) (map[string]string, error) {
	if b.AllowInsecure {
		ri, _ := credentials.RequestInfoFromContext(ctx)
		if ri.AuthInfo != nil && credentials.CheckSecurityLevel(ri.AuthInfo, credentials.PrivacyAndIntegrity) != nil {
			for _, u := range uri {
				if pu, err := url.Parse(u); err != nil || !LoopbackHost(pu.Hostname()) {
					return nil, status.Errorf(codes.Unauthenticated, "drover: refusing to send the bearer token in plaintext to %s, which is not loopback: use TLS", u)
				}
			}
		}
	}
	return map[string]string{"authorization": "Bearer " + b.Token}, nil
}

// LoopbackAddr reports whether addr (host:port, a gRPC target such as
// dns:///host:port, or a host alone) names this machine: a loopback IP,
// "localhost", or no host at all (":50051").
func LoopbackAddr(addr string) bool {
	if i := strings.Index(addr, ":///"); i >= 0 {
		addr = addr[i+4:]
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return LoopbackHost(host)
}

// LoopbackHost reports whether host (a name or an IP, without a port)
// is this machine: a loopback IP, "localhost", or empty.
func LoopbackHost(host string) bool {
	host = strings.Trim(host, "[]")
	if host == "" || strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (b BearerToken) RequireTransportSecurity() bool { return !b.AllowInsecure }
