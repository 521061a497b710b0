package longtest

import (
	"os"
	"testing"
)

// Env is the environment variable that turns the long tests on when set
// to 1.
const Env = "DROVER_LONG"

// Enabled reports whether the long tests run: DROVER_LONG=1.
func Enabled() bool { return os.Getenv(Env) == "1" }

// Skip skips tb, saying why the test is long and how to run it, unless the
// long tests run.
func Skip(tb testing.TB, why string) {
	tb.Helper()
	if !Enabled() {
		tb.Skipf("long test (%s): run with %s=1, or make test-long", why, Env)
	}
}
