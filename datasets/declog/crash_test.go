package declog

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// crashEnv names the directory the crashing child process writes to.
const crashEnv = "DECLOG_CRASH_DIR"

// crashed is how many records the child appends before it kills itself:
// with 20 records a file, 60 are sealed in 3 files and 13 are in the
// unsealed fourth (of which 10 were written as a row group, and all 13 to
// its write-ahead log).
const crashed = 73

// TestCrashHelper is the child of TestCrash: it appends records, waits
// until the queue has written them to the write-ahead log, and kills
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
	if err := w.drain(); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // wait for the signal
}

// TestCrash kills a writing process without Close: the sealed files are
// intact and readable, the unsealed one is skipped and reported, and a new
// Writer seals the unsealed file's records from its write-ahead log (all
// but a torn last frame, which it reports) and continues after it.
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
	wal := filepath.Join(dir, "decisions-000004.wal")
	if diff := cmp.Diff([]string{tmp, wal}, log.Partial); diff != "" {
		t.Errorf("partial files (-want,+got):\n%s", diff)
	}
	if st, err := os.Stat(tmp); err != nil || st.Size() == 0 {
		t.Errorf("the unsealed file should hold the written row group: %v", err)
	}
	// The unsealed file does not decode (it has no footer): an error, no panic.
	if _, err := ReadFile(tmp); err == nil {
		t.Error("ReadFile of the unsealed file: no error")
	}
	// A torn last frame: the process died inside a write.
	torn := []byte{40, 0, 0, 0, 1, 2, 3}
	f, err := os.OpenFile(wal, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(torn)
	f.Close()
	// A restarted writer seals the 13 records of the write-ahead log as
	// decisions-000004.parquet, reports the torn bytes, and writes after it.
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Recovery{{File: filepath.Join(dir, "decisions-000004.parquet"), Records: 13, LostBytes: int64(len(torn))}}
	if diff := cmp.Diff(want, w.Recovered(), cmpopts.IgnoreFields(Recovery{}, "Lost")); diff != "" {
		t.Errorf("recovered (-want,+got):\n%s", diff)
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
	if diff := cmp.Diff(append(recs[:crashed:crashed], more...), log.Records); diff != "" {
		t.Errorf("records after restart (-want,+got):\n%s", diff)
	}
	if len(log.Files) != 5 || len(log.Partial) != 0 {
		t.Errorf("files %v, partial %v; want 5 files, none partial", log.Files, log.Partial)
	}
}

// TestRecoverUnreadable: what a new Writer cannot recover stays in place
// and is reported with its size, naming it; a write-ahead log beside its
// sealed file (a crash between the seal and the log's removal) is removed;
// sealed files are never touched.
func TestRecoverUnreadable(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	recs := makeRecords(4)
	if err := w.Append(recs...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	sealed, err := os.ReadFile(filepath.Join(dir, FileName(1)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"decisions-000001.wal":         "DWAL stale: the sealed file has it all",
		"decisions-000002.parquet.tmp": "PAR1 an unsealed file of an older writer",
		"decisions-000003.wal":         "XXXX not a write-ahead log",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err = NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Recovery{
		{File: filepath.Join(dir, "decisions-000002.parquet.tmp"), LostBytes: int64(len(files["decisions-000002.parquet.tmp"]))},
		{File: filepath.Join(dir, "decisions-000003.wal"), LostBytes: int64(len(files["decisions-000003.wal"]))},
	}
	got := w.Recovered()
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Recovery{}, "Lost")); diff != "" {
		t.Errorf("recovered (-want,+got):\n%s", diff)
	}
	for i := range got {
		if got[i].Lost == "" {
			t.Errorf("%s: no reason for the lost bytes", got[i].File)
		}
	}
	if err := w.Append(recs...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{filepath.Join(dir, FileName(4))}, w.Files()); diff != "" {
		t.Errorf("files (-want,+got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "decisions-000001.wal")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale write-ahead log: %v, want removed", err)
	}
	if again, err := os.ReadFile(filepath.Join(dir, FileName(1))); err != nil || string(again) != string(sealed) {
		t.Errorf("sealed file changed: %v", err)
	}
	log, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append(recs[:4:4], recs...), log.Records); diff != "" {
		t.Errorf("records (-want,+got):\n%s", diff)
	}
}

// killEnv names the directory the child of TestKillAnywhere writes to.
const killEnv = "DECLOG_KILL_DIR"

// TestKillHelper is the child of TestKillAnywhere: it appends numbered
// records until it is killed.
func TestKillHelper(t *testing.T) {
	dir := os.Getenv(killEnv)
	if dir == "" {
		t.Skip("run by TestKillAnywhere")
	}
	w, err := NewWriter(dir, WithMaxRecords(300), WithRowGroupRecords(64))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if err := w.Append(Decision{Time: epoch, RequestID: strconv.Itoa(i), JobID: "j", Source: "heuristic:strn"}.Record()); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			// The first record is in the write-ahead log before the
			// parent may kill: on a loaded machine the 200 ms it waits
			// had passed before the queue wrote anything.
			if err := w.drain(); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "started"), nil, 0o644)
		}
		if i%200 == 0 {
			time.Sleep(time.Millisecond) // let the queue drain: few drops
		}
	}
}

// TestKillAnywhere kills a writing process at arbitrary moments (inside a
// frame, a row group, a seal): the next Writer always opens, reports no
// unreadable file, and the log then holds the appended records in order,
// from the first on, each once, with gaps only where the queue dropped.
func TestKillAnywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	for round := range 3 {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$")
		cmd.Env = append(os.Environ(), killEnv+"="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Ten minutes: a race-built child on a loaded machine can take
		// seconds to start.
		for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
				break
			}
		}
		time.Sleep(time.Duration(200+400*round) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		w, err := NewWriter(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range w.Recovered() {
			if r.Records == 0 && r.LostBytes > 0 && r.Lost != "" && !strings.Contains(r.Lost, "torn") {
				t.Errorf("round %d: unreadable: %v", round, r)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		log, err := ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(log.Partial) != 0 {
			t.Errorf("round %d: unsealed files after recovery: %v", round, log.Partial)
		}
		prev := -1
		for _, r := range log.Records {
			i, err := strconv.Atoi(r.Decision.RequestID)
			if err != nil || i <= prev {
				t.Fatalf("round %d: record %q after %d", round, r.Decision.RequestID, prev)
			}
			prev = i
		}
		if len(log.Records) == 0 || log.Records[0].Decision.RequestID != "0" {
			t.Errorf("round %d: %d records, want the first appended (0) first", round, len(log.Records))
		}
		t.Logf("round %d: %d records in %d files (last appended id seen %d); recovered %v", round, len(log.Records), len(log.Files), prev, w.Recovered())
	}
}
