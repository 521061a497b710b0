package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeAndPlace runs drover serve on loopback ports and queries it
// with drover place: a placement, the status, a JSON request file, the
// token check, and /metrics; then shuts it down as SIGTERM would.
func TestServeAndPlace(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testServeConfig()
	cfg.MetricsAddr, cfg.TokenFile = "127.0.0.1:0", token
	cfg.LogDir, cfg.LogSeal = filepath.Join(dir, "log"), time.Hour
	addrs, out, stop := startServe(t, cfg)

	code, o, e := drover(t, "place", "-addr", addrs[0], "-token-file", token, "-nodes", "16", "-workers", "6")
	if code != 0 || !strings.Contains(o, "policy heuristic:strn (fallback: not-converged)") || strings.Count(o, "worker ") != 6 {
		t.Errorf("place: exit %d\n%s%s", code, o, e)
	}
	code, o, e = drover(t, "place", "-addr", addrs[0], "-token-file", token, "-status")
	if code != 0 || !strings.Contains(o, "active heuristic:strn") || !strings.Contains(o, "heuristic:1") {
		t.Errorf("place -status: exit %d\n%s%s", code, o, e)
	}
	code, o, _ = drover(t, "place", "-nodes", "4", "-workers", "2", "-arch", "ps", "-ps", "1", "-print-request")
	req := filepath.Join(dir, "req.json")
	if code != 0 || os.WriteFile(req, []byte(o), 0o644) != nil {
		t.Fatalf("print-request: exit %d", code)
	}
	code, o, e = drover(t, "place", "-addr", addrs[0], "-token-file", token, "-request", req)
	if code != 0 || !strings.Contains(o, "ps       0 -> node-") {
		t.Errorf("place -request: exit %d\n%s%s", code, o, e)
	}
	code, _, e = drover(t, "place", "-addr", addrs[0], "-nodes", "4")
	if code != 1 || !strings.Contains(e, "Unauthenticated") {
		t.Errorf("no token: exit %d, %s", code, e)
	}
	resp, err := http.Get("http://" + addrs[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `drover_decisions_total{fallback="not-converged",source="heuristic",version="v0"} 2`) {
		t.Errorf("metrics:\n%s", body)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "shutting down") {
		t.Errorf("serve output:\n%s", out.String())
	}
	// Every decision reached the Parquet log, sealed on shutdown, and
	// drover eval --log summarises it.
	code, o, e = drover(t, "eval", "--log", filepath.Join(dir, "log"))
	if code != 0 || !strings.Contains(o, "heuristic:strn") {
		t.Errorf("eval --log: exit %d\n%s%s", code, o, e)
	}
}

func TestServeRefusesBadFlags(t *testing.T) {
	code, _, e := drover(t, "serve", "-tls-cert", "x.pem")
	if code != 1 || !strings.Contains(e, "-tls-cert and -tls-key go together") {
		t.Errorf("exit %d: %s", code, e)
	}
	code, _, e = drover(t, "serve", "-heuristic", "nope")
	if code != 1 || !strings.Contains(e, `heuristic "nope"`) {
		t.Errorf("exit %d: %s", code, e)
	}
}
