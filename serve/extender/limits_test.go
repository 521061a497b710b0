package extender_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/extender"
	pb "github.com/drover-sched/drover/serve/proto"
)

// bigBody is issue 18's /filter body: a Drover pod and n whole nodes of
// about 131 bytes each (240,000 of them: 31.5 MB), generated as it is
// read so that the test holds none of it.
type bigBody struct {
	r    io.Reader
	read int64
}

// nodeJSON is one node of bigBody.
func nodeJSON(i int) string {
	return fmt.Sprintf(`{"metadata":{"name":"node-%06d","labels":{"drover.io/rack":"rack-%03d"}},"status":{"allocatable":{"nvidia.com/gpu":"8","cpu":"64"}}}`, i, i/32)
}

func newBigBody(n int) *bigBody {
	i := 0
	nodes := readerFunc(func(p []byte) (int, error) {
		if i == n {
			return 0, io.EOF
		}
		s := nodeJSON(i)
		if i > 0 {
			s = "," + s
		}
		if len(p) < len(s) {
			return 0, io.ErrShortBuffer
		}
		i++
		return copy(p, s), nil
	})
	pod := `{"Pod":{"metadata":{"name":"w-0","namespace":"ml","annotations":{"drover.io/job-id":"j","drover.io/workers":"8"}},` +
		`"spec":{"containers":[{"name":"t","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},"Nodes":{"items":[`
	return &bigBody{r: io.MultiReader(strings.NewReader(pod), bufio.NewReaderSize(nodes, 4096), strings.NewReader("]}}"))}
}

func (b *bigBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestBodyOverNodeCapStopsEarly is issue 18's extender memory defect: a
// 31.5 MB /filter body of 240,000 nodes was decoded whole (RSS 34 MB to
// 1.28 GB) before the Core's 4,096-node cap refused it. The cap is now
// enforced while the nodes are read: the call is refused with 413 naming
// Nodes.items after about 4,097 nodes' bytes, having allocated the
// memory of 4,096 decoded nodes, not 240,000.
func TestBodyOverNodeCapStopsEarly(t *testing.T) {
	h, err := extender.New(newCore(t), extender.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const nodes = 240_000
	body := newBigBody(nodes)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, extender.FilterPath, body))
	runtime.ReadMemStats(&after)

	var e extender.RequestError
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusRequestEntityTooLarge || e.Field != "Nodes.items" || !strings.Contains(e.Problem, "more than 4096 nodes") {
		t.Fatalf("status %d: %s; want 413 naming Nodes.items", rec.Code, rec.Body)
	}
	total := int64(nodes) * int64(len(nodeJSON(nodes/2))+1)
	capBytes := int64(serve.DefaultLimits.MaxNodes+1) * int64(len(nodeJSON(nodes/2))+1)
	if body.read > capBytes+64<<10 {
		t.Errorf("read %d of the body's %d bytes; want at most the first %d nodes' %d bytes (and the decoder's buffer)", body.read, total, serve.DefaultLimits.MaxNodes+1, capBytes)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("body %.1f MB, read %.2f MB, allocated %.1f MB", float64(total)/1e6, float64(body.read)/1e6, float64(alloc)/1e6)
	if alloc > 64<<20 {
		t.Errorf("allocated %d MB refusing the body; want < 64 MB (4,096 decoded nodes)", alloc>>20)
	}
}

// The node cap holds for node names too, and a request at the cap is
// answered.
func TestNodeCap(t *testing.T) {
	l := serve.DefaultLimits
	l.MaxNodes = 2
	s, _ := startExtender(t, newCore(t), extender.Config{Limits: l})
	pod := `{"metadata":{"name":"w-0","namespace":"ml"}}`
	tests := []struct {
		name      string
		body      string
		wantCode  int
		wantField string
	}{
		{"nodes at the cap", `{"Pod":` + pod + `,"Nodes":{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}}`, http.StatusOK, ""},
		{"nodes over the cap", `{"Pod":` + pod + `,"Nodes":{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}},{"metadata":{"name":"c"}}]}}`, http.StatusRequestEntityTooLarge, "Nodes.items"},
		{"names at the cap", `{"Pod":` + pod + `,"NodeNames":["a","b"]}`, http.StatusOK, ""},
		{"names over the cap", `{"Pod":` + pod + `,"NodeNames":["a","b","c"]}`, http.StatusRequestEntityTooLarge, "NodeNames"},
		{"case-insensitive keys", `{"pod":` + pod + `,"nodes":{"Items":[{},{},{}]}}`, http.StatusRequestEntityTooLarge, "Nodes.items"},
		{"over the cap under an unknown key", `{"Pod":` + pod + `,"Other":{"items":[1,2,3]},"NodeNames":[]}`, http.StatusOK, ""},
		{"bad node", `{"Pod":` + pod + `,"Nodes":{"items":[{"metadata":{"name":7}}]}}`, http.StatusBadRequest, "Nodes.items.metadata.name"},
		{"nodes not an object", `{"Pod":` + pod + `,"Nodes":[]}`, http.StatusBadRequest, "Nodes"},
		{"names not an array", `{"Pod":` + pod + `,"NodeNames":"a"}`, http.StatusBadRequest, "NodeNames"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res json.RawMessage
			code, err := s.post("filter", []byte(tt.body), &res)
			if code != tt.wantCode {
				t.Fatalf("status %d (%v), want %d", code, err, tt.wantCode)
			}
			if tt.wantField != "" {
				if got := rawError(t, s, "filter", tt.body); got.Field != tt.wantField {
					t.Errorf("error %+v, want field %q", got, tt.wantField)
				}
			}
		})
	}
}

