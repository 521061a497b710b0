package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Addrs are the server's four listeners.
type Addrs struct {
	// GRPC is -addr (grpc-go's server: Place, Report, the telemetry
	// streams); Fast is -place-addr; Extender is -extender-addr; Metrics
	// is -metrics-addr.
	GRPC, Fast, Extender, Metrics string
}

// PortAddrs returns the loopback addresses of four consecutive ports
// from base: gRPC, fast, extender, metrics.
func PortAddrs(base int) Addrs {
	a := func(i int) string { return "127.0.0.1:" + strconv.Itoa(base+i) }
	return Addrs{GRPC: a(0), Fast: a(1), Extender: a(2), Metrics: a(3)}
}

// ServerConfig says how to start the server under test.
type ServerConfig struct {
	// Binary is the drover executable.
	Binary string
	// CPUs, when set, is a taskset CPU list ("0", "0,2", "0-1"): the
	// server runs pinned to it with GOMAXPROCS set to its size.
	CPUs string
	// Addrs are the listeners to open.
	Addrs Addrs
	// Args are further flags of drover serve.
	Args []string
	// Output receives the server's standard output and error.
	Output io.Writer
}

// Server is a drover serve process.
type Server struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartServer starts drover serve with every listener of c.Addrs and
// waits until its /metrics answers (at most 30 s).
func StartServer(c ServerConfig) (*Server, error) {
	args := append([]string{"serve", "-addr", c.Addrs.GRPC, "-place-addr", c.Addrs.Fast,
		"-extender-addr", c.Addrs.Extender, "-metrics-addr", c.Addrs.Metrics}, c.Args...)
	name := c.Binary
	env := os.Environ()
	if c.CPUs != "" {
		n, err := CountCPUs(c.CPUs)
		if err != nil {
			return nil, err
		}
		args = append([]string{"-c", c.CPUs, c.Binary}, args...)
		name = "taskset"
		env = append(env, "GOMAXPROCS="+strconv.Itoa(n))
	}
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, c.Output, c.Output
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("soak: start %s: %w", name, err)
	}
	s := &Server{cmd: cmd, done: make(chan struct{})}
	go func() { s.err = cmd.Wait(); close(s.done) }()
	sc := NewScraper(c.Addrs.Metrics)
	for deadline := time.Now().Add(30 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := sc.Scrape(ctx)
		cancel()
		switch {
		case err == nil:
			return s, nil
		case s.Exited():
			return nil, fmt.Errorf("soak: the server exited before it served: %v", s.err)
		case time.Now().After(deadline):
			s.Stop(5 * time.Second)
			return nil, fmt.Errorf("soak: the server's /metrics did not answer in 30 s: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// PID returns the server's process id (taskset execs it, so it is the
// server's own).
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Exited reports whether the server has exited.
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM and waits up to grace for the exit, then kills it.
// It returns the server's exit error, nil for a clean exit.
func (s *Server) Stop(grace time.Duration) error {
	if !s.Exited() {
		s.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-s.done:
	case <-time.After(grace):
		s.cmd.Process.Kill()
		<-s.done
		return errors.New("soak: the server did not stop within its grace; killed")
	}
	return s.err
}

// CountCPUs returns the number of CPUs in a taskset list ("0", "0,2",
// "0-3,6").
func CountCPUs(list string) (int, error) {
	n := 0
	for part := range strings.SplitSeq(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0, fmt.Errorf("soak: CPU list %q: %q is not a CPU", list, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0, fmt.Errorf("soak: CPU list %q: %q is not a range", list, part)
			}
		}
		n += b - a + 1
	}
	return n, nil
}

// AllowedCPUs returns the CPUs this process may run on
// (Cpus_allowed_list of /proc/self/status), or "?" where unknown.
func AllowedCPUs() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
