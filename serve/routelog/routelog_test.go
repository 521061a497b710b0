package routelog_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/serve/routelog"
)

// record builds a valid record: two instances (prefill a10g, decode
// a100), routed 0 -> 1 in HACK's format.
func record(id string, ns int64) routelog.Record {
	return routelog.Record{V: routelog.Version, ID: id, UnixNanos: ns, Request: "r" + id, Prompt: 1500, Output: 40,
		Deployment: "pd-rl", Model: "llama2-70b", LinkBytesPerSec: 3.125e9,
		Instances: []routelog.Instance{
			{ID: "p0", Role: "prefill", GPU: "a10g", TP: 8, PendingTokens: 300, ReservedBytes: 1 << 30, UsedBytes: 1 << 29, MaxBytes: 192 << 30, Queued: 1},
			{ID: "d0", Role: "decode", GPU: "a100-80gb", TP: 8, PendingTokens: 12, MaxBytes: 640 << 30, Running: 12},
		},
		Prefill: 0, Decode: 1, Format: "hack-pi64", Source: "heuristic", Policy: "heuristic:hack", Fallback: "shadow",
		Shadow:       &routelog.Shadow{Policy: "learned:pd-rl@v1", Prefill: 0, Decode: 1, Format: "fp16"},
		LatencyNanos: 41000}
}

func TestRoundTrip(t *testing.T) {
	var b []byte
	want := []routelog.Record{record("a", 1e9), record("b", 2e9)}
	want[1].Source, want[1].Policy, want[1].Fallback, want[1].ModelVersion = "learned", "learned:pd-rl@v1", "", "v1"
	want[1].Shadow = &routelog.Shadow{Policy: "heuristic:hack", Failure: "error"}
	for i := range want {
		b = routelog.Encode(b, &want[i])
	}
	got, partial, err := routelog.Read(bytes.NewReader(b))
	if err != nil || partial != 0 {
		t.Fatalf("read: %v (partial %d)", err, partial)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want,+got)\n%s", d)
	}
}

// TestCorruptLines: every bad line is rejected with its line number and
// the field it breaks.
func TestCorruptLines(t *testing.T) {
	good := string(routelog.Encode(nil, ptr(record("a", 1))))
	tests := []struct {
		name, line, want string
	}{
		{"not json", "{\"v\":1,", "line 2: routelog: bad record"},
		{"unknown field", strings.Replace(good, `"v":1`, `"v":1,"extra":3`, 1), `unknown field "extra"`},
		{"version", strings.Replace(good, `"v":1`, `"v":2`, 1), "line 2: routelog: bad record: v: 2, want 1"},
		{"prefill out of range", strings.Replace(good, `"prefill":0`, `"prefill":5`, 1), "prefill: 5, want 0..1"},
		{"decode on a prefill instance", strings.Replace(good, `"decode":1,`, `"decode":0,`, 1), "decode: instance 0 is a prefill instance"},
		{"format", strings.Replace(good, `"format":"hack-pi64"`, `"format":"zip"`, 1), "format:"},
		{"role", strings.Replace(good, `"role":"decode"`, `"role":"both"`, 1), "instances[1].role"},
		{"source", strings.Replace(good, `"source":"heuristic"`, `"source":"oracle"`, 1), "source:"},
		{"prompt", strings.Replace(good, `"prompt_tokens":1500`, `"prompt_tokens":0`, 1), "prompt_tokens: 0"},
		{"model", strings.Replace(good, `"model":"llama2-70b"`, `"model":"gpt-9"`, 1), "model:"},
		{"two values", strings.TrimSuffix(good, "\n") + " {}", "more than one JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := good + strings.TrimSuffix(tt.line, "\n") + "\n" + good
			_, _, err := routelog.Read(strings.NewReader(in))
			if err == nil || !strings.Contains(err.Error(), "line 2:") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want line 2 and %q", err, tt.want)
			}
			if !errors.Is(err, routelog.ErrBadRecord) {
				t.Fatalf("error %v is not ErrBadRecord", err)
			}
		})
	}
}

