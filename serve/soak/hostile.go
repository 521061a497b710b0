package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"
)

// HostileSpec is one phase of the clients other than the well-behaved
// one (agents, Reports, slowloris), as a child process receives it.
type HostileSpec struct {
	Config   Config
	Phase    string
	Duration time.Duration
	Jobs     int
}

// HostileResult is what those clients delivered.
type HostileResult struct {
	AgentsAsked                  int
	AgentSessions, AgentFailures uint64
	JobsReported, ReportErrors   uint64
	LastReportError              string
	Slow                         map[string]SlowStats
}

// RunHostile runs the agents, the Reports and the slowloris of spec for
// spec.Duration (or until ctx ends), makes them leave, closing every
// connection, and returns what they delivered.
func RunHostile(ctx context.Context, spec HostileSpec) (HostileResult, error) {
	c, d := spec.Config, spec.Duration
	reportConn, err := dial(c.Addrs.GRPC)
	if err != nil {
		return HostileResult{}, err
	}
	defer reportConn.Close()
	lctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	agents := &agentChurn{addr: c.Addrs.GRPC, rate: c.AgentRate, life: c.AgentLife, nodes: c.Nodes, run: spec.Phase}
	reports := &reporter{conn: reportConn, prefix: "soak-" + spec.Phase, jobs: spec.Jobs, span: d - d/20,
		workers: c.ReportWorkers, iterations: c.ReportIterations, nodes: c.Nodes, slots: c.ReportSlots}
	slow := slowlorises(c)
	var wg sync.WaitGroup
	wg.Go(func() { agents.churn(lctx) })
	if spec.Jobs > 0 {
		wg.Go(func() { reports.run(lctx) })
	}
	for _, s := range slow {
		wg.Go(func() { s.run(lctx) })
	}
	wg.Wait()
	res := HostileResult{AgentsAsked: int(agents.asked.Load()), AgentSessions: agents.sessions.Load(), AgentFailures: agents.failures.Load(),
		JobsReported: reports.reported.Load(), ReportErrors: reports.errors.Load(), Slow: map[string]SlowStats{}}
	reports.lastErrorMu.Lock()
	res.LastReportError = reports.lastError
	reports.lastErrorMu.Unlock()
	for _, s := range slow {
		res.Slow[s.name] = s.stats()
	}
	return res, nil
}

// ServeHostile is the child process's side of Config.HostileCommand: it
// reads a HostileSpec as JSON from r, runs it and writes the
// HostileResult as JSON to w.
func ServeHostile(ctx context.Context, r io.Reader, w io.Writer) error {
	var spec HostileSpec
	if err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&spec); err != nil {
		return fmt.Errorf("soak: hostile spec: %w", err)
	}
	if err := spec.Config.Validate(); err != nil {
		return err
	}
	res, err := RunHostile(ctx, spec)
	if err != nil {
		return err
	}
	return json.NewEncoder(w).Encode(res)
}

// startHostile starts spec's clients: in a child process running
// c.HostileCommand when it is set (so that thousands of slow
// connections do not queue the well-behaved client's wake-ups behind
// them in this process's scheduler), else in this process. wait
// returns their result once they have left.
func startHostile(ctx context.Context, spec HostileSpec) (wait func() (HostileResult, error), err error) {
	argv := spec.Config.HostileCommand
	if len(argv) == 0 {
		done := make(chan struct{})
		var res HostileResult
		var rerr error
		go func() { res, rerr = RunHostile(ctx, spec); close(done) }()
		return func() (HostileResult, error) { <-done; return res, rerr }, nil
	}
	in, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &out, &errOut
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("soak: start the hostile clients (%s): %w", argv[0], err)
	}
	return func() (HostileResult, error) {
		var res HostileResult
		if err := cmd.Wait(); err != nil {
			return res, fmt.Errorf("soak: the hostile clients: %w: %s", err, bytes.TrimSpace(errOut.Bytes()))
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			return res, fmt.Errorf("soak: the hostile clients' result: %w", err)
		}
		return res, nil
	}, nil
}
