package runlog

import (
	"bufio"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock starts at 1700000000 s and advances by step on every call.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Unix(1700000000, 0)
	return func() time.Time {
		now := t
		t = t.Add(step)
		return now
	}
}

func TestCSVRoundTrip(t *testing.T) {
	rows := []Row{
		{Step: 0, Tag: TagEpisodicReturn, Value: 21, WallTime: 1700000000.5},
		{Step: 512, Tag: TagLearningRate, Value: 2.5e-4, WallTime: 1700000001.125},
		{Step: 1024, Tag: TagExplainedVariance, Value: math.Inf(-1), WallTime: 1},
		{Step: 1 << 40, Tag: `odd,"tag"`, Value: 0.1 + 0.2, WallTime: 0},
		{Step: -1, Tag: "", Value: math.Inf(1), WallTime: -2},
	}
	b := []byte(CSVHeader + "\n")
	for _, r := range rows {
		b = AppendCSVRow(b, r)
	}
	got, err := DecodeCSV(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rows, got); diff != "" {
		t.Errorf("(-want,+got)\n%s", diff)
	}
	nan, err := DecodeCSV(AppendCSVRow([]byte(CSVHeader+"\n"), Row{Value: math.NaN()}))
	if err != nil || len(nan) != 1 || !math.IsNaN(nan[0].Value) {
		t.Errorf("NaN round trip: %v, %v", nan, err)
	}
}

func TestDecodeCSVErrors(t *testing.T) {
	h := CSVHeader + "\n"
	tests := []struct {
		name string
		data string
		rows int
		want error
		line string // in the error message
	}{
		{"header only", h, 0, nil, ""},
		{"empty", "", 0, ErrTruncated, ""},
		{"wrong header", "step,tag,value\n", 0, ErrCorrupt, "line 1"},
		{"cut row", h + "1,a,2,3\n4,b,5", 1, ErrTruncated, "line 3"},
		{"bad step", h + "1,a,2,3\nx,b,5,6\n", 1, ErrCorrupt, "line 3"},
		{"bad value", h + "1,a,two,3\n", 0, ErrCorrupt, "line 2"},
		{"three fields", h + "1,a,2\n", 0, ErrCorrupt, "line 2"},
		{"crlf", "step,tag,value,wall_time\r\n1,a,2,3\r\n", 1, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeCSV([]byte(tt.data))
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if err != nil && !strings.Contains(err.Error(), tt.line) {
				t.Errorf("error %q does not name %q", err, tt.line)
			}
			if len(got) != tt.rows {
				t.Errorf("%d rows, want %d", len(got), tt.rows)
			}
		})
	}
}

func TestEventFileName(t *testing.T) {
	if got, want := EventFileName(time.Unix(1700000000, 999), "node7"), "events.out.tfevents.1700000000.node7"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRunName(t *testing.T) {
	// CleanRL: f"{args.env_id}__{args.exp_name}__{args.seed}__{int(time.time())}"
	if got, want := RunName("placement", "ppo", 3, time.Unix(1700000000, 5e8)), "placement__ppo__3__1700000000"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func openTest(t *testing.T, dir string, opts Options) *Logger {
	t.Helper()
	if opts.Now == nil {
		opts.Now = fakeClock(time.Second)
	}
	opts.Hostname = "testhost"
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func readBoth(t *testing.T, l *Logger) ([]Event, []Row) {
	t.Helper()
	eb, err := os.ReadFile(l.EventPath())
	if err != nil {
		t.Fatal(err)
	}
	events, err := DecodeEvents(eb)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := os.ReadFile(l.CSVPath())
	if err != nil {
		t.Fatal(err)
	}
	rows, err := DecodeCSV(cb)
	if err != nil {
		t.Fatal(err)
	}
	return events, rows
}

func TestLogger(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "cartpole__ppo__1__1700000000")
	l := openTest(t, dir, Options{})
	if got, want := filepath.Base(l.EventPath()), "events.out.tfevents.1700000000.testhost"; got != want {
		t.Errorf("event file %q, want %q", got, want)
	}
	l.Scalar(TagEpisodicReturn, 100, 21)
	l.Scalar(TagLearningRate, 512, 2.5e-4)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	l.Scalar(TagSPS, 1, 1) // dropped after Close
	events, rows := readBoth(t, l)
	// The clock ticks once a second at every read: Open stamps ...00,
	// the flush of the file-version event reads ...01, the scalars get
	// ...02 and ...03 (FlushInterval is 10 s: no flush between them).
	wantEvents := []Event{
		{WallTime: 1700000000, FileVersion: FileVersion},
		{WallTime: 1700000002, Step: 100, Values: []Value{{Tag: TagEpisodicReturn, SimpleValue: 21}}},
		{WallTime: 1700000003, Step: 512, Values: []Value{{Tag: TagLearningRate, SimpleValue: 2.5e-4}}},
	}
	if diff := cmp.Diff(wantEvents, events); diff != "" {
		t.Errorf("events (-want,+got)\n%s", diff)
	}
	wantRows := []Row{
		{Step: 100, Tag: TagEpisodicReturn, Value: 21, WallTime: 1700000002},
		{Step: 512, Tag: TagLearningRate, Value: 2.5e-4, WallTime: 1700000003},
	}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("rows (-want,+got)\n%s", diff)
	}
}

func TestLoggerFlushPolicy(t *testing.T) {
	tests := []struct {
		name     string
		opts     Options
		scalars  int
		wantRows int // on disk before Close
	}{
		{"buffered", Options{FlushEvery: 10, FlushInterval: time.Hour}, 9, 0},
		{"every 10", Options{FlushEvery: 10, FlushInterval: time.Hour}, 25, 20},
		{"interval", Options{FlushEvery: 1000, FlushInterval: 5 * time.Second, Now: fakeClock(time.Second)}, 12, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := openTest(t, t.TempDir(), tt.opts)
			defer l.Close()
			for i := range tt.scalars {
				l.Scalar(TagEpisodicLength, i, float64(i))
			}
			// What a crash would leave: the files as they are now.
			events, rows := readBoth(t, l)
			if len(rows) != tt.wantRows || len(events) != tt.wantRows+1 {
				t.Errorf("%d rows and %d events on disk, want %d and %d", len(rows), len(events), tt.wantRows, tt.wantRows+1)
			}
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
			events, rows = readBoth(t, l)
			if len(rows) != tt.scalars || len(events) != tt.scalars+1 {
				t.Errorf("after Flush: %d rows and %d events, want %d and %d", len(rows), len(events), tt.scalars, tt.scalars+1)
			}
		})
	}
}

