package state_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/serve/state"
)

// fixtureConfig is the configuration of fixtureStore.
var fixtureConfig = state.Config{History: 4, ProfileIterations: 16}

// fixtureStore is a store with something in every part of the snapshot:
// two nodes (one whose ring wrapped, with network load, a gap and a second
// agent), a finished job whose profile became its model's, a running job
// with a load fit, and a job with whole-job times only.
func fixtureStore(t testing.TB) *state.Store {
	t.Helper()
	st := newStore(t, fixtureConfig)
	mustHello(t, st, hello("n1", "a1"), at(0))
	mustHello(t, st, hello("n2", "a1"), at(0))
	for i := 1; i <= 6; i++ {
		m := sampleMsg(uint64(i), at(float64(10*i)), 0.7+0.05*float64(i%3), 0.1)
		m.GetSample().NetRxBps, m.GetSample().NetTxBps = 1.25e9, 0.5e9
		mustApply(t, st, "n1", m, at(float64(10*i)))
		mustApply(t, st, "n2", sampleMsg(uint64(i), at(float64(10*i)), 0.95, 0.2), at(float64(10*i)))
	}
	mustApply(t, st, "n1", gapMsg(7, 3, 1), at(61))
	mustHello(t, st, hello("n2", "a2"), at(62))
	mustApply(t, st, "n2", sampleMsg(1, at(62), 0.5, 0.5), at(62))

	st.JobStarted("done", "bert", []string{"n1", "n2"}, at(5), at(5))
	st.JobIterations("done", 0, "", repeat(1, 8), 0, at(63))
	st.JobIterations("done", 1, "", []float64{1, 1, 1, 1, 2, 2, 2, 2}, 2, at(63))
	st.JobFinished("done", at(64))
	st.JobStarted("run", "ncf", []string{"n2", "n1"}, at(5), at(5))
	mustApply(t, st, "n1", itersMsg(8, "run", 1, repeat(1.5, 20)...), at(65))
	st.JobIterations("run", 0, "", repeat(1, 9), 0, at(65))
	st.JobIterations("whole", -1, "", []float64{3, 1, 2, 5, 4, 6, 8, 7}, 0, at(66))
	return st
}

