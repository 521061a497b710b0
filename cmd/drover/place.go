package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/drover-sched/drover/env/profile"
	"github.com/drover-sched/drover/internal/inputfile"
	pb "github.com/drover-sched/drover/serve/proto"
)

// runPlace is `drover place`: a client that sends one Place request (from
// flags, a JSON file or standard input) to a drover server and prints the
// answer, or asks for the server's status. With -live the request's
// cluster is the nodes the server knows (Status with nodes). When the
// server answers that the job is not placed, it prints the answer and
// returns errNotPlaced, exit status 3 (ExitCode).
func runPlace(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("place", stderr)
	addr := fs.String("addr", "127.0.0.1:50051", "server address")
	reqFile := fs.String("request", "", "read the PlaceRequest as JSON (protojson) from this file, or from standard input with -; it overrides the cluster and job flags")
	live := fs.Bool("live", false, "place on the nodes the server knows (its live state, fed by drover agent; asked with Status) instead of the synthetic cluster of -nodes, -gpus, -free, -rack-size and -util; the job flags apply")
	printReq := fs.Bool("print-request", false, "print the request as JSON and exit (for ghz -D)")
	status := fs.Bool("status", false, "ask for the server's status instead")
	nodes := fs.Int("nodes", 16, "cluster: number of nodes")
	gpus := fs.Int("gpus", 4, "cluster: GPUs per node")
	free := fs.Int("free", -1, "cluster: free GPUs per node (-1: all)")
	rackSize := fs.Int("rack-size", 8, "cluster: nodes per rack")
	util := fs.Float64("util", 0.3, "cluster: CPU, memory-bandwidth and NIC utilisation of every node, in [0, 1]")
	jobID := fs.String("job", "job-1", "job: id")
	model := fs.String("model", "cifar10", "job: model profile, one of "+strings.Join(profile.BuiltinNames(), ", "))
	workers := fs.Int("workers", 4, "job: GPU workers")
	arch := fs.String("arch", "ring", "job: ring or ps")
	ps := fs.Int("ps", 0, "job: parameter servers (ps only)")
	duration := fs.Float64("duration", 3600, "job: expected duration in seconds")
	timeout := fs.Duration("timeout", time.Second, "request deadline")
	dial := addClientFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *live && *reqFile != "" {
		return errors.New("-live and -request: give one (-request holds its own cluster)")
	}
	req, err := placeRequest(*reqFile, *nodes, *gpus, *free, *rackSize, *util, *jobID, *model, *workers, *arch, *ps, *duration)
	if err != nil {
		return err
	}
	if *printReq && !*live {
		return printRequest(stdout, req)
	}
	if err := dial.checkToken(*addr, stderr); err != nil {
		return err
	}
	opts, err := dial.dialOptions()
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(*addr, opts...)
	if err != nil {
		return err
	}
	defer conn.Close()
	client := pb.NewSchedulerClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if *status {
		st, err := client.Status(ctx, &pb.StatusRequest{})
		if err != nil {
			return err
		}
		printStatus(stdout, st)
		return nil
	}
	if *live {
		st, err := client.Status(ctx, &pb.StatusRequest{Nodes: true})
		if err != nil {
			return fmt.Errorf("-live: status: %w", err)
		}
		if req.Cluster, err = liveCluster(st, *addr); err != nil {
			return err
		}
		if *printReq {
			return printRequest(stdout, req)
		}
		printLiveCluster(stdout, req.Cluster, *addr)
	}
	start := time.Now()
	resp, err := client.Place(ctx, req)
	if err != nil {
		return err
	}
	printPlace(stdout, resp, time.Since(start))
	if !resp.GetPlaced() {
		return &notPlacedError{reason: resp.GetReason()}
	}
	return nil
}

// printRequest prints req as JSON (protojson), one line.
func printRequest(stdout io.Writer, req *pb.PlaceRequest) error {
	b, err := protojson.Marshal(req)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, string(b))
	return nil
}

