package connlimit_test

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/internal/connlimit"
)

func tcp(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000} }

// TestAcquire checks the limits' arithmetic: the global limit first,
// then the peer's; an IPv6 /64 is one peer, an IPv4-mapped IPv6 address
// the IPv4 peer; a non-IP address counts toward Max only.
func TestAcquire(t *testing.T) {
	type step struct {
		addr    net.Addr
		release bool
		beyond  bool // AcquireBeyondMax
	}
	tests := []struct {
		name  string
		lim   connlimit.Limits
		steps []step
		want  []connlimit.Reason // "" for a slot taken or a release
	}{
		{
			name:  "per peer",
			lim:   connlimit.Limits{Max: 10, PerPeer: 2},
			steps: []step{{addr: tcp("10.0.0.1")}, {addr: tcp("10.0.0.1")}, {addr: tcp("10.0.0.1")}, {addr: tcp("10.0.0.2")}, {addr: tcp("10.0.0.1"), release: true}, {addr: tcp("10.0.0.1")}},
			want:  []connlimit.Reason{"", "", connlimit.PeerFull, "", "", ""},
		},
		{
			name:  "global first",
			lim:   connlimit.Limits{Max: 2, PerPeer: 1},
			steps: []step{{addr: tcp("10.0.0.1")}, {addr: tcp("10.0.0.2")}, {addr: tcp("10.0.0.1")}, {addr: tcp("10.0.0.3")}},
			want:  []connlimit.Reason{"", "", connlimit.Full, connlimit.Full},
		},
		{
			name:  "ipv6 /64 is one peer, mapped ipv4 is ipv4",
			lim:   connlimit.Limits{PerPeer: 1},
			steps: []step{{addr: tcp("2001:db8::1")}, {addr: tcp("2001:db8::ffff")}, {addr: tcp("2001:db8:0:1::1")}, {addr: tcp("192.0.2.1")}, {addr: tcp("::ffff:192.0.2.1")}},
			want:  []connlimit.Reason{"", connlimit.PeerFull, "", "", connlimit.PeerFull},
		},
		{
			name:  "non-IP counts toward Max only",
			lim:   connlimit.Limits{Max: 2, PerPeer: 1},
			steps: []step{{addr: &net.UnixAddr{Name: "@", Net: "unix"}}, {addr: &net.UnixAddr{Name: "@", Net: "unix"}}, {addr: &net.UnixAddr{Name: "@", Net: "unix"}}},
			want:  []connlimit.Reason{"", "", connlimit.Full},
		},
		{
			name:  "beyond max, within the peer's",
			lim:   connlimit.Limits{Max: 1, PerPeer: 1},
			steps: []step{{addr: tcp("10.0.0.1")}, {addr: tcp("10.0.0.2")}, {addr: tcp("10.0.0.2"), beyond: true}, {addr: tcp("10.0.0.2"), beyond: true}},
			want:  []connlimit.Reason{"", connlimit.Full, "", connlimit.PeerFull},
		},
		{
			name:  "zero is no limit",
			steps: []step{{addr: tcp("10.0.0.1")}, {addr: tcp("10.0.0.1")}, {addr: tcp("10.0.0.1")}},
			want:  []connlimit.Reason{"", "", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := connlimit.New(tt.lim)
			var got []connlimit.Reason
			for _, s := range tt.steps {
				if s.release {
					l.Release(s.addr)
					got = append(got, "")
					continue
				}
				acquire := l.Acquire
				if s.beyond {
					acquire = l.AcquireBeyondMax
				}
				why, ok := acquire(s.addr)
				if ok != (why == "") {
					t.Fatalf("Acquire(%v) = %q, %v", s.addr, why, ok)
				}
				got = append(got, why)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reasons (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestListenRefusesOverPeerLimit: over a real TCP listener, a third
// connection from 127.0.0.1 with PerPeer 2 is closed at once and counted,
// a connection from another loopback address (127.0.0.2) is served, and
// closing a connection gives its slot back.
func TestListenRefusesOverPeerLimit(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var refused []connlimit.Reason
	lim := connlimit.New(connlimit.Limits{Max: 8, PerPeer: 2})
	lis := connlimit.Listen(inner, lim, func(r connlimit.Reason) {
		mu.Lock()
		refused = append(refused, r)
		mu.Unlock()
	})
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	defer func() {
		lis.Close()
		for c := range accepted {
			c.Close()
		}
	}()
	dial := func(local string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err := d.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	var served []net.Conn
	for range 2 {
		dial("127.0.0.1")
		served = append(served, <-accepted)
	}
	third := dial("127.0.0.1")
	// The listener closes it: the client reads EOF (or a reset).
	third.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard only
	if _, err := third.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("third connection from one peer: read %v, want it closed", err)
	}
	dial("127.0.0.2")
	other := <-accepted
	if got := lim.Open(); got != 3 {
		t.Errorf("open %d, want 3", got)
	}
	served[0].Close()
	served[0].Close() // a second Close gives nothing back twice
	dial("127.0.0.1")
	<-accepted
	if got := lim.Open(); got != 3 {
		t.Errorf("open after a close and a new conn %d, want 3", got)
	}
	other.Close()
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]connlimit.Reason{connlimit.PeerFull}, refused); diff != "" {
		t.Errorf("refusals (-want,+got):\n%s", diff)
	}
}

// isTimeout reports whether err is a deadline's: the hang guard's, not
// the server's close.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
