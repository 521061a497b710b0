// Package daemon runs a whole policy server, as `drover serve` does,
// from one documented Config: the serve.Core with its decision and
// telemetry logs (datasets/declog, datasets/telemlog) and live state
// (serve/state, saved to a state directory), the policy (the embedded
// default, one checkpoint, or a directory of versions watched for hot
// reload), the gate's evaluations, and the listeners: gRPC, the fast
// listener (-place-addr), Prometheus /metrics with /healthz, and the
// kube-scheduler extender (serve/extender), with TLS and a bearer token.
// Every listener's connections are bounded (Config.GRPCConns, FastConns,
// HTTPConns: counts per listener and per peer, handshake and idle
// timeouts; serve's doc, "Connection limits"), and the HTTP servers
// bound headers, requests, writes and keep-alive idleness, so that no
// client that connects and does nothing locks the others out.
// When the context ends it shuts them down in order: the watcher and
// the gate, the extender's calls, the gRPC and fast listeners' calls
// (then the core, which flushes and seals the log), the metrics
// listener, the live state's last save.
//
// It is a package above serve, not serve.Run, because it wires packages
// that import serve (serve/extender) and a checkpoint loader
// (policies/direct) that serve must not link; cmd/drover only parses
// flags into a Config and prints.
//
// # Usage
//
//	c := daemon.Defaults() // drover serve without flags
//	c.Addr, c.PlaceAddr, c.LogDir = "127.0.0.1:50051", "127.0.0.1:50052", "/var/log/drover"
//	c.Out = os.Stdout
//	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
//	defer stop()
//	if err := daemon.Run(ctx, c); err != nil { // until SIGTERM
//		log.Fatal(err)
//	}
package daemon
