package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServeHealthz: the metrics listener's /healthz answers 200 "ok"
// while the server serves (the probe of deployments whose gRPC port needs
// TLS, which the kubelet's gRPC probe cannot speak).
func TestServeHealthz(t *testing.T) {
	cfg := testServeConfig()
	cfg.metricsAddr = "127.0.0.1:0"
	addrs, _, stop := startServe(t, cfg)
	defer stop()
	resp, err := http.Get("http://" + addrs[1] + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != "ok" {
		t.Errorf("/healthz: %s %q, want 200 ok", resp.Status, b)
	}
}
