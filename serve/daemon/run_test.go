package daemon_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/serve/daemon"
	"github.com/drover-sched/drover/serve/daemon/daemontest"
)

// testConfig is a server on a free loopback gRPC port, without metrics,
// with short deadlines and no reload polling to speak of.
func testConfig() daemon.Config {
	c := daemon.Defaults()
	c.Addr, c.MetricsAddr, c.Poll, c.MaxRequestBytes, c.ShutdownGrace = "127.0.0.1:0", "", time.Hour, 1<<20, 5*time.Second
	return c
}

// TestRunHealthz: the metrics listener's /healthz answers 200 "ok"
// while the server serves (the probe of deployments whose gRPC port needs
// TLS, which the kubelet's gRPC probe cannot speak).
func TestRunHealthz(t *testing.T) {
	c := testConfig()
	c.MetricsAddr = "127.0.0.1:0"
	addrs, _, stop := daemontest.Start(t, c)
	defer stop()
	resp, err := http.Get("http://" + addrs.Metrics + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != "ok" {
		t.Errorf("/healthz: %s %q, want 200 ok", resp.Status, b)
	}
}

// Issue 18: `serve -token-file` without TLS was accepted on any address,
// which takes the bearer token in plaintext. It is refused off loopback
// (for the gRPC and the fast listener) and accepted on loopback with a
// warning.
func TestRunTokenWithoutTLS(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.7:0", "example.com:0"} {
		c := testConfig()
		c.Addr, c.TokenFile = addr, token
		err := daemon.Run(context.Background(), c)
		if err == nil || !strings.Contains(err.Error(), "plaintext") || !strings.Contains(err.Error(), "-tls-cert") {
			t.Errorf("-addr %s -token-file without TLS: %v, want a refusal naming -tls-cert", addr, err)
		}
	}
	c := testConfig()
	c.PlaceAddr, c.TokenFile = "0.0.0.0:0", token
	err := daemon.Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "-place-addr") || !strings.Contains(err.Error(), "-tls-cert") {
		t.Errorf("-place-addr 0.0.0.0:0 -token-file without TLS: %v, want a refusal naming -place-addr and -tls-cert", err)
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", ":0"} {
		c := testConfig()
		c.Addr, c.TokenFile = addr, token
		_, out, stop := daemontest.Start(t, c)
		if !strings.Contains(out.String(), "warning: -token-file without TLS") {
			t.Errorf("-addr %s: no warning:\n%s", addr, out)
		}
		if err := stop(); err != nil {
			t.Error(err)
		}
	}
}

// TestRunRefusesBadTLS: a key without a certificate, or a client CA
// without either, is refused before anything listens.
func TestRunRefusesBadTLS(t *testing.T) {
	for _, c := range []daemon.Config{{TLSKey: "k"}, {TLSCert: "c"}, {TLSClientCA: "ca"}} {
		cfg := testConfig()
		cfg.TLSCert, cfg.TLSKey, cfg.TLSClientCA = c.TLSCert, c.TLSKey, c.TLSClientCA
		if err := daemon.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "go together") {
			t.Errorf("%+v: %v, want a refusal", c, err)
		}
	}
}

// Issue 18: `-addr :P` bound every interface while `-extender-addr :P`
// bound loopback. A port alone binds 127.0.0.1 for every listener.
func TestRunPortAloneIsLoopback(t *testing.T) {
	c := testConfig()
	c.Addr, c.MetricsAddr, c.ExtenderAddr, c.PlaceAddr = ":0", ":0", ":0", ":0"
	addrs, _, stop := daemontest.Start(t, c)
	defer stop()
	for _, a := range []string{addrs.GRPC, addrs.Metrics, addrs.Extender, addrs.Fast} {
		if host, _, _ := net.SplitHostPort(a); host != "127.0.0.1" {
			t.Errorf("listens on %q, want 127.0.0.1 (%+v)", a, addrs)
		}
	}
}

// TestRunStateDir: with StateDir the live state is restored at start and
// saved at shutdown, and daemon.Run says so.
func TestRunStateDir(t *testing.T) {
	c := testConfig()
	c.StateDir = t.TempDir()
	for i, want := range []string{"(0 nodes, 0 jobs restored)", "(0 nodes, 0 jobs restored)"} {
		_, out, stop := daemontest.Start(t, c)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(c.StateDir, "state.json")
		if !strings.Contains(out.String(), "live state "+path+" "+want) || !strings.Contains(out.String(), "live state saved to "+path) {
			t.Errorf("run %d:\n%s", i, out)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("run %d: %v", i, err)
		}
	}
}

func TestLoopbackDefault(t *testing.T) {
	for in, want := range map[string]string{
		":8888": "127.0.0.1:8888", "8888": "127.0.0.1:8888", "0.0.0.0:8888": "0.0.0.0:8888",
		"localhost:1": "localhost:1", "[::1]:8888": "[::1]:8888", "127.0.0.1:0": "127.0.0.1:0",
	} {
		if got := daemon.LoopbackDefault(in); got != want {
			t.Errorf("daemon.LoopbackDefault(%q) = %q, want %q", in, got, want)
		}
	}
}

// Issue 32: StateEvery 0 with a StateDir panicked in time.NewTicker
// after the server had said it serves; daemon.Run refuses it before listening.
func TestRunRefusesZeroStateEvery(t *testing.T) {
	c := testConfig()
	c.StateDir, c.StateEvery = t.TempDir(), 0
	var out strings.Builder
	c.Out = &out
	err := daemon.Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "-state-every") {
		t.Errorf("Run: %v, want a refusal naming -state-every", err)
	}
	if out.Len() != 0 {
		t.Errorf("printed before refusing:\n%s", out.String())
	}
}
