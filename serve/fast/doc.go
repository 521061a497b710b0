// Package fast is the policy server's fast listener (`drover serve
// -place-addr`, serve.Server.ServeFast): a lean HTTP/2 gRPC endpoint
// for the hot unary calls: Scheduler's Place, Report, Status, Route,
// RouteMM and Scale, and the health service's Check. It exists because grpc-go's server costs more
// CPU per call than Place itself (docs/results/serving.md: the empty
// health check alone kept one core 0.55-0.75 busy at 10k calls/s), and
// because its hand-offs between the goroutines that read, handle and
// write a call add to the latency tail.
//
// Each connection is served by one goroutine that reads a frame,
// answers a call inline as soon as its request has arrived whole, and
// flushes its writes only when nothing more is buffered to read, so a
// burst of calls is answered with one write. The costs of this design:
// the calls of one connection are answered one at a time, in order of
// arrival (a client that wants calls answered in parallel opens more
// connections), and only unary calls are served: the telemetry stream,
// health Watch and reflection answer Unimplemented, naming the gRPC
// address (-addr) that serves them.
//
// What it shares with the gRPC server: the Core and the health server's
// status (through its Backend), the bearer token (health checks are exempt, as there), TLS
// (with ALPN h2, which gRPC clients send), the maximum request size,
// the request metrics, and the status codes of the Core's errors. Where
// it differs: a request that is not one well-formed gRPC message (no
// message, two messages, a bad compressed flag or length prefix)
// answers InvalidArgument where grpc-go answers Internal, and a
// malformed Place request is counted in the metrics.
//
// HTTP/2 is done with golang.org/x/net/http2's Framer (frames, HPACK,
// CONTINUATION and the header list limit); this package does the
// connection and stream state (server.go), flow control in both
// directions and the limits against a hostile client:
//   - at most maxStreams streams open per connection (more are
//     refused with REFUSED_STREAM), Config.MaxConns connections per
//     listener (1,024) and Config.MaxConnsPerPeer from one IPv4 address
//     or IPv6 /64 (64; internal/connlimit), the others closed as they
//     are accepted and counted (Metrics.Refused); but a connection that
//     finds the listener full first takes the place of the one in its
//     handshake the longest (counted as closed, evicted), so that
//     connections that do nothing, even from many addresses, keep out
//     no client that completes its handshake in a round trip;
//   - request bytes buffered per connection bounded (serverConn.budget);
//   - a request longer than the maximum size answers ResourceExhausted
//     as soon as its length prefix is read;
//   - frames that do no work (PING, SETTINGS, RST_STREAM, PRIORITY,
//     WINDOW_UPDATE, empty DATA, refused HEADERS, unknown types) are
//     counted, each answered call pays some back, and a connection that
//     runs more than calmLimit ahead is closed with GOAWAY
//     ENHANCE_YOUR_CALM (the rapid-reset attack, CVE-2023-44487, is a
//     stream of HEADERS and RST_STREAM);
//   - the TLS handshake, the client preface and the SETTINGS exchange
//     (the client's SETTINGS and its ACK of the server's; or a first
//     call answered) must complete within Config.HandshakeTimeout (5 s;
//     GOAWAY SETTINGS_TIMEOUT), so that connections sending only the
//     preface, or nothing, hold a slot for seconds rather than the idle
//     timeout; an established connection without a frame for
//     Config.IdleTimeout (5 minutes) is closed (GOAWAY NO_ERROR), both
//     counted (Metrics.Closed); and one whose writes block for
//     writeTimeout (a client that stopped reading) is closed;
//   - answers waiting for flow-control window count toward the bytes
//     buffered, and new streams are refused while they are over budget.
//
// # What it shares with the gRPC listener, and what it costs
//
// serve.Server builds a fast Server beside its grpc-go one and hands it
// a Backend (the Core's Place, Report, Status, Route, RouteMM and Scale
// with the gRPC listener's status codes, and the health server's Check), its Config
// (TLS, token, size limit) and its Metrics (the same series, under the
// listener label "fast"); Shutdown drains both listeners together
// (Drain: GOAWAY; Wait; CloseAll when the grace period ends) before the
// core closes. The bearer-token check (TokenOK) and the Place decoder
// (Codec, codec.go) are this package's and both listeners use them: the
// codec decodes a PlaceRequest into reused memory (PlaceIn) with one copy
// of the payload instead of protobuf-go's allocation per node and
// string, and leaves anything it cannot decode exactly as proto.Unmarshal
// would to proto.Unmarshal (FuzzDecodePlaceRequest checks they agree).
//
// What it costs: a connection's calls are answered one at a time (a
// client wanting parallel calls opens more connections), and streams
// (the agents' telemetry, health Watch, reflection) stay on the gRPC
// listener. It exists for the latency tail: at 10k Place/s on one core
// grpc-go's server alone, before any Drover code, cost most of the core
// (docs/results/serving.md).
//
// # The main loop
//
// One goroutine per connection (serverConn.serve), after the TLS handshake,
// the preface and the SETTINGS exchange:
//
//	for {
//		f, err := c.fr.ReadFrame() // Framer: frames, HPACK, CONTINUATION
//		done := c.handle(f, err)   // state, windows and limits; a request
//		                           // arrived whole is answered inline:
//		                           // decode, Backend call, encode, metrics
//		if !done && c.br.Buffered() == 0 {
//			done = c.bw.Flush() != nil // one write for a burst of answers
//		}
//		if done {
//			return
//		}
//		if c.settled {              // the SETTINGS exchange is done
//			c.pushDeadlines(time.Now()) // idle and write deadlines
//		}
//	}
//
// # Usage
//
//	srv := fast.NewServer(backend, fast.Config{TLS: tlsCfg, Token: token})
//	lis, _ := net.Listen("tcp", "127.0.0.1:50052")
//	go srv.Serve(lis)
//	<-sigterm
//	srv.Drain(time.Now().Add(10 * time.Second)) // GOAWAY: calls begun are answered
//	srv.Wait()
package fast
