package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 18: `place -util 5` and `-model bogus` were sent to the server.
// The flags are checked first, naming the flag (and, for -model, the
// known profiles).
func TestPlaceRefusesBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"util above 1", []string{"-util", "5"}, "-util 5: want a share in [0, 1]"},
		{"negative util", []string{"-util", "-0.1"}, "-util -0.1"},
		{"NaN util", []string{"-util", "NaN"}, "-util NaN"},
		{"unknown model", []string{"-model", "bogus"}, `-model "bogus": unknown, want one of bert, cifar10, deepspeech2, imagenet, ncf, yolov3`},
		{"no nodes", []string{"-nodes", "0"}, "-nodes 0: want > 0"},
		{"no GPUs", []string{"-gpus", "0"}, "-gpus 0"},
		{"free above GPUs", []string{"-gpus", "4", "-free", "5"}, "-free 5"},
		{"no workers", []string{"-workers", "0"}, "-workers 0"},
		{"negative ps", []string{"-ps", "-1"}, "-ps -1"},
		{"negative duration", []string{"-duration", "-5"}, "-duration -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// An address nothing listens on: the flags fail before any dial.
			code, _, e := drover(t, append([]string{"place", "-addr", "127.0.0.1:1", "-print-request"}, tt.args...)...)
			if code != 1 || !strings.Contains(e, tt.want) {
				t.Errorf("exit %d: %s; want 1 with %q", code, e, tt.want)
			}
		})
	}
}

// Issue 18: `place` exited 0 when the server answered "not placed". It
// prints the answer and fails with exit status 3.
func TestPlaceNotPlacedFails(t *testing.T) {
	addrs, _, stop := startServe(t, testServeConfig())
	defer stop()
	var o, e bytes.Buffer
	err := runPlace([]string{"-addr", addrs[0], "-nodes", "2", "-gpus", "4", "-workers", "64"}, &o, &e)
	var np *notPlacedError
	if !errors.As(err, &np) || np.ExitCode() != 3 || !strings.Contains(o.String(), "not placed") {
		t.Fatalf("runPlace: %v\n%s%s; want notPlacedError (exit 3)", err, &o, &e)
	}
	if code, _, e := drover(t, "place", "-addr", addrs[0], "-nodes", "2", "-gpus", "4", "-workers", "64"); code != 3 || !strings.Contains(e, "not placed") {
		t.Errorf("exit %d: %s; want 3", code, e)
	}
	if code, _, e := drover(t, "place", "-addr", addrs[0], "-nodes", "4", "-workers", "4"); code != 0 {
		t.Errorf("placed job: exit %d: %s", code, e)
	}
}

// Issue 18: `place -token-file` sent the token in plaintext to any
// address. Without -tls-ca it is refused off loopback, before dialling,
// and sent with a warning on loopback.
func TestPlaceTokenWithoutTLS(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"192.0.2.7:50051", "sched.example.com:50051", "0.0.0.0:50051"} {
		code, _, e := drover(t, "place", "-addr", addr, "-token-file", token, "-timeout", "100ms")
		if code != 1 || !strings.Contains(e, "plaintext") || !strings.Contains(e, "-tls-ca") {
			t.Errorf("-addr %s: exit %d: %s; want a refusal naming -tls-ca", addr, code, e)
		}
	}
	cfg := testServeConfig()
	cfg.TokenFile = token
	addrs, _, stop := startServe(t, cfg)
	defer stop()
	code, _, e := drover(t, "place", "-addr", addrs[0], "-token-file", token)
	if code != 0 || !strings.Contains(e, "warning: -token-file without -tls-ca") {
		t.Errorf("loopback: exit %d: %s; want 0 with a warning", code, e)
	}
}
