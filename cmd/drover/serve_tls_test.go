package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drover-sched/drover/internal/testpki"
)

// TestServeMutualTLS runs drover serve with a certificate, a client CA and
// a token, and checks both front ends end to end: drover place reaches the
// gRPC server only with the CA, a client certificate and the token; the
// kube-scheduler extender answers HTTPS calls that present a client
// certificate and refuses the others (no certificate, plaintext).
func TestServeMutualTLS(t *testing.T) {
	dir := t.TempDir()
	pki, err := testpki.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testServeConfig()
	cfg.ExtenderAddr = "127.0.0.1:0"
	cfg.TLSCert, cfg.TLSKey, cfg.TLSClientCA, cfg.TokenFile = pki.ServerCert, pki.ServerKey, pki.CA, token
	addrs, out, stop := startServe(t, cfg)
	if !strings.Contains(out.String(), "tls true, token true") {
		t.Errorf("banner: %s", out.String())
	}
	if strings.Contains(out.String(), "warning") {
		t.Errorf("with a client CA the extender is authenticated, yet: %s", out.String())
	}

	// gRPC.
	mtls := []string{"-addr", addrs[0], "-tls-ca", pki.CA, "-tls-cert", pki.ClientCert, "-tls-key", pki.ClientKey}
	if code, o, e := drover(t, append([]string{"place", "-token-file", token}, mtls...)...); code != 0 || !strings.Contains(o, "heuristic:strn") {
		t.Errorf("place over mTLS with the token: exit %d\n%s%s", code, o, e)
	}
	if code, _, _ := drover(t, append([]string{"place"}, mtls...)...); code == 0 {
		t.Error("place without the token succeeded")
	}
	if code, _, _ := drover(t, "place", "-addr", addrs[0], "-tls-ca", pki.CA, "-token-file", token); code == 0 {
		t.Error("place without a client certificate succeeded")
	}

	// drover bench place's lean client does its own TLS (ALPN h2) and
	// sends the token as a header: every call answered; without the token
	// every call fails Unauthenticated.
	for _, c := range []struct {
		token bool
		want  string
	}{{true, `"ok": 20`}, {false, `"Unauthenticated": 20`}} {
		args := append([]string{"bench", "place", "-client", "h2", "-rate", "200", "-n", "20", "-warmup", "0", "-json"}, mtls...)
		if c.token {
			args = append(args, "-token-file", token)
		}
		code, o, e := drover(t, args...)
		if c.token && code != 0 {
			t.Errorf("bench over mTLS with the token: exit %d\n%s%s", code, o, e)
		} else if c.token && !strings.Contains(o, c.want) {
			t.Errorf("bench over mTLS with the token: want %s in\n%s", c.want, o)
		}
		if !c.token && code == 0 {
			t.Errorf("bench without the token: exit 0 (its first, decoded call should fail)\n%s", o)
		}
	}

	// The extender.
	m := regexp.MustCompile(`extender on (127\.0\.0\.1:\d+);`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no extender address in:\n%s", out.String())
	}
	args := `{"Pod":{"metadata":{"name":"w-0","annotations":{"drover.io/job-id":"j","drover.io/workers":"1"}},` +
		`"spec":{"containers":[{"name":"t","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},` +
		`"Nodes":{"items":[{"metadata":{"name":"a"},"status":{"allocatable":{"nvidia.com/gpu":"4"}}}]}}`
	post := func(scheme string, withCert bool) (int, error) {
		c := &http.Client{Timeout: testDeadline, Transport: &http.Transport{TLSClientConfig: pki.ClientTLS(withCert)}}
		defer c.CloseIdleConnections()
		resp, err := c.Post(scheme+"://"+m[1]+"/filter", "application/json", strings.NewReader(args))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := post("https", true); err != nil || code != http.StatusOK {
		t.Errorf("extender over mTLS: %d, %v", code, err)
	}
	if code, err := post("https", false); err == nil {
		t.Errorf("extender without a client certificate answered %d", code)
	}
	if code, err := post("http", false); err == nil && code == http.StatusOK {
		t.Error("extender answered plaintext")
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
