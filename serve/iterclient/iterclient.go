package iterclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// Defaults of the Config fields, and the environment variables it reads.
const (
	// DefaultAddr is where `drover agent` listens by default.
	DefaultAddr = "127.0.0.1:9465"
	// DefaultInterval is how often buffered times are posted.
	DefaultInterval = time.Second
	// DefaultBatch is how many buffered times trigger a post before the
	// interval is up.
	DefaultBatch = 64
	// DefaultBuffer is how many times the client holds; beyond it Observe
	// drops and counts.
	DefaultBuffer = 4096
	// DefaultTimeout bounds one post.
	DefaultTimeout = 2 * time.Second

	// EnvAddr, EnvJobID, EnvWorker and EnvRank are the environment
	// variables New reads for the fields left zero (RANK is what
	// torchrun sets).
	EnvAddr   = "DROVER_AGENT_ADDR"
	EnvJobID  = "DROVER_JOB_ID"
	EnvWorker = "DROVER_WORKER"
	EnvRank   = "RANK"
)

// The agent's limits: times per report, the largest worker index.
const (
	maxPerReport = 4096
	maxWorker    = 1 << 20
)

// Config configures a Client. Every field has a default.
type Config struct {
	// Addr is the agent's iteration endpoint, host:port (default
	// $DROVER_AGENT_ADDR, else DefaultAddr).
	Addr string
	// JobID names the job as the scheduler does (default $DROVER_JOB_ID;
	// New fails when both are empty).
	JobID string
	// Worker is this process's worker index. Zero takes $DROVER_WORKER,
	// else $RANK, when set.
	Worker int
	// Interval, Batch, Buffer and Timeout default to DefaultInterval,
	// DefaultBatch, DefaultBuffer and DefaultTimeout.
	Interval time.Duration
	Batch    int
	Buffer   int
	Timeout  time.Duration
	// HTTPClient posts the reports (default: a client with Timeout that
	// ignores proxy settings: the agent is local).
	HTTPClient *http.Client
	// Logger receives the first failure to post and the recovery
	// (default slog.Default()).
	Logger *slog.Logger
}

// withDefaults checks c and fills in its defaults from the environment and
// the package's constants.
func (c Config) withDefaults(getenv func(string) string) (Config, error) {
	if c.Addr == "" {
		c.Addr = getenv(EnvAddr)
	}
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.JobID == "" {
		c.JobID = getenv(EnvJobID)
	}
	if c.Worker == 0 {
		for _, name := range []string{EnvWorker, EnvRank} {
			if v := getenv(name); v != "" {
				w, err := strconv.Atoi(v)
				if err != nil || w < -1 {
					return c, fmt.Errorf("iterclient: %s=%q is not a worker index", name, v)
				}
				c.Worker = w
				break
			}
		}
	}
	switch {
	case c.JobID == "":
		return c, fmt.Errorf("iterclient: Config.JobID is empty and %s is not set", EnvJobID)
	case len(c.JobID) > 256:
		return c, fmt.Errorf("iterclient: Config.JobID is %d bytes, more than 256", len(c.JobID))
	case c.Worker < -1 || c.Worker > maxWorker:
		return c, fmt.Errorf("iterclient: Config.Worker is %d, want an index up to %d or -1 (the whole job)", c.Worker, maxWorker)
	case c.Interval < 0 || c.Batch < 0 || c.Buffer < 0 || c.Timeout < 0:
		return c, fmt.Errorf("iterclient: Config Interval %v, Batch %d, Buffer %d, Timeout %v must not be negative", c.Interval, c.Batch, c.Buffer, c.Timeout)
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Batch == 0 {
		c.Batch = DefaultBatch
	}
	if c.Buffer == 0 {
		c.Buffer = DefaultBuffer
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: c.Timeout, Transport: &http.Transport{Proxy: nil, MaxIdleConns: 1}}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// A Client reports a training process's iteration times to the node's
// drover agent. Observe never blocks the training loop: it appends to a
// bounded buffer, and a goroutine posts batches. Its methods are safe for
// concurrent use.
type Client struct {
	cfg Config
	url string

	mu      sync.Mutex
	buf     []float64
	dropped int64 // since the last report the agent accepted
	closed  bool
	stats   Stats
	failing bool

	flush     chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Stats are a Client's counters.
type Stats struct {
	// Sent counts iteration times the agent accepted; Reports the posts.
	Sent, Reports int64
	// Dropped counts times dropped: a full buffer, a non-positive
	// duration, a post that failed, or Observe after Close.
	Dropped int64
}

// New checks cfg, fills in its defaults (from the environment for Addr,
// JobID and Worker) and starts the client's posting goroutine; Close
// stops it.
func New(cfg Config) (*Client, error) {
	c, err := cfg.withDefaults(os.Getenv)
	if err != nil {
		return nil, err
	}
	cl := &Client{
		cfg:   c,
		url:   "http://" + c.Addr + "/v1/iterations",
		flush: make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go cl.loop()
	return cl, nil
}

// Observe records one iteration's time. It never blocks on the network:
// when the buffer is full, or d is not positive, the time is dropped and
// counted, and the count goes out in the next report.
func (c *Client) Observe(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || d <= 0 || len(c.buf) >= c.cfg.Buffer {
		c.dropped++
		c.stats.Dropped++
		return
	}
	c.buf = append(c.buf, d.Seconds())
	if len(c.buf) >= c.cfg.Batch {
		select {
		case c.flush <- struct{}{}:
		default:
		}
	}
}

// Stats returns the client's counters.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Close posts what is buffered and stops the client. It returns the final
// post's error, if any; later calls return the same.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true // later times are dropped and counted
		c.mu.Unlock()
		close(c.stop)
		<-c.done
		c.cfg.HTTPClient.CloseIdleConnections()
	})
	return c.closeErr
}

func (c *Client) loop() {
	defer close(c.done)
	t := time.NewTicker(c.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			c.post()
		case <-c.flush:
			c.post()
		case <-c.stop:
			c.closeErr = c.post()
			return
		}
	}
}

// report is the body of POST /v1/iterations (serve/agent's
// IterationReport).
type report struct {
	JobID   string    `json:"job_id"`
	Worker  int       `json:"worker"`
	Seconds []float64 `json:"seconds"`
	Dropped int64     `json:"dropped"`
}

// post sends what is buffered, in reports of at most maxPerReport times.
// A report that fails is counted as dropped.
func (c *Client) post() error {
	for {
		c.mu.Lock()
		n := min(len(c.buf), maxPerReport)
		r := report{JobID: c.cfg.JobID, Worker: c.cfg.Worker, Seconds: c.buf[:n:n], Dropped: c.dropped}
		c.buf = append([]float64(nil), c.buf[n:]...)
		c.dropped = 0
		more := len(c.buf) > 0
		c.mu.Unlock()
		if n == 0 && r.Dropped == 0 {
			return nil
		}
		err := c.send(r)
		c.mu.Lock()
		if err != nil {
			c.dropped += r.Dropped + int64(n)
			c.stats.Dropped += int64(n)
			if !c.failing {
				c.cfg.Logger.Warn("iterclient: posting iteration times failed; they are counted as dropped", "url", c.url, "err", err)
			}
		} else {
			c.stats.Sent += int64(n)
			c.stats.Reports++
			if c.failing {
				c.cfg.Logger.Info("iterclient: posting iteration times again", "url", c.url)
			}
		}
		c.failing = err != nil
		c.mu.Unlock()
		if err != nil || !more {
			return err
		}
	}
}

// send posts one report.
func (c *Client) send(r report) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}
