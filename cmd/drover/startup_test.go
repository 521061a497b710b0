package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// maxInitAllocs is the most heap allocations one of Drover's own
// packages may make while it is initialised. Every drover command pays
// every linked package's initialisers, whatever it runs, so tables,
// embedded files and models are built on first use (sync.OnceValue), not
// in package-level variables: before that, forecast.Default,
// background.Default, jitter.Default and datasets.DefaultSynthParams
// decoded their embedded JSON at start-up, 398, 106, 81 and 226
// allocations (0.6 ms of a 7.5 ms start-up's initialisers, measured
// with GODEBUG=inittrace=1). The largest own package now is
// datasets/declog, whose Parquet column tables are package-level
// variables (25 allocations).
const maxInitAllocs = 40

// initExempt are own packages whose initialisers are generated code:
// serve/proto registers its descriptors with protobuf (59 allocations,
// one set per message and service), and the package under test also
// holds the test files' variables.
var initExempt = map[string]bool{
	"github.com/drover-sched/drover/serve/proto": true,
	"github.com/drover-sched/drover/cmd/drover":  true,
}

// TestInitAllocs runs this test binary as drover version with
// GODEBUG=inittrace=1 and checks that none of Drover's own packages
// allocates more than maxInitAllocs objects in its initialisers. It
// counts allocations, which are the same on every run, not times, which
// are not.
func TestInitAllocs(t *testing.T) {
	cmd := exec.Command(os.Args[0], "version")
	cmd.Env = append(os.Environ(), execEnv+"=1", "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("drover version: %v\n%s", err, stderr.String())
	}
	own := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init PKG @T ms, T ms clock, B bytes, N allocs
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[10] != "allocs" {
			continue
		}
		pkg := f[1]
		if !strings.HasPrefix(pkg, "github.com/drover-sched/drover/") {
			continue
		}
		own++
		n, err := strconv.Atoi(f[9])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", sc.Text(), err)
		}
		if n > maxInitAllocs && !initExempt[pkg] {
			t.Errorf("%s allocates %d objects at initialisation, want at most %d: build its tables on first use (sync.OnceValue)", pkg, n, maxInitAllocs)
		}
	}
	if own == 0 {
		t.Fatalf("no init lines of Drover's packages in GODEBUG=inittrace=1 output:\n%s", stderr.String())
	}
}