func mustMarshal(t testing.TB, st *state.Store) []byte {
	t.Helper()
	b, err := st.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSaveLoadRoundTrip(t *testing.T) {
	st := fixtureStore(t)
	path := filepath.Join(t.TempDir(), "state.json")
	if err := st.Save(path, at(100)); err != nil {
		t.Fatal(err)
	}
	got, err := state.Load(path, fixtureConfig)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(mustMarshal(t, st)), string(mustMarshal(t, got))); diff != "" {
		t.Errorf("MarshalJSON after Load (-saved,+loaded):\n%s", diff)
	}
	now := at(70)
	if diff := cmp.Diff(st.Nodes(now), got.Nodes(now)); diff != "" {
		t.Errorf("Nodes (-saved,+loaded):\n%s", diff)
	}
	for _, id := range []string{"n1", "n2"} {
		if diff := cmp.Diff(st.History(id), got.History(id)); diff != "" {
			t.Errorf("History(%s) (-saved,+loaded):\n%s", id, diff)
		}
	}
	for _, q := range [][2]string{{"done", ""}, {"run", ""}, {"whole", ""}, {"other", "bert"}} {
		want, wok := st.Profile(q[0], q[1])
		p, ok := got.Profile(q[0], q[1])
		if !wok || !ok {
			t.Errorf("Profile(%s, %s): %v before, %v after", q[0], q[1], wok, ok)
		}
		if diff := cmp.Diff(want, p); diff != "" {
			t.Errorf("Profile(%s, %s) (-saved,+loaded):\n%s", q[0], q[1], diff)
		}
	}
	// The fixture has what it claims: n1's ring wrapped (6 samples, 4
	// kept), its loss counted (3 + 1) and its Net 1.25e9*8/25e9 = 0.4; a
	// CPU fit for "run" (n2's mean CPU (3*0.95 + 0.5)/4 = 0.8375 is
	// overloaded, n1's below 0.8 is not).
	if v, _ := got.Node("n1", now); v.Samples != 6 || v.Lost != 4 || v.LastSeq != 8 || len(got.History("n1")) != 4 || v.Last.Usage.Net != 0.4 {
		t.Errorf("loaded n1: %+v, %d kept", v, len(got.History("n1")))
	}
	if p, _ := got.Profile("run", ""); !p.HasStraggling || !p.HasCPU {
		t.Errorf("loaded run's profile %+v: want straggling and a CPU fit", p)
	}
	if diff := cmp.Diff(st.Running(), got.Running()); diff != "" {
		t.Errorf("Running (-saved,+loaded):\n%s", diff)
	}
	if got.Jobs() != 3 {
		t.Errorf("Jobs() = %d, want 3", got.Jobs())
	}

	// Both go on the same way: the loaded ring continues in order, the
	// loaded agent resumes its sequence.
	for _, s := range []*state.Store{st, got} {
		if seq := mustHello(t, s, hello("n1", "a1"), at(80)); seq != 8 {
			t.Errorf("hello after load: acked %d, want 8", seq)
		}
		mustApply(t, s, "n1", sampleMsg(8, at(80), 0.3, 0), at(80)) // resend
		mustApply(t, s, "n1", sampleMsg(9, at(81), 0.3, 0), at(81))
		mustApply(t, s, "n1", sampleMsg(10, at(82), 0.2, 0), at(82))
	}
	if diff := cmp.Diff(st.History("n1"), got.History("n1")); diff != "" {
		t.Errorf("History(n1) after more samples (-saved,+loaded):\n%s", diff)
	}
	if diff := cmp.Diff(string(mustMarshal(t, st)), string(mustMarshal(t, got))); diff != "" {
		t.Errorf("MarshalJSON after more samples (-saved,+loaded):\n%s", diff)
	}
}

// TestMarshalDeterministic: the same state gives the same bytes, whatever
// the order it was built in.
func TestMarshalDeterministic(t *testing.T) {
	a, b := newStore(t, state.Config{}), newStore(t, state.Config{})
	for _, id := range []string{"x", "y", "z"} {
		mustHello(t, a, hello(id, "a"), at(0))
		a.JobIterations("j"+id, 2, id, []float64{1}, 0, at(1))
		a.JobIterations("j"+id, 0, id, []float64{1}, 0, at(1))
	}
	for _, id := range []string{"z", "x", "y"} {
		mustHello(t, b, hello(id, "a"), at(0))
		b.JobIterations("j"+id, 0, id, []float64{1}, 0, at(1))
		b.JobIterations("j"+id, 2, id, []float64{1}, 0, at(1))
	}
	if diff := cmp.Diff(string(mustMarshal(t, a)), string(mustMarshal(t, b))); diff != "" {
		t.Errorf("MarshalJSON (-a,+b):\n%s", diff)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestSaveAtomic(t *testing.T) {
	st := fixtureStore(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := st.Save(path, at(100)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"state.json"}, dirNames(t, dir)); diff != "" {
		t.Errorf("dir after Save (-want,+got):\n%s", diff)
	}
	// Saving again replaces the file: the new state, still one file.
	mustHello(t, st, hello("n9", "a"), at(101))
	if err := st.Save(path, at(102)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"state.json"}, dirNames(t, dir)); diff != "" {
		t.Errorf("dir after a second Save (-want,+got):\n%s", diff)
	}
	got, err := state.Load(path, fixtureConfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Node("n9", at(102)); !ok {
		t.Error("the second Save's node is not in the file")
	}
	// The file records its save time: 102 s after t0, in nanoseconds.
	var s struct {
		SavedAt int64 `json:"saved_unix_nanos"`
	}
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &s); err != nil || s.SavedAt != at(102).UnixNano() {
		t.Errorf("saved_unix_nanos %d (%v), want %d", s.SavedAt, err, at(102).UnixNano())
	}

	// Into a missing directory: an error naming the path, nothing created.
	missing := filepath.Join(dir, "missing", "state.json")
	if err := st.Save(missing, at(103)); err == nil {
		t.Error("Save into a missing directory: no error")
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Save created the missing directory: %v", err)
	}
	// Over a non-empty directory, the rename fails: an error naming the
	// path, and the temporary file removed.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := st.Save(blocked, at(104)); err == nil || !strings.Contains(err.Error(), blocked) {
		t.Errorf("Save over a directory: %v, want an error naming %s", err, blocked)
	}
	if diff := cmp.Diff([]string{"blocked", "state.json"}, dirNames(t, dir)); diff != "" {
		t.Errorf("dir after failed Saves (-want,+got):\n%s", diff)
	}
	// The previous snapshot is intact.
	if _, err := state.Load(path, fixtureConfig); err != nil {
		t.Errorf("previous snapshot after failed Saves: %v", err)
	}
}