// TestReadFileRefuses: ReadFile reads through internal/inputfile, so a
// path that is not a regular file is refused naming the path, and a
// corrupt line of a file is named by its path and line number.
func TestReadFileRefuses(t *testing.T) {
	dir := t.TempDir()
	_, _, err := routelog.ReadFile(dir)
	if !errors.Is(err, inputfile.ErrNotRegular) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("a directory: error %v, want inputfile.ErrNotRegular naming %s", err, dir)
	}
	path := filepath.Join(dir, routelog.FileName)
	good := routelog.Encode(nil, ptr(record("a", 1)))
	if err := os.WriteFile(path, append(good, "{}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = routelog.ReadFile(path)
	if !errors.Is(err, routelog.ErrBadRecord) || !strings.Contains(err.Error(), path+": routelog: line 2:") {
		t.Fatalf("a corrupt second line: error %v, want ErrBadRecord naming %s and line 2", err, path)
	}
}

func ptr[T any](x T) *T { return &x }

// TestPartialLastLine: a last line a crash cut short is left out and
// counted; Create cuts it off so that appending continues a valid log.
func TestPartialLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), routelog.FileName)
	full := routelog.Encode(nil, ptr(record("a", 1)))
	cut := routelog.Encode(nil, ptr(record("b", 2)))
	if err := os.WriteFile(path, append(full, cut[:len(cut)/2]...), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, partial, err := routelog.ReadFile(path)
	if err != nil || partial != 1 || len(recs) != 1 {
		t.Fatalf("%d records, partial %d, %v", len(recs), partial, err)
	}
	w, err := routelog.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(ptr(record("c", 3))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs, partial, err = routelog.ReadFile(path)
	if err != nil || partial != 0 || len(recs) != 2 || recs[1].ID != "c" {
		t.Fatalf("after appending: %d records, partial %d, %v", len(recs), partial, err)
	}
}

// TestWriter: records appended from many goroutines are all written, once,
// and Append refuses an invalid record and writes after Close.
func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := routelog.NewWriter(&buf, 1<<12)
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 100 {
				r := record(string(rune('a'+g))+"-"+strings.Repeat("x", i%3), int64(i))
				if err := w.Append(&r); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	bad := record("z", 1)
	bad.Prompt = 0
	if err := w.Append(&bad); !errors.Is(err, routelog.ErrBadRecord) {
		t.Fatalf("invalid record: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(ptr(record("y", 1))); !errors.Is(err, routelog.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	recs, _, err := routelog.Read(&buf)
	if err != nil || len(recs)+int(w.Dropped()) != 400 {
		t.Fatalf("%d records + %d dropped, want 400: %v", len(recs), w.Dropped(), err)
	}
}

// FuzzDecode: Decode never panics, and whatever it accepts encodes back to
// a line it decodes to the same record.
func FuzzDecode(f *testing.F) {
	f.Add(routelog.Encode(nil, ptr(record("a", 1))), uint64(1))
	f.Add([]byte(`{"v":1}`), uint64(2))
	f.Add([]byte(`{"v":1,"id":"x","prompt_tokens":1,"output_tokens":1,"model":"qwen3-8b","link_bytes_per_sec":1,"instances":[{"role":"colocated","gpu":"h100-80gb","tp":1,"max_bytes":1}],"prefill":0,"decode":0,"format":"fp16","source":"learned","policy":"p"}`), uint64(3))
	f.Fuzz(func(t *testing.T, line []byte, seed uint64) {
		// Flip a few bytes of the line, as the seed says.
		rng := rand.New(rand.NewPCG(seed, 7))
		if len(line) > 0 {
			for range rng.IntN(3) {
				line[rng.IntN(len(line))] ^= byte(1 << rng.IntN(8))
			}
		}
		r, err := routelog.Decode(line)
		if err != nil {
			return
		}
		again, err := routelog.Decode(bytes.TrimSuffix(routelog.Encode(nil, &r), []byte("\n")))
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if d := cmp.Diff(r, again); d != "" {
			t.Fatalf("(-first,+again)\n%s", d)
		}
	})
}
