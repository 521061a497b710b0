package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/internal/longtest"
	"github.com/drover-sched/drover/serve"
	"github.com/drover-sched/drover/serve/iterclient"
	pb "github.com/drover-sched/drover/serve/proto"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The end-to-end test of the live cluster (issue 17) runs drover as
// separate processes: the test binary re-executes itself as `drover` when
// this variable is set (TestMain), so no separate build is needed.
const execEnv = "DROVER_TEST_EXEC"

func TestMain(m *testing.M) {
	if os.Getenv(execEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	removeFixtures()
	os.Exit(code)
}

// proc is a drover process of the test, its output kept for failures.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs `drover args...` as a process, stopped (SIGKILL) at the end
// of the test if still running; its output is logged when the test fails.
func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), execEnv+"=1")
	p := &proc{name: name, cmd: cmd, out: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("--- %s output:\n%s", name, p.out.String())
		}
	})
	return p
}

// stop sends sig and waits for the process to exit.
func (p *proc) stop(t *testing.T, sig os.Signal) {
	t.Helper()
	p.cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("%s did not exit within 15 s of %v", p.name, sig)
	}
}

// freePort returns a loopback address with a port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// statFile writes a /proc/stat of 4 CPUs whose counters have advanced by
// busy x total jiffies since the start: each call adds 1000 jiffies per
// CPU, busy of them user time.
type statFile struct {
	path      string
	user, idl int64
}

func (s *statFile) advance(busy float64) error {
	s.user += int64(1000 * busy)
	s.idl += 1000 - int64(1000*busy)
	var b strings.Builder
	fmt.Fprintf(&b, "cpu  %d 0 0 %d 0 0 0 0 0 0\n", 4*s.user, 4*s.idl)
	for i := range 4 {
		fmt.Fprintf(&b, "cpu%d %d 0 0 %d 0 0 0 0 0 0\n", i, s.user, s.idl)
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, s.path)
}

