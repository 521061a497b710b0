package declog

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// crashEnv names the directory the crashing child process writes to.
const crashEnv = "DECLOG_CRASH_DIR"

// crashed is how many records the child appends before it kills itself:
// with 20 records a file, 60 are sealed in 3 files and 13 are in the
// unsealed fourth (of which 10 were written as a row group).
const crashed = 73

// TestCrashHelper is the child of TestCrash: it appends records and kills
// itself with SIGKILL, never closing the Writer.
func TestCrashHelper(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("run by TestCrash")
	}
	w, err := NewWriter(dir, WithMaxRecords(20), WithRowGroupRecords(10))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(makeRecords(crashed)...); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // wait for the signal
}

// TestCrash kills a writing process without Close: the sealed files are
// intact and readable, the unsealed one is skipped and reported, and a new
// Writer continues after it.
func TestCrash(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v, want killed by SIGKILL; output:\n%s", err, out)
	}
	log, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	recs := makeRecords(crashed)
	if diff := cmp.Diff(recs[:60], log.Records); diff != "" {
		t.Errorf("records of the sealed files (-want,+got):\n%s", diff)
	}
	tmp := filepath.Join(dir, "decisions-000004.parquet.tmp")
	if diff := cmp.Diff([]string{tmp}, log.Partial); diff != "" {
		t.Errorf("partial files (-want,+got):\n%s", diff)
	}
	if st, err := os.Stat(tmp); err != nil || st.Size() == 0 {
		t.Errorf("the unsealed file should hold the written row group: %v", err)
	}
	// The unsealed file does not decode (it has no footer): an error, no panic.
	if _, err := ReadFile(tmp); err == nil {
		t.Error("ReadFile of the unsealed file: no error")
	}
	// A restarted writer leaves it alone and writes after it.
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	more := makeRecords(5)
	if err := w.Append(more...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{filepath.Join(dir, "decisions-000005.parquet")}, w.Files()); diff != "" {
		t.Errorf("restarted writer's files (-want,+got):\n%s", diff)
	}
	log, err = ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append(recs[:60:60], more...), log.Records); diff != "" {
		t.Errorf("records after restart (-want,+got):\n%s", diff)
	}
}
