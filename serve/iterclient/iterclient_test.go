package iterclient_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/drover-sched/drover/internal/leakcheck"
	"github.com/drover-sched/drover/serve/agent"
	"github.com/drover-sched/drover/serve/iterclient"
	pb "github.com/drover-sched/drover/serve/proto"
)

// agentStub is an iteration endpoint that decodes reports as the agent
// does and answers each request with the next status of codes (202 when
// they run out).
type agentStub struct {
	mu      sync.Mutex
	codes   []int
	reports []*pb.JobIterations // accepted
	reqs    int
	got     chan struct{} // a value per request
}

func newAgentStub(t *testing.T, codes ...int) (*agentStub, string) {
	s := &agentStub{codes: codes, got: make(chan struct{}, 100)}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	return s, strings.TrimPrefix(srv.URL, "http://")
}

func (s *agentStub) serve(w http.ResponseWriter, r *http.Request) {
	defer func() { s.got <- struct{}{} }()
	if r.Method != http.MethodPost || r.URL.Path != agent.IterationsPath {
		http.Error(w, "wrong method or path", http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	it, err := agent.DecodeIterations(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs++
	code := http.StatusAccepted
	if len(s.codes) > 0 {
		code, s.codes = s.codes[0], s.codes[1:]
	}
	if code == http.StatusAccepted {
		s.reports = append(s.reports, it)
	}
	w.WriteHeader(code)
}

// wait waits for n more requests.
func (s *agentStub) wait(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-s.got:
		case <-time.After(time.Minute): // a loaded machine under -race cannot take this long
			t.Fatal("no request within a minute")
		}
	}
}

func (s *agentStub) accepted() []*pb.JobIterations {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*pb.JobIterations(nil), s.reports...)
}

func newClient(t *testing.T, cfg iterclient.Config) *iterclient.Client {
	t.Helper()
	if cfg.JobID == "" {
		cfg.JobID = "job-7"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c, err := iterclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestPosts(t *testing.T) {
	tests := []struct {
		name    string
		cfg     iterclient.Config
		observe []time.Duration
		close   bool // flush by Close rather than waiting for one post
		want    []*pb.JobIterations
		stats   iterclient.Stats
	}{
		{
			name:    "a full batch goes at once",
			cfg:     iterclient.Config{Worker: 3, Batch: 4, Interval: time.Hour},
			observe: []time.Duration{ms(300), ms(310), ms(290), ms(1500)},
			want:    []*pb.JobIterations{{JobId: "job-7", Worker: 3, Seconds: []float64{0.3, 0.31, 0.29, 1.5}}},
			stats:   iterclient.Stats{Sent: 4, Reports: 1},
		},
		{
			name:    "the interval sends a partial batch",
			cfg:     iterclient.Config{Worker: 1, Interval: 5 * time.Millisecond},
			observe: []time.Duration{ms(250)},
			want:    []*pb.JobIterations{{JobId: "job-7", Worker: 1, Seconds: []float64{0.25}}},
			stats:   iterclient.Stats{Sent: 1, Reports: 1},
		},
		{
			name:    "Close flushes",
			cfg:     iterclient.Config{Interval: time.Hour},
			observe: []time.Duration{ms(100), ms(200)},
			close:   true,
			want:    []*pb.JobIterations{{JobId: "job-7", Seconds: []float64{0.1, 0.2}}},
			stats:   iterclient.Stats{Sent: 2, Reports: 1},
		},
		{
			name:    "a full buffer and non-positive times drop and count",
			cfg:     iterclient.Config{Buffer: 3, Interval: time.Hour},
			observe: []time.Duration{ms(100), 0, ms(200), -ms(5), ms(300), ms(400), ms(500)},
			close:   true,
			want:    []*pb.JobIterations{{JobId: "job-7", Seconds: []float64{0.1, 0.2, 0.3}, Dropped: 4}},
			stats:   iterclient.Stats{Sent: 3, Reports: 1, Dropped: 4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leakcheck.Check(t)
			stub, addr := newAgentStub(t)
			tt.cfg.Addr = addr
			c := newClient(t, tt.cfg)
			for _, d := range tt.observe {
				c.Observe(d)
			}
			if tt.close {
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				stub.wait(t, 1)
			}
			if diff := cmp.Diff(tt.want, stub.accepted(), protocmp.Transform()); diff != "" {
				t.Errorf("reports (-want,+got):\n%s", diff)
			}
			c.Close()
			if diff := cmp.Diff(tt.stats, c.Stats()); diff != "" {
				t.Errorf("Stats (-want,+got):\n%s", diff)
			}
		})
	}
}

// A post the agent refuses (or that cannot reach it) counts its times as
// dropped, and the next report says so.
func TestFailedPostIsReportedAsDropped(t *testing.T) {
	leakcheck.Check(t)
	stub, addr := newAgentStub(t, http.StatusServiceUnavailable)
	c := newClient(t, iterclient.Config{Addr: addr, Batch: 2, Interval: time.Hour})
	c.Observe(ms(100))
	c.Observe(ms(110))
	stub.wait(t, 1) // refused
	c.Observe(ms(120))
	c.Observe(ms(130))
	stub.wait(t, 1)
	want := []*pb.JobIterations{{JobId: "job-7", Seconds: []float64{0.12, 0.13}, Dropped: 2}}
	if diff := cmp.Diff(want, stub.accepted(), protocmp.Transform()); diff != "" {
		t.Errorf("reports (-want,+got):\n%s", diff)
	}
	c.Close()
	if got := c.Stats(); got != (iterclient.Stats{Sent: 2, Reports: 1, Dropped: 2}) {
		t.Errorf("Stats %+v", got)
	}
}

func TestAgentAway(t *testing.T) {
	leakcheck.Check(t)
	// Port 1: nothing listens there.
	c := newClient(t, iterclient.Config{Addr: "127.0.0.1:1", Interval: time.Hour, Timeout: time.Second})
	c.Observe(ms(100))
	if err := c.Close(); err == nil {
		t.Error("Close: no error with the agent away")
	}
	c.Observe(ms(100)) // after Close: dropped
	if got := c.Stats(); got != (iterclient.Stats{Dropped: 2}) {
		t.Errorf("Stats %+v, want 2 dropped", got)
	}
}

// Many goroutines observe at once: every time is sent or counted.
func TestConcurrentObserve(t *testing.T) {
	stub, addr := newAgentStub(t)
	c := newClient(t, iterclient.Config{Addr: addr, Batch: 16, Buffer: 64, Interval: time.Millisecond})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				c.Observe(ms(10))
			}
		})
	}
	wg.Wait()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	var sent, dropped int64
	for _, r := range stub.accepted() {
		sent += int64(len(r.Seconds))
		dropped += r.Dropped
	}
	if st.Sent+st.Dropped != 4000 || sent != st.Sent || dropped != st.Dropped {
		t.Errorf("Stats %+v; the agent got %d times and %d dropped; want 4000 in all", st, sent, dropped)
	}
}

