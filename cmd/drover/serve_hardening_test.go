package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 18: `serve -token-file` without TLS was accepted on any address,
// which takes the bearer token in plaintext. It is refused off loopback
// and accepted on loopback with a warning.
func TestServeTokenWithoutTLS(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.7:0", "example.com:0"} {
		cfg := testServeConfig()
		cfg.addr, cfg.tokenFile = addr, token
		var out bytes.Buffer
		err := serveUntil(context.Background(), cfg, nil, &out)
		if err == nil || !strings.Contains(err.Error(), "plaintext") || !strings.Contains(err.Error(), "-tls-cert") {
			t.Errorf("-addr %s -token-file without TLS: %v, want a refusal naming -tls-cert", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", ":0"} {
		cfg := testServeConfig()
		cfg.addr, cfg.tokenFile = addr, token
		_, out, stop := startServe(t, cfg)
		if !strings.Contains(out.String(), "warning: -token-file without TLS") {
			t.Errorf("-addr %s: no warning:\n%s", addr, out)
		}
		if err := stop(); err != nil {
			t.Error(err)
		}
	}
}

// Issue 18: `-addr :P` bound every interface while `-extender-addr :P`
// bound loopback. A port alone binds 127.0.0.1 for all three listeners.
func TestServePortAloneIsLoopback(t *testing.T) {
	cfg := testServeConfig()
	cfg.addr, cfg.metricsAddr, cfg.extenderAddr = ":0", ":0", ":0"
	addrs, out, stop := startServe(t, cfg)
	defer stop()
	for _, a := range addrs {
		if host, _, _ := net.SplitHostPort(a); host != "127.0.0.1" {
			t.Errorf("listens on %s, want 127.0.0.1", a)
		}
	}
	if !strings.Contains(out.String(), "extender on 127.0.0.1:") {
		t.Errorf("extender not on loopback:\n%s", out)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:50051": true, "localhost:50051": true, "LOCALHOST:1": true, "[::1]:50051": true, ":50051": true,
		"127.8.9.1:1": true, "dns:///localhost:50051": true, "passthrough:///127.0.0.1:1": true, "localhost": true,
		"0.0.0.0:50051": false, "[::]:1": false, "10.0.0.1:50051": false, "sched.example.com:443": false,
		"dns:///sched.example.com:443": false, "localhost.example.com:1": false,
	} {
		if got := isLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