// liveCluster is the cluster of the nodes the server at addr knows, from
// its Status with nodes: each node as its agent described it, its GPUs
// less the workers of the jobs reported running on it free, the load of
// its latest sample. A stateless server, or one no agent has said hello
// to, is an error that says so.
func liveCluster(st *pb.StatusResponse, addr string) (*pb.Cluster, error) {
	l := st.GetLive()
	switch {
	case l == nil:
		return nil, fmt.Errorf("-live: the server at %s is stateless (drover serve -stateless): it knows no nodes", addr)
	case len(l.GetNodeList()) == 0 && l.GetNodes() > 0:
		return nil, fmt.Errorf("-live: the server at %s knows %d nodes but did not list them (a server older than -live)", addr, l.GetNodes())
	case len(l.GetNodeList()) == 0:
		return nil, fmt.Errorf("-live: the server at %s knows no nodes yet: no agent has said hello (run drover agent -server %s on each node)", addr, addr)
	}
	c := &pb.Cluster{IntraRackGbps: 100, CrossRackGbps: 40, PendingJobs: 1}
	for _, n := range l.GetNodeList() {
		c.Nodes = append(c.Nodes, &pb.Node{Id: n.GetId(), Gpus: n.GetGpus(), FreeGpus: max(0, n.GetGpus()-n.GetBusyGpus()), GpuType: n.GetGpuType(),
			Speed: 1, Cpus: n.GetCpus(), MemoryGib: n.GetMemoryGib(), NicGbps: n.GetNicGbps(), Rack: max(0, n.GetRack()),
			CpuUtil: clampShare(n.GetCpuUtil()), MemBwUtil: clampShare(n.GetMemBwUtil()), NetUtil: clampShare(n.GetNetUtil())})
	}
	return c, nil
}

// clampShare is x in [0, 1] (NaN: 0).
func clampShare(x float64) float64 {
	if !(x > 0) {
		return 0
	}
	return min(x, 1)
}

// printLiveCluster says which nodes a -live request places on.
func printLiveCluster(w io.Writer, c *pb.Cluster, addr string) {
	gpus, free := 0, 0
	for _, n := range c.GetNodes() {
		gpus += int(n.GetGpus())
		free += int(n.GetFreeGpus())
	}
	fmt.Fprintf(w, "cluster %d nodes the server at %s knows (%d of %d GPUs free)\n", len(c.GetNodes()), addr, free, gpus)
}

// notPlacedError is drover place's answer when the server did not place
// the job: exit status 3, so that scripts can tell it from a failed call
// (1) and a usage error (2).
type notPlacedError struct{ reason string }

func (e *notPlacedError) Error() string {
	if e.reason == "" {
		return "not placed"
	}
	return "not placed: " + e.reason
}

// ExitCode is drover's exit status for the error.
func (e *notPlacedError) ExitCode() int { return 3 }

// placeRequest reads the request from file, or builds it from the flags.
func placeRequest(file string, nodes, gpus, free, rackSize int, util float64, jobID, model string, workers int, arch string, ps int, duration float64) (*pb.PlaceRequest, error) {
	if file != "" {
		b, err := readRequestFile(file)
		if err != nil {
			return nil, err
		}
		req := &pb.PlaceRequest{}
		if err := protojson.Unmarshal(b, req); err != nil {
			return nil, fmt.Errorf("-request %s: %w", requestName(file), err)
		}
		return req, nil
	}
	switch {
	case nodes <= 0:
		return nil, fmt.Errorf("-nodes %d: want > 0", nodes)
	case gpus <= 0:
		return nil, fmt.Errorf("-gpus %d: want > 0", gpus)
	case free > gpus:
		return nil, fmt.Errorf("-free %d: want at most -gpus (%d), or -1 for all", free, gpus)
	case free < -1:
		return nil, fmt.Errorf("-free %d: want >= 0, or -1 for all", free)
	case rackSize <= 0:
		return nil, errors.New("-rack-size must be positive")
	case !(util >= 0 && util <= 1): // NaN too
		return nil, fmt.Errorf("-util %g: want a share in [0, 1]", util)
	case workers <= 0:
		return nil, fmt.Errorf("-workers %d: want > 0", workers)
	case ps < 0:
		return nil, fmt.Errorf("-ps %d: want >= 0", ps)
	case !(duration >= 0) || math.IsInf(duration, 1):
		return nil, fmt.Errorf("-duration %g: want a finite number of seconds >= 0", duration)
	}
	if known := profile.BuiltinNames(); !slices.Contains(known, model) {
		return nil, fmt.Errorf("-model %q: unknown, want one of %s", model, strings.Join(known, ", "))
	}
	if free < 0 {
		free = gpus
	}
	c := &pb.Cluster{IntraRackGbps: 100, CrossRackGbps: 40, PendingJobs: 1}
	for i := range nodes {
		c.Nodes = append(c.Nodes, &pb.Node{Id: fmt.Sprintf("node-%d", i), Gpus: int32(gpus), FreeGpus: int32(free), Speed: 1, Cpus: 64,
			MemoryGib: 512, NicGbps: 100, Rack: int32(i / rackSize), CpuUtil: util, MemBwUtil: util, NetUtil: util})
	}
	j := &pb.Job{Id: jobID, Model: model, Workers: int32(workers), PsShards: int32(ps), ExpectedDurationS: duration}
	switch arch {
	case "ring":
	case "ps":
		j.Arch = pb.Arch_ARCH_PS
	default:
		return nil, fmt.Errorf("-arch %q: want ring or ps", arch)
	}
	return &pb.PlaceRequest{Job: j, Cluster: c}, nil
}