// TestLoadErrors corrupts a valid snapshot one way at a time; each is an
// error naming the file and, where the JSON parses, the field.
func TestLoadErrors(t *testing.T) {
	valid := string(mustMarshal(t, fixtureStore(t)))
	// The fixture's first history sample of n1, as MarshalJSON writes it.
	firstSample := `"history":[{"t":`
	if !strings.Contains(valid, firstSample) {
		t.Fatalf("fixture snapshot has no %s: %s", firstSample, valid)
	}
	tests := []struct {
		name     string
		data     string
		cfg      state.Config
		field    string // the FieldError's field; "" when not a FieldError
		contains string // else a part of the message
	}{{
		name: "truncated", data: valid[:len(valid)/2], contains: "unexpected EOF",
	}, {
		name: "empty", data: "", contains: "EOF",
	}, {
		name: "wrong version", data: strings.Replace(valid, `"version":1`, `"version":2`, 1), field: "version",
	}, {
		name: "no version", data: `{"nodes":[],"jobs":[],"profiles":{}}`, field: "version",
	}, {
		// JSON has no NaN: a NaN is a syntax error at its offset.
		name: "NaN load", data: strings.Replace(valid, `"cpu":0.7,`, `"cpu":NaN,`, 1), contains: "invalid character 'N'",
	}, {
		name: "NaN as a string", data: strings.Replace(valid, `"cpu":0.7,`, `"cpu":"NaN",`, 1), contains: "nodes.history.cpu",
	}, {
		name: "load above 1", data: strings.Replace(valid, `"cpu":0.7,`, `"cpu":1.5,`, 1), field: "nodes[0].history[0]",
	}, {
		name: "negative load", data: strings.Replace(valid, `"membw":0.1`, `"membw":-0.1`, 1), field: "nodes[0].history[0]",
	}, {
		name: "duplicate node", data: strings.Replace(valid, `"ID":"n2"`, `"ID":"n1"`, 1), field: "nodes[1].info.ID",
	}, {
		name: "empty node id", data: strings.Replace(valid, `"ID":"n1"`, `"ID":""`, 1), field: "nodes[0].info.ID",
	}, {
		name: "too many nodes", data: valid, cfg: state.Config{MaxNodes: 1}, field: "nodes",
	}, {
		name: "empty job id", data: strings.Replace(valid, `"id":"done"`, `"id":""`, 1), field: "jobs[0].id",
	}, {
		name: "worker index", data: strings.Replace(valid, `"index":-1`, `"index":-2`, 1), field: "jobs[2].workers[0].index",
	}, {
		name: "zero iteration time", data: strings.Replace(valid, `"seconds":[3,`, `"seconds":[0,`, 1), field: "jobs[2].workers[0].seconds[0]",
	}, {
		name: "negative iteration time", data: strings.Replace(valid, `"seconds":[3,1,`, `"seconds":[3,-1,`, 1), field: "jobs[2].workers[0].seconds[1]",
	}, {
		name: "null profile", data: strings.Replace(valid, `"profiles":{"bert":{`, `"profiles":{"x":null,"bert":{`, 1), field: "profiles[x]",
	}, {
		name: "ragged jitter", data: strings.Replace(valid, `"Rel":[[0.8,0.8],`, `"Rel":[[0.8],`, 1), field: "profiles[bert].Rel",
	}, {
		name: "unknown field", data: strings.Replace(valid, `"version":1`, `"version":1,"extra":true`, 1), contains: `unknown field "extra"`,
	}, {
		name: "wrong type", data: strings.Replace(valid, `"last_seq":8`, `"last_seq":"8"`, 1), contains: "last_seq",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.data == valid && tt.cfg == (state.Config{}) {
				t.Fatal("the corruption changed nothing")
			}
			path := filepath.Join(t.TempDir(), "snap.json")
			if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			st, err := state.Load(path, tt.cfg)
			if err == nil {
				t.Fatalf("Load: no error (%d nodes)", len(st.Nodes(at(0))))
			}
			if st != nil {
				t.Error("Load returned a store with its error")
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file %s", err, path)
			}
			var fe *state.FieldError
			switch {
			case tt.field != "":
				if !errors.As(err, &fe) || fe.Field != tt.field {
					t.Errorf("error %v, want a FieldError on %q", err, tt.field)
				}
			case !strings.Contains(err.Error(), tt.contains):
				t.Errorf("error %q does not say %q", err, tt.contains)
			}
			// LoadOrEmpty refuses it too, rather than start empty.
			if _, err := state.LoadOrEmpty(path, tt.cfg); err == nil {
				t.Error("LoadOrEmpty: no error")
			}
		})
	}
}

