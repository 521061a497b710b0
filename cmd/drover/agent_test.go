package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/drover-sched/drover/serve/proto"
)

// agentSink is a Telemetry server that checks the bearer token, passes
// every message on and acknowledges it.
type agentSink struct {
	pb.UnimplementedTelemetryServer
	token string
	msgs  chan *pb.AgentMessage
}

func (s *agentSink) Stream(st pb.Telemetry_StreamServer) error {
	md, _ := metadata.FromIncomingContext(st.Context())
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer "+s.token {
		return status.Errorf(codes.Unauthenticated, "token %q", got)
	}
	for {
		m, err := st.Recv()
		if err != nil {
			return nil
		}
		s.msgs <- m
		if err := st.Send(&pb.AgentAck{AckedSeq: m.Seq, StaleAfterS: 60}); err != nil {
			return err
		}
	}
}

// lockedBuffer is a bytes.Buffer the agent's logger and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// drover agent on serve/agent's node-a fixture against a fake server: a hello
// and samples arrive, and SIGINT stops it cleanly.
func TestAgentCommand(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	sink := &agentSink{token: "s3cret", msgs: make(chan *pb.AgentMessage, 100)}
	pb.RegisterTelemetryServer(srv, sink)
	go srv.Serve(lis)
	defer srv.Stop()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"agent", "-server", lis.Addr().String(), "-node", "node-a",
			"-root", "../../serve/agent/testdata/node-a/t0", "-interval", "20ms", "-rack", "2", "-nic-gbps", "100",
			"-iter-addr", "127.0.0.1:0", "-token-file", tokenFile}, &stdout, &stderr)
	}()
	next := func() *pb.AgentMessage {
		t.Helper()
		select {
		case m := <-sink.msgs:
			return m
		case code := <-done:
			t.Fatalf("drover agent exited with %d:\n%s", code, stderr.String())
		case <-time.After(testDeadline):
			t.Fatalf("no message within %v:\n%s", testDeadline, stderr.String())
		}
		return nil
	}
	hello := next().GetHello()
	if hello.GetNodeId() != "node-a" || hello.GetCpus() != 4 || hello.GetMemoryGib() != 16 || hello.GetRack() != 2 ||
		hello.GetNicGbps() != 100 || hello.GetIntervalS() != 0.02 || hello.GetGpuTelemetry() {
		t.Errorf("hello %v", hello)
	}
	for i := range 2 {
		m := next()
		if m.Seq != uint64(i+1) || m.GetSample().GetMemUsed() != 0.25 {
			t.Errorf("message %v, want sample %d of node-a's t0 (25%% memory used)", m, i+1)
		}
	}

	// The node-a fixture never changes, so the process is the only one
	// that can stop it: SIGINT, as a terminal would send.
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, stderr.String())
		}
	case <-time.After(testDeadline):
		t.Fatalf("drover agent did not stop on SIGINT:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "drover agent: stopped:") {
		t.Errorf("stdout %q lacks the summary", stdout.String())
	}
	for _, w := range []string{"agent starting", "iteration endpoint listening", "telemetry stream open", "agent stopped"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, stderr.String())
		}
	}
}

func TestAgentCommandRefusesBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"stray argument", []string{"agent", "extra"}, 2, "unexpected arguments"},
		{"unknown flag", []string{"agent", "-nope"}, 2, "flag provided but not defined"},
		{"zero buffer", []string{"agent", "-buffer", "0"}, 1, "-buffer"},
		{"zero interval", []string{"agent", "-interval", "0s"}, 1, "-interval"},
		{"missing token file", []string{"agent", "-token-file", "/nonexistent/token"}, 1, "/nonexistent/token"},
		{"missing root", []string{"agent", "-root", "/nonexistent", "-iter-addr", ""}, 1, "proc/stat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d naming %q", code, stderr.String(), tt.code, tt.want)
			}
		})
	}
	var stdout bytes.Buffer
	run([]string{"help"}, &stdout, &stdout)
	if !strings.Contains(stdout.String(), "agent      stream this node's telemetry") {
		t.Errorf("help lacks the agent:\n%s", stdout.String())
	}
}
