package iterclient_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/drover-sched/drover/serve/agent"
	"github.com/drover-sched/drover/serve/iterclient"
)

// A training loop reporting its iteration times; a stand-in for the
// agent prints what arrives.
func Example() {
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		it, err := agent.DecodeIterations(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Printf("%s worker %d: %v s, %d dropped\n", it.JobId, it.Worker, it.Seconds, it.Dropped)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer stub.Close()

	c, err := iterclient.New(iterclient.Config{
		Addr:   strings.TrimPrefix(stub.URL, "http://"),
		JobID:  "job-7",
		Worker: 3,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range []time.Duration{300 * time.Millisecond, 310 * time.Millisecond, 295 * time.Millisecond} {
		// trainStep() would run here; the example feeds fixed times.
		c.Observe(d)
	}
	if err := c.Close(); err != nil { // posts what is buffered
		log.Fatal(err)
	}
	// Output:
	// job-7 worker 3: [0.3 0.31 0.295] s, 0 dropped
}