func TestLoadOrEmpty(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if _, err := state.Load(path, state.Config{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want ErrNotExist", err)
	}
	st, err := state.LoadOrEmpty(path, state.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(mustMarshal(t, newStore(t, state.Config{}))), string(mustMarshal(t, st))); diff != "" {
		t.Errorf("LoadOrEmpty of a missing file (-empty,+got):\n%s", diff)
	}
	if n := len(st.Nodes(at(0))); n != 0 || st.Jobs() != 0 {
		t.Errorf("LoadOrEmpty of a missing file: %d nodes, %d jobs", n, st.Jobs())
	}
	if _, err := state.LoadOrEmpty(path, state.Config{History: -1}); err == nil {
		t.Error("LoadOrEmpty with a bad config: no error")
	}
	// An existing file is loaded.
	if err := fixtureStore(t).Save(path, at(1)); err != nil {
		t.Fatal(err)
	}
	st, err = state.LoadOrEmpty(path, fixtureConfig)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(st.Nodes(at(0))); n != 2 || st.Jobs() != 3 {
		t.Errorf("LoadOrEmpty of a snapshot: %d nodes, %d jobs; want 2, 3", n, st.Jobs())
	}
	if _, err := state.Load(path, state.Config{History: -1}); err == nil {
		t.Error("Load with a bad config: no error")
	}
}

// TestLoadSmallerConfig: a snapshot loaded with smaller limits keeps the
// newest samples and the first iterations.
func TestLoadSmallerConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := fixtureStore(t).Save(path, at(1)); err != nil {
		t.Fatal(err)
	}
	st, err := state.Load(path, state.Config{History: 2, ProfileIterations: 8})
	if err != nil {
		t.Fatal(err)
	}
	// n1's samples 3..6 were kept (ring of 4); a ring of 2 keeps 5, 6 at
	// t0+50 s and t0+60 s, and the last is sample 6.
	h := st.History("n1")
	if len(h) != 2 || !h[0].Time.Equal(at(50)) || !h[1].Time.Equal(at(60)) {
		t.Errorf("History(n1) = %v, want the samples at t0+50 s and t0+60 s", h)
	}
	if v, _ := st.Node("n1", at(60)); v.Last != h[1] {
		t.Errorf("Last = %v, want %v", v.Last, h[1])
	}
	// run's workers: 1 (20 x 1.5 s) and 0 (9 x 1 s) cut to 8 each.
	if p, ok := st.Profile("run", ""); !ok || p.Iterations != 8 {
		t.Errorf("Profile(run) = %+v, %v; want 8 iterations", p, ok)
	}
}

