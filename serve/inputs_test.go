package serve

import (
	"errors"
	"testing"

	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/internal/testpki"
)

// TestLoadTLSNotRegular: -tls-cert, -tls-key and -tls-client-ca of a
// device are refused at once, naming it (before: read until memory ran
// out).
func TestLoadTLSNotRegular(t *testing.T) {
	p, err := testpki.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTLS(p.ServerCert, p.ServerKey, p.CA); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][3]string{
		{"/dev/zero", p.ServerKey, ""},
		{p.ServerCert, "/dev/zero", ""},
		{p.ServerCert, p.ServerKey, "/dev/zero"},
	} {
		if _, err := LoadTLS(args[0], args[1], args[2]); !errors.Is(err, inputfile.ErrNotRegular) {
			t.Errorf("LoadTLS%q: %v, want not a regular file", args, err)
		}
	}
}
