package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServePlaceAddr runs drover serve with -place-addr (a port alone,
// so loopback) and a token, and queries the fast listener with drover
// place: a placement and the status, answered as on -addr; a call
// without the token is refused; the decisions reach the decision log.
func TestServePlaceAddr(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testServeConfig()
	cfg.PlaceAddr, cfg.TokenFile = ":0", token
	cfg.LogDir, cfg.LogSeal = filepath.Join(dir, "log"), time.Hour
	_, out, stop := startServe(t, cfg)
	m := regexp.MustCompile(`fast calls on (127\.0\.0\.1:\d+),`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no fast address on loopback in:\n%s", out.String())
	}
	fast := m[1]
	code, o, e := drover(t, "place", "-addr", fast, "-token-file", token, "-nodes", "16", "-workers", "6")
	if code != 0 || !strings.Contains(o, "policy heuristic:strn (fallback: not-converged)") || strings.Count(o, "worker ") != 6 {
		t.Errorf("place on the fast listener: exit %d\n%s%s", code, o, e)
	}
	code, o, e = drover(t, "place", "-addr", fast, "-token-file", token, "-status")
	if code != 0 || !strings.Contains(o, "active heuristic:strn") || !strings.Contains(o, "heuristic:1") {
		t.Errorf("place -status on the fast listener: exit %d\n%s%s", code, o, e)
	}
	code, _, e = drover(t, "place", "-addr", fast, "-nodes", "4")
	if code != 1 || !strings.Contains(e, "Unauthenticated") {
		t.Errorf("no token on the fast listener: exit %d, %s", code, e)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	code, o, e = drover(t, "eval", "--log", filepath.Join(dir, "log"))
	if code != 0 || !strings.Contains(o, "heuristic:strn") {
		t.Errorf("eval --log: exit %d\n%s%s", code, o, e)
	}
}
