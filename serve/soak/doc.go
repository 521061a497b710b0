// Package soak is the soak test of issue 32's acceptance: it loads a
// running drover serve the way a hostile and churning cluster would, and
// judges whether the server gives back what the load took and keeps
// answering a well-behaved client meanwhile. `drover bench soak` starts
// the server pinned to its own core and runs it (docs/results/soak.md).
//
// The load, all at once, for Config.Duration:
//
//   - agents churn: a fake agent (serve/agent's telemetry stream
//     protocol) connects every 1/AgentRate seconds on its own
//     connection, says hello, sends three samples and an iteration
//     report, waits for the acknowledgement and leaves, half the time
//     politely and half abruptly;
//   - Reports of Jobs distinct jobs spread over the run (start and
//     iteration times, then the end for three jobs in four);
//   - a slowloris on every listener: idle and preface-only connections
//     on the gRPC port, preface-only ones on the fast listener, slow
//     partial bodies on the extender, slow headers on /metrics, each
//     opened again when the server closes it;
//   - a well-behaved client sending Place on an open-loop schedule,
//     latency measured from each call's intended send time (coordinated
//     omission counted) in windows of Config.Window;
//   - once a window, a lockout probe of every listener: a fresh
//     connection and one well-formed call.
//
// The phases: a warm-up under the same load; the clients leave and the
// server settles (its goroutine count unchanged over three samples):
// the baseline; the measured run; the clients leave and the soak waits,
// at most Config.Settle, for goroutines and RSS to come back within
// Limits.Growth of the baseline. Resources come from the server's
// /metrics (go_goroutines, process_resident_memory_bytes, ...). Judge
// gives a verdict per acceptance point with its numbers.
//
// # Usage
//
//	srv, _ := soak.StartServer(soak.ServerConfig{Binary: "drover", CPUs: "0", Addrs: soak.PortAddrs(50181), Output: logFile})
//	defer srv.Stop(30 * time.Second)
//	c := soak.Defaults()
//	c.Duration = time.Minute
//	res, err := soak.Run(ctx, c)
//	for _, ch := range res.Checks {
//		fmt.Println(ch.Name, ch.Pass, ch.Detail)
//	}
package soak