func TestNewFromEnvironment(t *testing.T) {
	t.Setenv(iterclient.EnvJobID, "job-env")
	t.Setenv(iterclient.EnvWorker, "")
	t.Setenv(iterclient.EnvRank, "5")
	stub, addr := newAgentStub(t)
	t.Setenv(iterclient.EnvAddr, addr)
	c, err := iterclient.New(iterclient.Config{Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c.Observe(ms(40))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	want := []*pb.JobIterations{{JobId: "job-env", Worker: 5, Seconds: []float64{0.04}}}
	if diff := cmp.Diff(want, stub.accepted(), protocmp.Transform()); diff != "" {
		t.Errorf("reports (-want,+got):\n%s", diff)
	}

	t.Setenv(iterclient.EnvRank, "five")
	if _, err := iterclient.New(iterclient.Config{}); err == nil || !strings.Contains(err.Error(), "RANK") {
		t.Errorf("New with RANK=five: %v, want an error naming RANK", err)
	}
	t.Setenv(iterclient.EnvJobID, "")
	if _, err := iterclient.New(iterclient.Config{Worker: 1}); err == nil || !strings.Contains(err.Error(), "DROVER_JOB_ID") {
		t.Errorf("New without a job id: %v, want an error naming DROVER_JOB_ID", err)
	}
}

// drover_iter.py in a training-like loop against the stub: the times it
// posts are the intervals between step() calls, and a refused post comes
// back as "dropped".
func TestPythonHook(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	stub, addr := newAgentStub(t, http.StatusServiceUnavailable)
	script := `
import sys, time
sys.path.insert(0, sys.argv[1])
from drover_iter import DroverIter
hook = DroverIter(addr=sys.argv[2], every=60)
for _ in range(3):   # two intervals, refused by the agent
    hook.step(); time.sleep(0.02)
hook.flush()
hook.step()          # the third interval ends here
time.sleep(0.02); hook.step()
hook.flush()
print(hook.job_id, hook.worker)
`
	cmd := exec.Command(python, "-c", script, ".", addr)
	cmd.Env = append(os.Environ(), "DROVER_JOB_ID=job-py", "DROVER_WORKER=", "RANK=2", "http_proxy=http://192.0.2.1:1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "job-py 2" {
		t.Errorf("job and worker %q, want \"job-py 2\"", got)
	}
	got := stub.accepted()
	if len(got) != 1 {
		t.Fatalf("accepted %v, want one report", got)
	}
	r := got[0]
	if r.JobId != "job-py" || r.Worker != 2 || r.Dropped != 2 || len(r.Seconds) != 2 {
		t.Fatalf("report %v, want job-py worker 2, two times and two dropped", r)
	}
	for _, s := range r.Seconds {
		if s < 0.02 || s > 5 {
			t.Errorf("time %v s, want about 0.02 s (one sleep)", s)
		}
	}
}
