package soak

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// ParseMetrics reads Prometheus's text exposition format and returns
// each series' value keyed by the series as written ("go_goroutines",
// `drover_live_jobs{kind="all"}`). Comments, blank lines and lines whose
// value does not parse are left out; a timestamp after the value is
// ignored.
func ParseMetrics(text []byte) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		// The value follows the series: after the closing brace of the
		// labels (whose values may hold spaces), else after the name.
		cut := strings.LastIndexByte(line, '}')
		if cut < 0 {
			cut = strings.IndexByte(line, ' ')
			if cut < 0 {
				continue
			}
		} else {
			cut++
		}
		f := strings.Fields(line[cut:])
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		out[strings.TrimSpace(line[:cut])] = v
	}
	return out
}

// Sum returns the sum of every series of metric name in m (every label
// set), and whether there was one.
func Sum(m map[string]float64, name string) (float64, bool) {
	var sum float64
	found := false
	for k, v := range m {
		if k == name || strings.HasPrefix(k, name+"{") {
			sum += v
			found = true
		}
	}
	return sum, found
}

// sampleOf reads a Sample's resources from a server's metrics.
func sampleOf(m map[string]float64) (Sample, error) {
	var s Sample
	for _, f := range []struct {
		name string
		dst  *float64
	}{
		{"go_goroutines", &s.Goroutines}, {"process_resident_memory_bytes", &s.RSS},
		{"go_memstats_heap_inuse_bytes", &s.Heap}, {"process_open_fds", &s.FDs},
	} {
		v, ok := m[f.name]
		if !ok {
			return s, fmt.Errorf("soak: the server's metrics have no %s", f.name)
		}
		*f.dst = v
	}
	s.CPU = m["process_cpu_seconds_total"]
	s.LiveJobs = m[`drover_live_jobs{kind="all"}`]
	s.LiveNodes, _ = Sum(m, "drover_live_nodes")
	return s, nil
}

// ServedWithin returns how many Place calls the server answered through
// listener within bound, and in all, from its
// drover_grpc_request_duration_seconds histogram; ok is false when the
// histogram has no bucket at bound.
func ServedWithin(m map[string]float64, listener string, bound time.Duration) (within, total float64, ok bool) {
	le := `le="` + strconv.FormatFloat(bound.Seconds(), 'g', -1, 64) + `"`
	want := []string{`listener="` + listener + `"`, `method="/drover.v1.Scheduler/Place"`}
	has := func(k string, parts ...string) bool {
		for _, p := range parts {
			if !strings.Contains(k, p) {
				return false
			}
		}
		return true
	}
	for k, v := range m {
		switch {
		case strings.HasPrefix(k, "drover_grpc_request_duration_seconds_bucket{") && has(k, append(want, le)...):
			within, ok = v, true
		case strings.HasPrefix(k, "drover_grpc_request_duration_seconds_count{") && has(k, want...):
			total = v
		}
	}
	if !ok {
		return 0, 0, false
	}
	return within, total, true
}

// Scraper reads a server's /metrics. Each scrape opens a new
// connection and closes it, so the scraper holds nothing on the server
// between samples.
type Scraper struct {
	url    string
	client *http.Client
	// Listener ("fast" or "grpc") and Bound, when set, have each Sample
	// count the Place calls answered through Listener, and those
	// answered within Bound (PlaceServed, PlaceServedWithin).
	Listener string
	Bound    time.Duration
}

// NewScraper returns a scraper of http://addr/metrics.
func NewScraper(addr string) *Scraper {
	return &Scraper{url: "http://" + addr + "/metrics",
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
}

// Scrape reads the server's metrics.
func (s *Scraper) Scrape(ctx context.Context) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("soak: GET %s: %s", s.url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	return ParseMetrics(b), nil
}

// Sample reads the server's resources, and this machine's load.
func (s *Scraper) Sample(ctx context.Context) (Sample, error) {
	m, err := s.Scrape(ctx)
	if err != nil {
		return Sample{}, err
	}
	smp, err := sampleOf(m)
	if s.Listener != "" {
		smp.PlaceServedWithin, smp.PlaceServed, _ = ServedWithin(m, s.Listener, s.Bound)
	}
	if b, lerr := os.ReadFile("/proc/loadavg"); lerr == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			smp.Load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return smp, err
}
