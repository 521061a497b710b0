package extender_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-sched/drover/serve/extender"
)

// goodBody is a well-formed /filter call for one Drover pod and one node.
const goodBody = `{"Pod":{"metadata":{"name":"w-0","namespace":"ml"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},` +
	`"Nodes":{"items":[{"metadata":{"name":"a"},"status":{"allocatable":{"nvidia.com/gpu":"4"}}}]}}`

// watched serves h and tells, per request, when the handler first reads
// its body (entered) and how many body bytes it has read.
type watched struct {
	entered chan struct{}
	read    atomic.Int64
}

func (wt *watched) serve(t *testing.T, h http.Handler) *scheduler {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = &watchedBody{ReadCloser: r.Body, wt: wt}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &scheduler{urlPrefix: srv.URL, client: srv.Client()}
}

type watchedBody struct {
	io.ReadCloser
	wt   *watched
	once sync.Once
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.once.Do(func() { b.wt.entered <- struct{}{} })
	n, err := b.ReadCloser.Read(p)
	b.wt.read.Add(int64(n))
	return n, err
}

// slowCall opens a connection to s and sends a /filter call whose body
// is 1,000 bytes long, of which only first is sent.
func slowCall(t *testing.T, s *scheduler, first string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.urlPrefix, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n%s", first)
	return c
}

// TestSlowBodiesDoNotHoldSlots is issue 32's extender lockout: four
// connections sending a slow partial body held the four MaxConcurrent
// slots while their bodies trickled in, and every call of kube-scheduler
// was answered 429 (with ignorable: true it then schedules without
// Drover). A slot is now taken once the body is read, so a well-formed
// call is answered while four bodies are still arriving.
func TestSlowBodiesDoNotHoldSlots(t *testing.T) {
	h, err := extender.New(newCore(t), extender.Config{ReadTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	wt := &watched{entered: make(chan struct{}, 8)}
	s := wt.serve(t, h)
	for range 4 {
		slowCall(t, s, `{"Pod":`)
	}
	for range 4 {
		<-wt.entered // each slow call's handler is reading its body
	}
	var res json.RawMessage
	if code, err := s.post("filter", []byte(goodBody), &res); code != http.StatusOK {
		t.Fatalf("a well-formed call while four bodies trickle in: %d, %v; want 200", code, err)
	}
}

// TestBufferedBytesBounded: the bytes read by the calls in progress,
// bodies still arriving included, are bounded by MaxBufferedBytes: a
// call that would pass it is answered 429 with Retry-After, and once
// the slow call's connection is gone its bytes are given back.
func TestBufferedBytesBounded(t *testing.T) {
	h, err := extender.New(newCore(t), extender.Config{ReadTimeout: time.Hour, MaxBufferedBytes: 600})
	if err != nil {
		t.Fatal(err)
	}
	wt := &watched{entered: make(chan struct{}, 8)}
	s := wt.serve(t, h)
	slow := slowCall(t, s, `{"Pod":`+strings.Repeat(" ", 493)) // 500 bytes
	<-wt.entered
	for deadline := time.Now().Add(time.Minute); wt.read.Load() < 500; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // a hang guard
			t.Fatalf("the handler read %d of the 500 bytes sent in a minute", wt.read.Load())
		}
	}
	resp, err := s.client.Post(s.urlPrefix+"/filter", "application/json", strings.NewReader(goodBody))
	if err != nil {
		t.Fatal(err)
	}
	var e extender.RequestError
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || e.Field != "request" {
		t.Errorf("a call over the budget: status %d, Retry-After %q, %+v; want 429 naming the request", resp.StatusCode, resp.Header.Get("Retry-After"), e)
	}
	slow.Close()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		var res json.RawMessage
		code, err := s.post("filter", []byte(goodBody), &res)
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) { // a hang guard
			t.Fatalf("a minute after the slow call's connection closed: %d, %v; want its bytes given back", code, err)
		}
	}
}