func TestLoggerReopen(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, dir, Options{})
	l.Scalar(TagEpisodicReturn, 1, 1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Same second, same host: the event file exists.
	if _, err := Open(dir, Options{Now: fakeClock(time.Second), Hostname: "testhost"}); err == nil {
		t.Fatal("Open over an existing event file succeeded")
	}
	// A later run appends to scalars.csv and starts a new event file.
	l2 := openTest(t, dir, Options{Now: func() time.Time { return time.Unix(1700003600, 0) }})
	l2.Scalar(TagEpisodicReturn, 2, 2)
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	_, rows := readBoth(t, l2)
	if len(rows) != 2 || rows[0].Step != 1 || rows[1].Step != 2 {
		t.Errorf("rows %+v, want steps 1 and 2", rows)
	}
	// A row cut short by a crash is dropped before appending.
	cut := t.TempDir()
	if err := os.WriteFile(filepath.Join(cut, CSVFile), []byte(CSVHeader+"\n1,a,2,3\n4,b,5"), 0o644); err != nil {
		t.Fatal(err)
	}
	l3 := openTest(t, cut, Options{})
	l3.Scalar("c", 6, 7)
	if err := l3.Close(); err != nil {
		t.Fatal(err)
	}
	_, rows = readBoth(t, l3)
	if len(rows) != 2 || rows[0].Tag != "a" || rows[1].Tag != "c" {
		t.Errorf("after a cut row: rows %+v, want tags a and c", rows)
	}
	// A scalars.csv that is not ours is refused.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, CSVFile), []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(other, Options{Hostname: "h"}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("foreign scalars.csv: error %v, want ErrCorrupt", err)
	}
}

// TestPython cross-checks the event files against
// scripts/read_tfevents.py, an independent reader written in Python's
// standard library from the format alone.
func TestPython(t *testing.T) {
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no", python)
	}
	l := openTest(t, t.TempDir(), Options{})
	want := []Row{
		{Step: 128, Tag: TagEpisodicReturn, Value: 21},
		{Step: 512, Tag: TagLearningRate, Value: 2.5e-4},
		{Step: 512, Tag: TagExplainedVariance, Value: -0.3},
		{Step: 1 << 35, Tag: TagSPS, Value: 3123},
		{Step: 600, Tag: TagTDLoss, Value: 1e-30},
	}
	// The clock reads 1700000000 at Open, 1700000001 at its flush, then
	// one more second for each scalar.
	for _, r := range want {
		l.Scalar(r.Tag, int(r.Step), r.Value)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, filepath.Join("..", "..", "scripts", "read_tfevents.py"), l.EventPath()).CombinedOutput()
	if err != nil {
		t.Fatalf("read_tfevents.py: %v\n%s", err, out)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	if !sc.Scan() || sc.Text() != "file_version brain.Event:2 1700000000.0" {
		t.Fatalf("first line %q, want the file version", sc.Text())
	}
	for i, w := range want {
		if !sc.Scan() {
			t.Fatalf("Python printed %d scalars, want %d:\n%s", i, len(want), out)
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			t.Fatalf("line %q: want 4 fields", sc.Text())
		}
		step, _ := strconv.ParseInt(f[0], 10, 64)
		v, _ := strconv.ParseFloat(f[2], 64)
		wall, _ := strconv.ParseFloat(f[3], 64)
		if step != w.Step || f[1] != w.Tag || float32(v) != float32(w.Value) || wall != float64(1700000002+i) {
			t.Errorf("Python read %q, want step %d tag %s value %v (as float32) wall %d", sc.Text(), w.Step, w.Tag, float32(w.Value), 1700000002+i)
		}
	}
	if sc.Scan() {
		t.Errorf("extra line %q", sc.Text())
	}
}
