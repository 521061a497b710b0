package state_test

import (
	"fmt"
	"math"
	"time"

	"github.com/drover-sched/drover/env"
	pb "github.com/drover-sched/drover/serve/proto"
	"github.com/drover-sched/drover/serve/state"
)

// An agent says hello and sends a sample; a Place request's view of the
// cluster then gets the node's measured load, until the node goes
// silent for longer than StaleAfter and is avoided.
func ExampleStore() {
	st, err := state.New(state.Config{StaleAfter: 15 * time.Second})
	if err != nil {
		panic(err)
	}
	start := time.Unix(1_700_000_000, 0)
	if _, err := st.Hello(&pb.AgentHello{NodeId: "node-1", AgentId: "agent-a", Gpus: 8, Cpus: 64, NicGbps: 25, Rack: 0}, start); err != nil {
		panic(err)
	}
	// 42% CPU, memory stalls 10% of the time, 1.25 GB/s received on a
	// 25 Gbps NIC: Net = 1.25e9 * 8 / 25e9 = 0.4.
	seq, err := st.Apply("node-1", &pb.AgentMessage{Seq: 1, Body: &pb.AgentMessage_Sample{Sample: &pb.NodeSample{
		UnixNanos: start.Add(5 * time.Second).UnixNano(), CpuUtil: 0.42, MemPressure: 0.1, NetRxBps: 1.25e9, NetTxBps: 0.5e9,
	}}}, start.Add(5*time.Second))
	if err != nil {
		panic(err)
	}
	fmt.Println("acked", seq)

	// node-2 runs no agent: it keeps the request's numbers.
	ids := []string{"node-1", "node-2"}
	for _, now := range []time.Time{start.Add(10 * time.Second), start.Add(30 * time.Second)} {
		load := []env.Usage{{CPU: 0.9}, {CPU: 0.9}}
		free := []int{8, 8}
		stale, live := st.Overlay(ids, load, free, now)
		fmt.Printf("at +%v: %d stale, %d live; node-1 %+v free %d; node-2 %+v free %d\n",
			now.Sub(start), stale, live, load[0], free[0], load[1], free[1])
	}
	// Output:
	// acked 1
	// at +10s: 0 stale, 1 live; node-1 {CPU:0.42 MemBW:0.1 Net:0.4} free 8; node-2 {CPU:0.9 MemBW:0 Net:0} free 8
	// at +30s: 1 stale, 0 live; node-1 {CPU:0.9 MemBW:0 Net:0} free 0; node-2 {CPU:0.9 MemBW:0 Net:0} free 8
}

// Usage turns an agent's reading into the simulator's load shares.
func ExampleUsage() {
	prev := env.Usage{CPU: 0.5, MemBW: 0.5, Net: 0.5}
	// The network is the busier direction over the NIC: max(0.5e9, 2e9)
	// B/s * 8 / 40e9 b/s = 0.4; an unmeasured CPU (NaN) keeps prev's.
	u := state.Usage(&pb.NodeSample{CpuUtil: math.NaN(), MemPressure: 0.25, NetRxBps: 0.5e9, NetTxBps: 2e9}, 40, prev)
	fmt.Printf("%+v\n", u)
	// Output:
	// {CPU:0.5 MemBW:0.25 Net:0.4}
}