// blockingPlacer holds every Place call until release is closed.
type blockingPlacer struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blockingPlacer) Place(ctx context.Context, req *pb.PlaceRequest) (*pb.PlaceResponse, error) {
	b.entered <- struct{}{}
	<-b.release
	return &pb.PlaceResponse{}, nil
}

// Calls beyond MaxConcurrent are refused at once with 429 and
// Retry-After, once their bodies are read; the others are answered.
func TestConcurrentCallsBounded(t *testing.T) {
	p := &blockingPlacer{entered: make(chan struct{}, 4), release: make(chan struct{})}
	s, _ := startExtender(t, p, extender.Config{MaxConcurrent: 2})
	body := []byte(`{"Pod":{"metadata":{"name":"w-0","namespace":"ml"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},` +
		`"Nodes":{"items":[{"metadata":{"name":"a"},"status":{"allocatable":{"nvidia.com/gpu":"4"}}}]}}`)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range 2 {
		wg.Go(func() {
			var res json.RawMessage
			codes[i], _ = s.post("filter", body, &res)
		})
	}
	<-p.entered
	<-p.entered
	resp, err := s.client.Post(s.urlPrefix+"/prioritize", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	var e extender.RequestError
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || e.Field != "request" {
		t.Errorf("third call: status %d, Retry-After %q, %+v; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), e)
	}
	close(p.release)
	wg.Wait()
	if codes[0] != http.StatusOK || codes[1] != http.StatusOK {
		t.Errorf("calls within the bound: %v, want 200 200", codes)
	}
	var res json.RawMessage
	if code, err := s.post("filter", body, &res); code != http.StatusOK {
		t.Errorf("after the others ended: %d, %v", code, err)
	}
}

// TestSlowBodyTimesOut is issue 18's slow-body defect: a body sent one
// byte every 2 s held a connection for 26 s. The body must now be read
// within ReadTimeout: the call is answered 408 and the connection
// closed. The body below would take 100 s to send (a byte every 100 ms),
// so the bounds of a minute tell a server that waits for it from one that
// times out, and cannot pass on a loaded machine (issue 31).
func TestSlowBodyTimesOut(t *testing.T) {
	h, err := extender.New(newCore(t), extender.Config{ReadTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer after %v: %v", time.Since(start), err)
	}
	var e extender.RequestError
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || e.Field != "body" {
		t.Errorf("status %d, %+v; want 408 naming the body", resp.StatusCode, e)
	}
	// The server closes the connection (EOF, or a reset for the bytes
	// it did not read); a timeout is a connection still open.
	if _, err := io.ReadAll(conn); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("connection still open after %v: %v", time.Since(start), err)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("connection held %v, want about the 300ms ReadTimeout, not the 100 s the body takes", took)
	}
}
