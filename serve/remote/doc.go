// Package remote is a policies.Policy that delegates every placement to a
// drover policy server (drover serve) over gRPC: the simulator, or any
// driver of env.Sim, becomes the server's client, the way a cluster
// scheduler is. A simulation run through it is a recorded run: the
// server's decision log (datasets/declog) holds every decision with the job's
// submission and the simulation's clock (Epoch + simulation time), and the
// Started and Finished outcomes Remote reports, so that drover eval --log
// can re-score the run offline.
//
// At each decision point Remote asks about the pending jobs in arrival
// order with backfilling, one Place request per job that fits in the free
// GPUs. A request describes the cluster as the view shows it: node ids
// (env.Node.Name, or "n<i>"), GPUs, free GPUs, GPU type and speed, CPUs,
// memory, NIC, rack, and each node's CPU, memory-bandwidth and network
// utilisation from the model's env.Telemetry (idle without one), with the
// placements made earlier in the same decision point booked on it
// (Config.WorkerCPU, Config.WorkerMemBW, as STRN books its own); the
// pending and running job counts; unix_nanos = Epoch + View.Now and the
// job's submit_unix_nanos = Epoch + its submit time. The answer's worker
// node ids become node indices and its sync strategy the decision's.
//
// Against a server whose heuristic is strn, a simulation through Remote
// gives exactly the per-job JCTs of strn run in the simulator
// (TestRemoteMatchesSTRN): the stateful server (drover serve's default,
// serve.WithState) probes each job's sensitivities and sync strategies as
// the simulator's STRN does. A stateless server (drover serve -stateless)
// cannot probe and answers with strn.Fallback sensitivities and BSP, which
// is strn behind a telemetry-only model, also matched exactly; on the
// built-in workload (16 x 4 GPUs, per-worker model, seed 1) its average
// JCT is 3749 s against the probing STRN's 2497 s.
//
// # Why it lives in serve/
//
// Remote is the transport's client: it speaks serve/proto's wire types and
// is tested against the server itself. It lives beside them, above
// policies/, rather than the wire types moving down into a leaf: policies/
// then holds only policies that decide in-process and knows nothing of the
// transport, serve/proto stays where its generated code, Makefile target
// and go_package point, and nothing below serve/ (env/, policies/,
// agents/, train/) imports gRPC or the wire types. It still implements
// policies.Policy, so the simulator drives it like any heuristic.
//
// # Usage
//
//	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
//	r, err := remote.New(remote.Config{Client: pb.NewSchedulerClient(conn)})
//	res, err := trace.Run(trace.Options{Workload: w, Policy: r, ...})
//	err = r.Flush() // report the finishes after the last decision point
package remote