// TestSnapshotStoreInvariants: whatever the store accepts through its
// API, Save writes a snapshot Load accepts and Profile stays finite.
func TestSnapshotStoreInvariants(t *testing.T) {
	// Zero times (which serve's Report lets through) are dropped and counted, not kept: a snapshot with them would not load, and a profile of them would be NaN.
	tests := []struct {
		name string
		secs []float64
	}{
		{"zero times", repeat(0, 8)},
		{"zero and positive", []float64{0, 1, 1, 1, 1, 1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore(t, state.Config{})
			st.JobModel("j", "m", at(0))
			st.JobIterations("j", 0, "", tt.secs, 0, at(1))
			st.JobIterations("j", 1, "", tt.secs, 0, at(1))
			checkProfileFinite(t, st, "j")
			st.JobFinished("j", at(2))
			checkSaveLoad(t, st)
		})
	}
}

// TestHugeIterationTimes: times near the float64 limit would overflow a
// profile's sums; an agent's are refused (at most MaxIterationSeconds,
// a day), a report's dropped, and the store still saves and loads.
func TestHugeIterationTimes(t *testing.T) {
	st := newStore(t, state.Config{})
	for _, id := range []string{"n1", "n2"} {
		mustHello(t, st, hello(id, "a"), at(0))
	}
	st.JobModel("j", "m", at(0))
	if _, err := st.Apply("n1", itersMsg(1, "j", 0, repeat(1e308, 8)...), at(1)); err == nil || !strings.Contains(err.Error(), "iterations.seconds[0]") {
		t.Errorf("Apply of 1e308 s iterations: %v, want an error naming iterations.seconds[0]", err)
	}
	st.JobIterations("j", 0, "", repeat(1e308, 8), 0, at(1))
	st.JobIterations("j", 1, "", repeat(1e308, 8), 0, at(1))
	if p, ok := st.Profile("j", ""); ok {
		t.Errorf("Profile of 1e308 s reports = %+v, want none (dropped)", p)
	}
	checkProfileFinite(t, st, "j")
	st.JobFinished("j", at(2))
	checkSaveLoad(t, st)
}

func checkProfileFinite(t *testing.T, st *state.Store, job string) {
	t.Helper()
	p, ok := st.Profile(job, "")
	if !ok {
		return
	}
	if _, err := json.Marshal(p); err != nil {
		t.Errorf("Profile(%s) = %+v: %v", job, p, err)
	}
}

func checkSaveLoad(t *testing.T, st *state.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.json")
	if err := st.Save(path, at(3)); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if _, err := state.Load(path, st.Config()); err != nil {
		t.Errorf("Load of what Save wrote: %v", err)
	}
}

// TestLoadNodeInfo: a snapshot's node info is held to what a hello may
// say; serve.LiveSource turns Info.GPUs into free GPUs.
func TestLoadNodeInfo(t *testing.T) {
	// serve.LiveSource turns Info.GPUs into free GPUs, so a snapshot's node info is validated as a hello is.
	valid := string(mustMarshal(t, fixtureStore(t)))
	tests := []struct{ name, from, to, field string }{
		{"negative GPUs", `"GPUs":8`, `"GPUs":-1`, "gpus"},
		{"too many GPUs", `"GPUs":8`, `"GPUs":5000`, "gpus"},
		{"negative CPUs", `"CPUs":64`, `"CPUs":-1`, "cpus"},
		{"negative NIC", `"NICGbps":25`, `"NICGbps":-25`, "nic"},
		{"rack below -1", `"Rack":0`, `"Rack":-7`, "rack"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := strings.Replace(valid, tt.from, tt.to, 1)
			if data == valid {
				t.Fatalf("no %s in the snapshot", tt.from)
			}
			path := filepath.Join(t.TempDir(), "snap.json")
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := state.Load(path, state.Config{})
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(strings.ToLower(err.Error()), "nodes[0].info."+tt.field) {
				t.Errorf("Load: %v; want an error naming %s and nodes[0].info.%s", err, path, tt.field)
			}
		})
	}
}
