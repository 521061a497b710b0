package soak

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// probeTimeout bounds one lockout probe: a listener that cannot take a
// fresh connection and answer one small call in this time is locked out
// (kube-scheduler's extender calls time out after 5 s by default).
const probeTimeout = 2 * time.Second

// probeBody is a well-formed extender filter call for one pod on two
// nodes (docs/kube-scheduler-extender.md).
const probeBody = `{"Pod":{"metadata":{"name":"soak-probe","namespace":"soak","annotations":{"drover.io/job-id":"soak-probe","drover.io/workers":"1"}},` +
	`"spec":{"containers":[{"name":"t","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},` +
	`"Nodes":{"items":[{"metadata":{"name":"node-0"},"status":{"allocatable":{"nvidia.com/gpu":"4"}}},` +
	`{"metadata":{"name":"node-1"},"status":{"allocatable":{"nvidia.com/gpu":"4"}}}]}}`

// prober asks each listener, on a fresh connection, one well-formed
// call and counts the answers by listener.
type prober struct {
	addrs Addrs
	mu    sync.Mutex
	stats map[string]ProbeStats
}

// probeAll probes every listener once, concurrently.
func (p *prober) probeAll() {
	var wg sync.WaitGroup
	for name, f := range map[string]func() error{
		"grpc":     func() error { return probeHealth(p.addrs.GRPC) },
		"fast":     func() error { return probeHealth(p.addrs.Fast) },
		"extender": func() error { return probeHTTP(http.MethodPost, "http://"+p.addrs.Extender+"/filter", probeBody) },
		"metrics":  func() error { return probeHTTP(http.MethodGet, "http://"+p.addrs.Metrics+"/healthz", "") },
	} {
		wg.Go(func() {
			err := f()
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.stats == nil {
				p.stats = map[string]ProbeStats{}
			}
			st := p.stats[name]
			if err != nil {
				st.Failed++
				st.LastError = err.Error()
			} else {
				st.OK++
			}
			p.stats[name] = st
		})
	}
	wg.Wait()
}

// results returns a copy of the counts.
func (p *prober) results() map[string]ProbeStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]ProbeStats{}
	for k, v := range p.stats {
		out[k] = v
	}
	return out
}

// probeHealth dials addr and asks grpc.health.v1 Check.
func probeHealth(addr string) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

// probeHTTP sends one request on a fresh connection and wants 200.
func probeHTTP(method, url, body string) error {
	c := &http.Client{Timeout: probeTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s", method, url, resp.Status)
	}
	return nil
}
