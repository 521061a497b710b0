// Package servetest holds fixtures that the tests of the policy server
// (serve) and of its fast listener (serve/fast) share.
//
// # Usage
//
//	req := servetest.PlaceRequest(64, 8, 6, 0) // 64 nodes of 8 GPUs, a 6-worker job
//	resp, err := client.Place(ctx, req)
package servetest

import (
	"fmt"
	"math/rand/v2"

	pb "github.com/drover-sched/drover/serve/proto"
)

// PlaceRequest is a valid Place request: a cluster of nodes nodes of
// gpus GPUs (every second one half free) in racks of 8, with varied
// utilisation, whose ids ("node-N") are zero-padded to idLen bytes (0:
// not padded), and a job of workers workers.
func PlaceRequest(nodes, gpus, workers, idLen int) *pb.PlaceRequest {
	c := &pb.Cluster{IntraRackGbps: 100, CrossRackGbps: 40, PendingJobs: 3, RunningJobs: 20}
	for i := range nodes {
		free := gpus
		if i%2 == 1 {
			free = gpus / 2
		}
		u := float64(i%10) / 10
		id := fmt.Sprintf("node-%d", i)
		if idLen > 0 {
			id = fmt.Sprintf("node-%0*d", idLen-5, i)
		}
		c.Nodes = append(c.Nodes, &pb.Node{Id: id, Gpus: int32(gpus), FreeGpus: int32(free),
			Speed: 1, Cpus: 64, MemoryGib: 512, NicGbps: 100, Rack: int32(i / 8), CpuUtil: u, MemBwUtil: u / 2, NetUtil: u / 3})
	}
	return &pb.PlaceRequest{Cluster: c, Job: &pb.Job{Id: "job-1", Model: "imagenet", Workers: int32(workers), ExpectedDurationS: 7200}}
}

// RandomPlaceRequest is a valid Place request with extreme values
// mixed in: tiny and large speeds, loads up to the limit, bandwidth
// ratios that overflow, many equal nodes.
func RandomPlaceRequest(rng *rand.Rand) *pb.PlaceRequest {
	nodes := 1 + rng.IntN(80)
	rackSize := 1 + rng.IntN(10)
	c := &pb.Cluster{IntraRackGbps: []float64{0, 40, 100, 1e308}[rng.IntN(4)], CrossRackGbps: []float64{0, 10, 100, 1e-300}[rng.IntN(4)]}
	same := rng.IntN(3) == 0
	for i := range nodes {
		g := []int32{1, 2, 4, 8, 16}[rng.IntN(5)]
		u := func() float64 {
			if same {
				return 0.5
			}
			return []float64{0, 0.3, 0.79, 0.8, 0.81, 0.95, 1, 2.5, 10, rng.Float64()}[rng.IntN(10)]
		}
		sp := []float64{0, 1, 1, 0.5, 0.999, 1e-300, 4}[rng.IntN(7)]
		if same {
			g, sp = 4, 1
		}
		c.Nodes = append(c.Nodes, &pb.Node{Id: string(rune('a'+i%26)) + string(rune('a'+i/26)), Gpus: g, FreeGpus: int32(rng.IntN(int(g) + 1)),
			Speed: sp, Rack: int32(i / rackSize), CpuUtil: u(), MemBwUtil: u(), NetUtil: u()})
	}
	if rng.IntN(3) == 0 {
		rng.Shuffle(nodes, func(a, b int) { c.Nodes[a].Rack, c.Nodes[b].Rack = c.Nodes[b].Rack, c.Nodes[a].Rack })
	}
	j := &pb.Job{Id: "j", Workers: int32(1 + rng.IntN(40))}
	for _, n := range c.Nodes {
		if rng.IntN(8) == 0 {
			j.ExcludeNodes = append(j.ExcludeNodes, n.Id)
		}
	}
	return &pb.PlaceRequest{Cluster: c, Job: j}
}
