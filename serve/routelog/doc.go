// Package routelog is the route log: every Route decision of the policy
// server (serve.Core.Route) as one line of JSON, with what it takes to
// re-score it offline: the request (arrival, prompt and output tokens),
// the deployment's instances and their load as the request gave them, the
// deployment's name, the answer (prefill instance, decode instance, KV
// format), who answered (HACK's router or the learned pd-rl one, and
// why) and the other router's decision in shadow. docs/format/route-log.md
// specifies the format; `drover serve -log-dir DIR` writes DIR/routes.jsonl
// and `drover eval --log DIR/routes.jsonl` re-scores it (Replay).
//
// Encoding is separate from I/O: Encode and Decode are pure; Writer and
// Read sit on top.
//
// # Usage
//
//	rw, _ := routelog.Create("runs/serve/routes.jsonl")
//	sink := serve.NewLogSink(decisions).WithRoutes(rw) // Close closes rw
//	core, _ := serve.NewCore(serve.WithSink(sink), serve.WithRouter(cfg))
//	... // serve, then close the sink
//
//	recs, partial, err := routelog.ReadFile("runs/serve/routes.jsonl")
//	rp, err := routelog.NewReplay(recs, 0) // the logged request stream
//	err = rp.Check(deployment)             // the deployment they listed
//	s, _ := infer.New(deployment, rp.Requests)
//	sum, err := s.Run(rp.Logged())         // under the logged answers
//	s, _ = infer.New(deployment, rp.Requests)
//	sum, err = s.Run(hack.New(...))        // under another router
package routelog
