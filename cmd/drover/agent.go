package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/drover-sched/drover/serve/agent"
)

// runAgent is `drover agent`: it streams this node's telemetry (procfs
// samples, GPU readings in an nvml build) and the iteration times local
// training jobs post to it to a drover server, until SIGINT or SIGTERM.
func runAgent(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("agent", stderr)
	server := fs.String("server", "127.0.0.1:50051", "drover server's gRPC address")
	node := fs.String("node", "", "node id, as Place requests name the node (default: the host name)")
	root := fs.String("root", "/", "directory holding proc/ (a fixture tree in tests)")
	interval := fs.Duration("interval", agent.DefaultInterval, "sampling interval")
	rack := fs.Int("rack", agent.RackUnknown, "the node's rack (-1: unknown)")
	gpus := fs.Int("gpus", 0, "GPU count (0: as NVML finds)")
	gpuType := fs.String("gpu-type", "", "GPU model (default: as NVML finds)")
	nicGbps := fs.Float64("nic-gbps", 0, "NIC bandwidth in Gbit/s (0: unknown)")
	buffer := fs.Int("buffer", agent.DefaultBuffer, "unacknowledged samples and iteration reports kept while the server is away; beyond it the oldest are dropped and counted")
	iterAddr := fs.String("iter-addr", agent.DefaultIterAddr, `address of the local HTTP endpoint for jobs' iteration times (POST /v1/iterations, GET /healthz); "" turns it off`)
	dial := addClientFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "drover agent: unexpected arguments %q\n", fs.Args())
		return errUsage
	}
	if *node == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("-node not given and no host name: %w", err)
		}
		*node = h
	}
	if err := dial.checkToken(*server, stderr); err != nil {
		return err
	}
	opts, err := dial.dialOptions()
	if err != nil {
		return err
	}
	a, err := agent.New(agent.Config{
		Server:      *server,
		DialOptions: opts,
		NodeID:      *node,
		Root:        *root,
		Interval:    *interval,
		GPUs:        *gpus,
		GPUType:     *gpuType,
		NICGbps:     *nicGbps,
		Rack:        *rack,
		Buffer:      *buffer,
		IterAddr:    *iterAddr,
		Logger:      slog.New(slog.NewTextHandler(stderr, nil)),
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := a.Run(ctx); err != nil {
		return err
	}
	st := a.Stats()
	fmt.Fprintf(stdout, "drover agent: stopped: %d messages sent, %d acknowledged, %d dropped, %d reconnects, %d unacknowledged\n",
		st.Sent, st.Acked, st.Dropped, st.Reconnects, st.Buffered)
	return nil
}
