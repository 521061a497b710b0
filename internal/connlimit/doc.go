// Package connlimit bounds a listener's connections: at most Max open at
// once, and at most PerPeer from one peer (one IPv4 address, or one IPv6
// /64, which one host is usually given whole). A connection over either
// limit is closed as soon as it is accepted, and the refusal is reported
// with its reason, so that an operator sees it (drover serve counts them
// in drover_connections_refused_total{listener, reason}). Every listener
// of `drover serve` is wrapped in one (serve.LimitHTTP), and the
// fast listener asks a Limiter directly from its own accept loop.
//
// Why not golang.org/x/net/netutil.LimitListener, which the module
// already links: it makes Accept wait while the limit is reached, so new
// connections queue in the kernel's backlog until they time out at the
// client instead of being refused at once, nothing counts them, and it
// has no per-peer limit. A per-peer limit cannot be a blocked Accept
// (waiting for one peer's slot would hold every other peer's connection
// behind it), so it has to accept and close; once it does, the global
// limit is the same check under the same lock.
//
// The per-peer limit is what keeps one client (a slowloris, a buggy
// reconnect loop) from taking every slot: well-behaved clients on other
// addresses still get in. It does not stop a client with many addresses;
// the listeners' handshake and idle timeouts bound how long each of its
// connections holds a slot, and ListenEvicting, for an HTTP/1 server,
// makes a full listener close the connection that has been the longest
// without a complete request (headers or body still arriving, or idle
// between requests) to give its slot to a new one; a connection whose
// handler runs is never closed (serve.LimitHTTP, the extender's and the
// metrics' listeners; the fast listener does the same for connections
// in their handshake). Addresses that are not IP (a Unix socket, an
// in-memory pipe) count toward Max only.
//
// # Usage
//
//	lis, _ := net.Listen("tcp", ":8080")
//	lim := connlimit.New(connlimit.Limits{Max: 1024, PerPeer: 64})
//	lis = connlimit.Listen(lis, lim, func(r connlimit.Reason) { refused.WithLabelValues(string(r)).Inc() })
//	http.Serve(lis, handler) // a conn's Close gives its slot back
//
// or, for an HTTP/1 server whose full listener makes room:
//
//	el := connlimit.ListenEvicting(lis, lim, refusedFunc, evicted.Inc)
//	el.Guard(hs) // before Serve: hs reports each connection's phase
//	hs.Serve(el)
package connlimit
