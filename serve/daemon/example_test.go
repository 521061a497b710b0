package daemon_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/drover-sched/drover/serve/daemon"
)

// Run serves until its context ends: here, as soon as every listener
// listens.
func ExampleRun() {
	c := daemon.Defaults()
	c.Addr, c.MetricsAddr, c.PlaceAddr = ":0", "", ":0" // a port alone binds loopback
	ctx, cancel := context.WithCancel(context.Background())
	c.Ready = func(a daemon.Addrs) {
		fmt.Println("gRPC on loopback:", strings.HasPrefix(a.GRPC, "127.0.0.1:"))
		fmt.Println("fast calls on loopback:", strings.HasPrefix(a.Fast, "127.0.0.1:"))
		cancel() // SIGTERM, in drover serve
	}
	if err := daemon.Run(ctx, c); err != nil {
		fmt.Println(err)
	}
	// Output:
	// gRPC on loopback: true
	// fast calls on loopback: true
}