// placeStdin is what -request - reads (a test's input in tests).
var placeStdin io.Reader = os.Stdin

// maxRequestJSON bounds what -request reads: far above any request a
// server accepts (drover serve -max-request-bytes, 4 MiB by default, in
// protobuf's binary form, which is smaller than its JSON).
const maxRequestJSON = 64 << 20

// readRequestFile reads the -request file, or standard input for "-", up
// to maxRequestJSON bytes.
func readRequestFile(file string) ([]byte, error) {
	r := placeStdin
	if file != "-" {
		f, err := inputfile.Open(file, maxRequestJSON)
		if err != nil {
			return nil, fmt.Errorf("-request: %w", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxRequestJSON+1))
	if err != nil {
		return nil, fmt.Errorf("-request %s: %w", requestName(file), err)
	}
	if len(b) > maxRequestJSON {
		return nil, fmt.Errorf("-request %s: more than %d MiB; want one PlaceRequest as JSON", requestName(file), maxRequestJSON>>20)
	}
	return inputfile.TrimBOM(b), nil
}

// requestName names the -request input in messages.
func requestName(file string) string {
	if file == "-" {
		return "(standard input)"
	}
	return file
}

func syncString(s *pb.Sync) string {
	switch s.GetKind() {
	case pb.SyncKind_SYNC_ASP:
		return "asp"
	case pb.SyncKind_SYNC_SSP:
		return fmt.Sprintf("ssp(%d)", s.GetStaleness())
	case pb.SyncKind_SYNC_LOCAL_SGD:
		return fmt.Sprintf("local(%d)", s.GetPeriod())
	}
	return "bsp"
}

func printPlace(w io.Writer, r *pb.PlaceResponse, rtt time.Duration) {
	policy := r.GetPolicy()
	if r.GetReason() != "" {
		policy += " (" + r.GetReason() + ")"
	}
	fmt.Fprintf(w, "decision %s  policy %s  model %q  round trip %s\n", r.GetDecisionId(), policy, r.GetModelVersion(), rtt.Round(time.Microsecond))
	if !r.GetPlaced() {
		fmt.Fprintln(w, "not placed")
		return
	}
	fmt.Fprintf(w, "sync %s\n", syncString(r.GetSync()))
	for _, a := range r.GetAssignments() {
		role := "worker"
		if a.GetRole() == pb.Role_ROLE_PS {
			role = "ps"
		}
		fmt.Fprintf(w, "  %-6s %3d -> %s\n", role, a.GetIndex(), a.GetNodeId())
	}
}

func printStatus(w io.Writer, s *pb.StatusResponse) {
	fmt.Fprintf(w, "active %s  heuristic %s  model %q (env %q, converged %v)\n", s.GetActivePolicy(), s.GetHeuristic(), s.GetModelVersion(), s.GetModelEnv(), s.GetConverged())
	if s.GetCandidateVersion() != "" {
		fmt.Fprintf(w, "canary %s on %g of jobs\n", s.GetCandidateVersion(), s.GetCanaryFraction())
	}
	if s.GetLastRefused() != "" {
		fmt.Fprintf(w, "last refused: %s\n", s.GetLastRefused())
	}
	if s.GetShadowPolicy() != "" || s.GetSwitchMode() != "" {
		since := ""
		if ns := s.GetActiveSinceUnixNanos(); ns > 0 {
			since = "  since " + time.Unix(0, ns).UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "switch %s  shadow %s%s: %s\n", s.GetSwitchMode(), orDash(s.GetShadowPolicy()), since, s.GetSwitchReason())
		if s.GetGateEvaluations() > 0 {
			fmt.Fprintf(w, "gate: %s (lower bound %+.1f%%, %d evaluations)\n", s.GetGateVerdict(), 100*s.GetGateLowerBound(), s.GetGateEvaluations())
		}
		if len(s.GetShadow()) > 0 {
			fmt.Fprintf(w, "shadow decisions %v\n", s.GetShadow())
		}
	}
	fmt.Fprintf(w, "decisions %v  fallbacks %v  outcomes %v  shed %d\n", s.GetDecisions(), s.GetFallbacks(), s.GetOutcomes(), s.GetShed())
	if l := s.GetLive(); l != nil {
		fmt.Fprintf(w, "live state: %d nodes (%d stale: silent > %gs), %d messages lost by agents; %d jobs (%d profiled), %d models profiled\n",
			l.GetNodes(), l.GetStaleNodes(), l.GetStaleAfterS(), l.GetLostMessages(), l.GetJobs(), l.GetProfiledJobs(), l.GetProfiledModels())
	} else {
		fmt.Fprintln(w, "live state: none (stateless server)")
	}
}

// orDash is s, or "-" when empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
