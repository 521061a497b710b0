// Package agent is `drover agent` (issue 17): the per-node process that
// streams a node's telemetry to a drover server over the Telemetry.Stream
// RPC (serve/proto). Every Interval it samples CPU utilisation, memory
// use, CPU and memory pressure (PSI) and network rates from /proc with a
// Sampler (over github.com/prometheus/procfs, which the Prometheus client
// library already links), and the GPUs through a GPUSource; a local HTTP
// endpoint takes training jobs' iteration times (serve/iterclient posts
// them).
//
// # The stream
//
// Each stream opens with an AgentHello (sequence number 0): the node's
// id, this agent's id, its GPUs, CPUs, memory, NIC, rack and sampling
// interval, and whether samples carry GPU readings. Samples, iteration
// reports and gap notices follow, numbered 1, 2, 3, ... per AgentID. The
// agent keeps every message until the server acknowledges it (AgentAck's
// acked_seq); after a broken stream it reconnects with a jittered
// exponential backoff (MinBackoff 100 ms to MaxBackoff 30 s), says hello
// again and resends what was not acknowledged, in order, then new
// messages. The server drops what it has already applied, so nothing is
// applied twice.
//
// While the server is away the agent keeps sampling into a bounded buffer
// (Config.Buffer messages). When it is full the oldest message gives way
// to a Gap notice that counts the samples and iteration reports dropped
// and the time they covered; consecutive drops merge into one Gap, which
// takes the sequence number of the last message it stands for and is
// never dropped itself. A Gap counts every message dropped before its
// acknowledgement, including ones sent on a stream that broke before the
// server acknowledged them; the server, which knows what it applied, can
// tell those from the sequence numbers. A message the server refuses as
// invalid (InvalidArgument after it acknowledged the hello; the agent
// checks its messages against serve/state's limits, so this should not
// happen) is dropped and logged rather than resent forever. Stats counts
// what was sent, acknowledged, dropped and refused, and the reconnections.
//
// # Samples
//
// A value the agent could not measure is NaN, as the proto asks: the
// first sample's CPU utilisation, pressures and network rates (they need
// two samples), pressure on a kernel without PSI, and network rates over
// an interval where a counter was reset. Pressure is PSI's "some" share
// of the interval. Conditions found once (a kernel without PSI, no NVML)
// are logged once.
//
// # GPUs
//
// The default build is cgo-free and has no GPU readings: its GPUSource
// says "built without NVML (build with -tags nvml)" in the hello's
// gpu_note. Built with -tags nvml, the agent reads each GPU through NVML
// (github.com/NVIDIA/go-nvml, loaded from the driver at run time):
// utilisation, memory in use, PCIe rx/tx throughput (NVML's KB/s, taken
// as KiB/s, in bytes per second) and NVLink data throughput from NVML's
// cumulative per-device counters (0 on the first sample and on GPUs whose
// NVML has no NVLink counters). Without a driver, NVML's Init fails: the
// agent says so once, sends gpu_telemetry false, and never calls NVML
// again.
//
// # Iteration times
//
// With Config.IterAddr set (`drover agent` listens on 127.0.0.1:9465), the
// agent serves
//
//	POST /v1/iterations  {"job_id": "job-7", "worker": 3, "seconds": [0.31, 0.30], "dropped": 0}
//	GET  /healthz        the agent's Stats as JSON
//
// An invalid report is answered 400 with a message naming the field
// ("seconds[1]: 0 is not a positive number of seconds"), a body above
// 1 MiB 413; a valid one is buffered and streamed like a sample
// (JobIterations) and answered 202.
//
// It is the server's client (serve/proto's Telemetry service, serve/state's
// validation), so it lives under serve/, beside serve/remote and
// serve/iterclient, and not in internal/, which the layers below serve
// (datasets, env) import: there it made a folder-level cycle.
//
// # Usage
//
// `drover agent` wires flags to a Config; in a program:
//
//	a, err := agent.New(agent.Config{
//		Server:      "drover.example:50051",
//		DialOptions: []grpc.DialOption{grpc.WithTransportCredentials(creds)},
//		NodeID:      "node-17",
//		Rack:        3,
//		NICGbps:     100,
//		IterAddr:    agent.DefaultIterAddr,
//	})
//	if err != nil {
//		return err
//	}
//	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//	defer stop()
//	return a.Run(ctx) // samples, streams, reconnects until ctx ends
package agent
