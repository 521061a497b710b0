package agent_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/drover-sched/drover/serve/agent"
	pb "github.com/drover-sched/drover/serve/proto"
)

// postIterations posts body to a's handler and checks the status code.
func postIterations(t *testing.T, a *agent.Agent, body string, code int) string {
	t.Helper()
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, agent.IterationsPath, strings.NewReader(body)))
	if rec.Code != code {
		t.Fatalf("POST %.80s: %d %q, want %d", body, rec.Code, rec.Body, code)
	}
	return rec.Body.String()
}

func newIdleAgent(t *testing.T) *agent.Agent {
	a, err := agent.New(agent.Config{Server: "127.0.0.1:1", NodeID: "n", GPU: noGPUs{}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestIterationsEndpoint(t *testing.T) {
	long := strings.Repeat("j", agent.MaxJobIDBytes+1)
	many := "[" + strings.TrimSuffix(strings.Repeat("0.1,", agent.MaxSecondsPerReport+1), ",") + "]"
	tests := []struct {
		name string
		body string
		code int
		want string // in the answer
	}{
		{"valid", `{"job_id":"job-1","worker":3,"seconds":[0.31,0.3],"dropped":2}`, 202, ""},
		{"only drops", `{"job_id":"job-1","dropped":5}`, 202, ""},
		{"no job", `{"worker":3,"seconds":[0.3]}`, 400, "job_id"},
		{"empty job", `{"job_id":"","seconds":[0.3]}`, 400, "job_id"},
		{"long job", `{"job_id":"` + long + `","seconds":[0.3]}`, 400, "job_id"},
		{"job not a string", `{"job_id":7,"seconds":[0.3]}`, 400, "job_id"},
		{"zero seconds", `{"job_id":"j","seconds":[0.3,0]}`, 400, "seconds[1]"},
		{"negative seconds", `{"job_id":"j","seconds":[-1]}`, 400, "seconds[0]"},
		{"seconds longer than a day", `{"job_id":"j","seconds":[0.3,86401]}`, 400, "seconds[1]"},
		{"overflowing seconds", `{"job_id":"j","seconds":[1e400]}`, 400, "seconds"},
		{"seconds not numbers", `{"job_id":"j","seconds":["fast"]}`, 400, "seconds"},
		{"no seconds", `{"job_id":"j"}`, 400, "seconds"},
		{"too many seconds", `{"job_id":"j","seconds":` + many + `}`, 400, "seconds"},
		{"worker below -1", `{"job_id":"j","worker":-2,"seconds":[1]}`, 400, "worker"},
		{"worker too big", `{"job_id":"j","worker":1048577,"seconds":[1]}`, 400, "worker"},
		{"worker not an int", `{"job_id":"j","worker":1e30,"seconds":[1]}`, 400, "worker"},
		{"negative dropped", `{"job_id":"j","seconds":[1],"dropped":-1}`, 400, "dropped"},
		{"unknown field", `{"job_id":"j","seconds":[1],"secs":[1]}`, 400, `"secs"`},
		{"not JSON", `job_id=j`, 400, "body"},
		{"trailing data", `{"job_id":"j","seconds":[1]} {}`, 400, "body"},
		{"too large", `{"job_id":"j","seconds":[1]}` + strings.Repeat(" ", agent.MaxReportBytes), 413, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newIdleAgent(t)
			got := postIterations(t, a, tt.body, tt.code)
			if !strings.Contains(got, tt.want) {
				t.Errorf("answer %q does not name %q", got, tt.want)
			}
			if wantSeq := map[bool]uint64{true: 1, false: 0}[tt.code == 202]; a.Stats().LastSeq != wantSeq {
				t.Errorf("buffered %d messages, want %d", a.Stats().LastSeq, wantSeq)
			}
		})
	}
}

func TestIterationsEndpointMethods(t *testing.T) {
	a := newIdleAgent(t)
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, agent.IterationsPath, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET %s: %d, want 405", agent.IterationsPath, rec.Code)
	}
	rec = httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	var st agent.Stats
	if err := json.Unmarshal(rec.Body.Bytes(), &st); rec.Code != 200 || err != nil {
		t.Errorf("GET /healthz: %d %q (%v)", rec.Code, rec.Body, err)
	}
}

func TestDecodeIterations(t *testing.T) {
	got, err := agent.DecodeIterations([]byte(`{"job_id":"job-1","seconds":[0.25,0.5]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &pb.JobIterations{JobId: "job-1", Worker: -1, Seconds: []float64{0.25, 0.5}}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
}

// FuzzIterations checks DecodeIterations on arbitrary bodies: no panic,
// an accepted report keeps every limit and survives a JSON round trip,
// and a rejection names a field or the body.
func FuzzIterations(f *testing.F) {
	for _, s := range []string{
		`{"job_id":"job-1","worker":3,"seconds":[0.31,0.3],"dropped":2}`,
		`{"job_id":"j","dropped":5}`,
		`{"job_id":"j","seconds":[1e400]}`,
		`{"job_id":"j","seconds":[0]}`,
		`{"job_id":"\u00e9\ud800","seconds":[1e-300]}`,
		`{"job_id":"j","worker":-1,"seconds":[1],"dropped":9223372036854775807}`,
		`[]`, `null`, `{}`, `{"job_id":"j","seconds":[1]} x`,
	} {
		f.Add([]byte(s), uint64(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		// Half the time, splice random bytes into the body.
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		if len(data) > 0 && r.IntN(2) == 0 {
			data = append([]byte(nil), data...)
			data[r.IntN(len(data))] = byte(r.Uint32())
		}
		it, err := agent.DecodeIterations(data)
		if err != nil {
			msg := err.Error()
			named := false
			for _, p := range []string{"body", "job_id", "worker", "seconds", "dropped"} {
				named = named || strings.HasPrefix(msg, p)
			}
			if !named {
				t.Fatalf("error %q names no field", msg)
			}
			return
		}
		if it.JobId == "" || len(it.JobId) > agent.MaxJobIDBytes || it.Worker < -1 || it.Worker > agent.MaxWorker || it.Dropped < 0 ||
			len(it.Seconds) > agent.MaxSecondsPerReport || (len(it.Seconds) == 0 && it.Dropped == 0) {
			t.Fatalf("accepted %v", it)
		}
		for _, s := range it.Seconds {
			if !(s > 0) || math.IsInf(s, 0) {
				t.Fatalf("accepted seconds %v", s)
			}
		}
		w := int64(it.Worker)
		back, err := json.Marshal(agent.IterationReport{JobID: it.JobId, Worker: &w, Seconds: it.Seconds, Dropped: it.Dropped})
		if err != nil {
			t.Fatal(err)
		}
		again, err := agent.DecodeIterations(back)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", back, err)
		}
		if diff := cmp.Diff(it, again, protocmp.Transform()); diff != "" {
			t.Fatalf("round trip (-first,+second):\n%s", diff)
		}
	})
}
