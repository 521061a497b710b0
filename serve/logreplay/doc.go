// Package logreplay evaluates a policy server's decisions offline, from
// its logs: it records the runs a simulator drives through a server, and
// replays a served log's workload under other policies.
//
// Recording (drover sim --remote ADDR --record DIR): RunRecorded runs a
// trace under a remote policy (serve/remote) as env/trace.Run does and,
// standing in for the simulated cluster's agents, writes each node's
// total load at every refresh of the per-worker model to a telemetry log
// (datasets/telemlog) in DIR/TelemetryDir, beside the server's decision
// log; the Manifest (DIR/ManifestFile) holds what a replay needs to
// rebuild the cluster and the model.
//
// Replay (drover eval --log DIR): Prepare reads the decision log
// (ReadServedLog: each job's request, placement and outcomes), rebuilds
// the workload (ServedLog.Workload), the cluster (the manifest's, or for
// a live cluster's log the flags' with the log's node ids, NameNodes),
// and the background (the recorded telemetry minus the served jobs'
// modelled load), and returns the policies to replay: the served policy
// as the server answers it (an in-process serve.Core behind serve/remote)
// and the contenders. AddLogged adds the logged run's row
// (ServedLogName) to their comparison.
//
// Who served is read from the log's records (ServedLog.Segments): a
// server whose gate switched from its heuristic to a learned policy
// (serve.SwitchConfig) logged the heuristic's answers, then the learned
// version's ("learned@v1"). Its replay holds the heuristic and the
// versions, loaded from the server's checkpoint directory
// (Config.Checkpoints; Prepare refuses such a log without it), and asks
// each request of the policy that answered it in the log, or, at a time
// the log has no decision of that job, of the one in charge then.
//
// # Usage
//
//	r, err := logreplay.Prepare(logreplay.Config{Dir: dir, Contenders: contenders})
//	if err != nil {
//		return err
//	}
//	res, err := compare.Compare(compare.Config{Policies: r.Policies, Seeds: r.Seeds, Options: r.Options})
//	if err != nil {
//		return err
//	}
//	logged := r.AddLogged(res) // the served (log) row first
//	compare.WriteTable(os.Stdout, res)
//	fmt.Printf("served %s: avg JCT %.2f s logged, %.2f s replayed\n",
//		r.Log.Served, logged.Summary.AvgJCT, res.Policies[1].AvgJCT.Mean)
package logreplay