// fixtureRoot copies serve/agent's node fixture into a writable root.
func fixtureRoot(t *testing.T, node string) string {
	t.Helper()
	src := filepath.Join("..", "..", "serve", "agent", "testdata", node, "t0")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestLiveClusterEndToEnd is issue 17's acceptance test: a server, three
// agents as separate processes on loopback (two reading synthetic /proc
// roots the test drives, one the machine's own /proc), and a fake
// training job whose workers report iteration times through the Go
// iteration client to their nodes' agents.
//   - STRN's answer changes when the node it chose becomes overloaded;
//   - the served sync strategy is not always BSP: a job whose measured
//     iterations straggle gets ASP where the model profile gave BSP;
//   - killing an agent marks its node stale within the timeout, and the
//     node is avoided;
//   - restarting the server restores its state (nodes, the job's profile).
//
// It is a long test (make test-long): its processes report on the wall
// clock (agents every 200 ms, stale after 2 s, a load change read within
// 1.2 s), which a loaded machine under -race cannot promise (issue 31);
// serve's tests check the same decisions on a fake clock.
func TestLiveClusterEndToEnd(t *testing.T) {
	longtest.Skip(t, "end-to-end: processes on the wall clock")
	if testing.Short() {
		t.Skip("end-to-end: processes and seconds of waiting")
	}
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("e2e-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	stateDir := filepath.Join(dir, "state")
	serverArgs := []string{"serve", "-addr", addr, "-metrics-addr", "", "-state-dir", stateDir, "-state-every", "500ms",
		"-stale-after", "2s", "-token-file", token, "-log-dir", filepath.Join(dir, "log")}
	server := start(t, "server", serverArgs...)

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(serve.BearerToken{Token: "e2e-secret", AllowInsecure: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewSchedulerClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The synthetic nodes' /proc/stat advances every 100 ms at the load
	// the test sets: 10% busy to begin with.
	roots := map[string]string{"fa": fixtureRoot(t, "node-a"), "fb": fixtureRoot(t, "node-b")}
	var mu sync.Mutex
	busy := map[string]float64{"fa": 0.1, "fb": 0.1}
	stats := map[string]*statFile{}
	for n, r := range roots {
		stats[n] = &statFile{path: filepath.Join(r, "proc", "stat")}
		stats[n].advance(0.1)
	}
	tick, stopTick := context.WithCancel(context.Background())
	defer stopTick()
	go func() {
		for {
			select {
			case <-tick.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			mu.Lock()
			for n, s := range stats {
				s.advance(busy[n])
			}
			mu.Unlock()
		}
	}()

	iterAddr := map[string]string{"fa": freePort(t), "fb": freePort(t)}
	agentArgs := func(node, root, iter string, rack int) []string {
		return []string{"agent", "-server", addr, "-node", node, "-root", root, "-interval", "200ms", "-iter-addr", iter,
			"-gpus", "4", "-rack", fmt.Sprint(rack), "-nic-gbps", "25", "-token-file", token}
	}
	agents := map[string]*proc{
		"fa":   start(t, "agent fa", agentArgs("fa", roots["fa"], iterAddr["fa"], 0)...),
		"fb":   start(t, "agent fb", agentArgs("fb", roots["fb"], iterAddr["fb"], 0)...),
		"real": start(t, "agent real", agentArgs("real", "/", "", 1)...),
	}

	status := func() *pb.LiveState {
		st, err := client.Status(ctx, &pb.StatusRequest{})
		if err != nil {
			return nil
		}
		return st.GetLive()
	}
	waitFor := func(what string, limit time.Duration, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(limit)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v (live state %v)", what, limit, status())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("three agents streaming", 20*time.Second, func() bool {
		l := status()
		return l != nil && l.GetNodes() == 3 && l.GetStaleNodes() == 0
	})
	time.Sleep(time.Second) // a few samples with rates

	place := func(job, model string, workers int) *pb.PlaceResponse {
		t.Helper()
		c := &pb.Cluster{IntraRackGbps: 100, CrossRackGbps: 25}
		for i, id := range []string{"fa", "fb", "real"} {
			// The request says every node is idle: what the server answers
			// with comes from the agents.
			// The machine's own node (whose load this test's processes set)
			// has 2 free GPUs, so a 4-worker job fits on a synthetic node
			// alone.
			free := int32(4)
			if id == "real" {
				free = 2
			}
			c.Nodes = append(c.Nodes, &pb.Node{Id: id, Gpus: 4, FreeGpus: free, Cpus: 4, MemoryGib: 16, NicGbps: 25, Rack: int32(i / 2)})
		}
		r, err := client.Place(ctx, &pb.PlaceRequest{Cluster: c, Job: &pb.Job{Id: job, Model: model, Workers: int32(workers)}})
		if err != nil {
			t.Fatalf("place %s: %v", job, err)
		}
		if !r.GetPlaced() {
			t.Fatalf("place %s: not placed: %s", job, r.GetReason())
		}
		return r
	}
	nodes := func(r *pb.PlaceResponse) []string {
		var out []string
		for _, a := range r.GetAssignments() {
			out = append(out, a.GetNodeId())
		}
		return out
	}

	// 1. STRN moves off a node whose load rises: the 4-worker job goes on
	// one synthetic node (consolidated: both are at 10% CPU), which then
	// goes to 99% CPU.
	first := nodes(place("probe-1", "imagenet", 4))[0]
	if first != "fa" && first != "fb" {
		t.Fatalf("first answer on %s; want a synthetic node", first)
	}
	mu.Lock()
	busy[first] = 0.99
	mu.Unlock()
	time.Sleep(1200 * time.Millisecond) // several samples at the new load
	for _, n := range nodes(place("probe-2", "imagenet", 4)) {
		if n == first {
			t.Errorf("STRN still places on %s after its CPU rose to 99%%", first)
		}
	}
	mu.Lock()
	busy[first] = 0.1
	mu.Unlock()

	// 2. The sync strategy follows the measured iterations: "train-1"
	// (imagenet, 2 workers) gets BSP from the model profile; its workers
	// (worker 0 on fa, worker 1 on fb) then report through their nodes'
	// agents, worker 1 taking twice as long every other iteration, and
	// its next answer is ASP.
	if s := place("train-1", "imagenet", 2).GetSync().GetKind(); s != pb.SyncKind_SYNC_BSP {
		t.Fatalf("train-1 unmeasured: sync %v, want BSP from the model profile", s)
	}
	// The training job's workers time their iterations with the Go
	// iteration client (serve/iterclient), each to its node's agent.
	train := func(node string, worker int, secs []float64) {
		t.Helper()
		c, err := iterclient.New(iterclient.Config{Addr: iterAddr[node], JobID: "train-1", Worker: worker})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range secs {
			c.Observe(time.Duration(x * float64(time.Second)))
		}
		if err := c.Close(); err != nil {
			t.Fatalf("iteration client of worker %d: %v", worker, err)
		}
	}
	even, strag := make([]float64, 32), make([]float64, 32)
	for k := range even {
		even[k], strag[k] = 0.5, 0.5
		if k%2 == 1 {
			strag[k] = 1.0
		}
	}
	train("fa", 0, even)
	train("fb", 1, strag)
	// The two workers' reports reach the server through two agents, in
	// either order: until both have, the profile is one even worker's
	// (BSP). The answer must turn to ASP once both are in.
	waitFor("train-1 profiled", 10*time.Second, func() bool { return status().GetProfiledJobs() >= 1 })
	waitFor("train-1 answered ASP (measured straggling)", 10*time.Second, func() bool {
		return place("train-1", "imagenet", 2).GetSync().GetKind() == pb.SyncKind_SYNC_ASP
	})

	// 3. A killed agent's node goes stale within the timeout (2 s), and
	// is avoided.
	killed := time.Now()
	agents["fb"].stop(t, syscall.SIGKILL)
	waitFor("fb stale", 2*time.Second+3*time.Second, func() bool { return status().GetStaleNodes() == 1 })
	t.Logf("fb stale %.1f s after its agent was killed (timeout 2 s)", time.Since(killed).Seconds())
	for j := range 3 {
		r := place(fmt.Sprintf("after-kill-%d", j), "cifar10", 2)
		for _, n := range nodes(r) {
			if n == "fb" {
				t.Errorf("placed on stale fb: %v", nodes(r))
			}
		}
		if !strings.Contains(r.GetReason(), "1 stale nodes avoided") {
			t.Errorf("reason %q does not mention the stale node", r.GetReason())
		}
	}

	// 4. A restarted server restores its state: the three nodes, the
	// measured profile (train-1 is ASP at once), and the agents reconnect.
	server.stop(t, syscall.SIGTERM)
	if _, err := os.Stat(filepath.Join(stateDir, "state.json")); err != nil {
		t.Fatalf("no state snapshot after shutdown: %v", err)
	}
	start(t, "server (restarted)", serverArgs...)
	waitFor("restarted server restored its nodes", 20*time.Second, func() bool {
		l := status()
		return l != nil && l.GetNodes() == 3
	})
	// The restored nodes are given the stale timeout afresh (the server's
	// downtime is not the agents' silence): train-1 is placed at once,
	// with its restored profile.
	if s := place("train-1", "imagenet", 2).GetSync().GetKind(); s != pb.SyncKind_SYNC_ASP {
		t.Errorf("after restart, train-1: sync %v, want ASP (restored profile)", s)
	}
	waitFor("fa and real reconnected, fb stale again", 20*time.Second, func() bool {
		l := status()
		return l != nil && l.GetStaleNodes() == 1
	})
}
