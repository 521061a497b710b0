// Package state is the policy server's live state (issue 17): what the
// node agents (`drover agent`) and the cluster's reports say about the
// cluster, kept between Place requests so that the served STRN and SAS
// work as they do in simulation instead of from each request alone.
//
// A Store holds, per node, the agent's hello (GPUs, CPUs, memory, NIC,
// rack, whether it reads GPUs), a ring of its last History samples turned
// into the simulator's load shares (Usage: CPU utilisation; memory
// pressure stall share standing in for memory-bandwidth contention, since
// /proc has no bandwidth counter; the busier network direction over the
// NIC's bandwidth), when it last heard from the node, and the highest
// sequence number applied for the node's agent. Per job it holds the
// model, each worker's node (Started reports, or the agent the iteration
// times came through) and each worker's first ProfileIterations iteration
// times. From those, Profile measures what STRN profiles (a Profile: the
// straggling BSP pays, the per-worker jitter, and the CPU and memory
// sensitivities fitted against the workers' nodes' measured load). A
// finished job's profile becomes its model's, for the next job of that
// model.
//
// # Streams, acknowledgements and loss
//
// Service implements the Telemetry gRPC service: an agent's stream opens
// with its hello; every later message carries a sequence number that
// grows by one per message of that agent, and the server acknowledges
// each message it applied with the highest number applied so far. An
// agent resends what was not acknowledged after a reconnect; a resent
// message at or below the acknowledged number is skipped, so nothing is
// applied twice. An agent whose bounded buffer overflowed says so with a
// Gap message, which the store counts per node (NodeView.Lost): loss is
// never silent. A jump in the numbers that no Gap accounts for (a message
// lost without the agent knowing, or a server that lost its state after
// acknowledging) is counted per node (NodeView.SeqGaps and Missing; the
// server's drover_live_seq_gaps_total and
// drover_live_missing_messages_total); the first message of an agent the
// server has applied nothing of sets the baseline. Numbers above MaxSeq
// (2^63-1) are refused, so that no stray number near 2^64 leaves an agent
// with nothing above its last; they never wrap, since a restarted agent
// has a new id and its hello starts them afresh. Messages are validated
// (ValidateHello, ValidateMessage); a bad one ends the stream with
// InvalidArgument naming the field. A stream ends when its agent goes
// away (its context ends), whatever it was waiting for.
//
// # Limits
//
// Nothing a client sends grows the store without bound (issue 32): at
// most MaxNodes nodes of History samples each (a new node's hello beyond
// it takes the place of the node silent the longest if that one is stale,
// and is refused otherwise); at most MaxJobs jobs, forgotten finished first, then least
// recently touched; at most MaxJobsPerNode of them created by one node's
// agent, whose iteration endpoint takes unauthenticated reports, so a
// flood of made-up jobs through one node churns that node's jobs only; at
// most MaxJobWorkers workers a job with ProfileIterations times each; and
// MaxIterationTimes times in all (default 2^20, a snapshot of about 16
// MB at most for the times). What is forgotten or dropped for a limit is
// counted (Summary.Evicted; the server's drover_live_evictions_total by
// reason). A snapshot loads into smaller limits the same way.
//
// # Stale nodes
//
// A node whose agent sent nothing for StaleAfter (default 15 s, three of
// the agent's default samples) is stale. Overlay, which the server runs
// on every Place request, gives a stale node no free GPUs, so no policy
// places on it, and gives every fresh node with samples its latest
// sampled load instead of the request's numbers. Nodes no agent reports
// keep the request's values: a cluster can run agents on some nodes only.
//
// # Snapshots
//
// Save writes the whole state as JSON to a temporary file in the target's
// directory, syncs it and renames it over the target (then syncs the
// directory), so a crash leaves either the previous snapshot or the new
// one. Load and LoadOrEmpty read it back; a corrupt snapshot is an error
// naming the file and the field, and the server refuses to start on it
// rather than silently start empty. `drover serve -state-dir DIR` saves
// every -state-every and at shutdown.
//
// # Usage
//
//	st, _ := state.LoadOrEmpty("/var/lib/drover/state/state.json", state.Config{})
//	core, _ := serve.NewCore(serve.WithState(st, nil))
//	srv, _ := serve.NewServer(core, serve.ServerConfig{}) // registers the Telemetry service
//	go srv.Serve(lis)
//	for range time.Tick(30 * time.Second) {
//		if err := st.Save(path, time.Now()); err != nil {
//			log.Print(err)
//		}
//	}
//
// # Numerics
//
// nnls2 (two non-negative least-squares coefficients in closed form) and
// median stay ours (issue 31): no linked dependency solves non-negative
// least squares short of gonum's linear-programming package, and
// env.Quantile's median of an even count, x[k] + (x[k+1]-x[k])/2, can
// differ from (x[k]+x[k+1])/2 in the last bit, which would move the
// profiles fitted from telemetry.
package state
