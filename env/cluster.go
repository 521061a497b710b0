package env

import "fmt"

// Node is one machine of the simulated cluster.
type Node struct {
	// Name identifies the node in logs and decisions' error messages.
	Name string
	// GPUs is the number of GPUs on the node.
	GPUs int
	// GPUType names the GPU model ("" for the reference type).
	GPUType string
	// Speed is the GPU speed relative to the reference GPU (1 = reference;
	// 0 is read as 1).
	Speed float64
	// CPUs is the number of CPU cores.
	CPUs int
	// MemoryGiB is the host memory in GiB.
	MemoryGiB float64
	// NICGbps is the network interface bandwidth in Gbit/s.
	NICGbps float64
	// Rack is the index of the rack the node sits in.
	Rack int
}

// Cluster describes the machines and the network between them.
type Cluster struct {
	// Nodes lists the machines; a node's index in this slice is its id in
	// allocations.
	Nodes []Node
	// IntraRackGbps is the bandwidth between two nodes of one rack.
	IntraRackGbps float64
	// CrossRackGbps is each node's share of its rack's uplink when every
	// node of the rack sends across racks at once: the uplink carries the
	// rack's nodes x CrossRackGbps each way (IntraRackGbps / CrossRackGbps
	// is the oversubscription). The per-worker model shares an uplink
	// among the ring hops crossing it, so a lone crossing flow still runs
	// at up to IntraRackGbps; heuristics that only know the placement
	// take CrossRackGbps as the cross-rack bandwidth (the worst case).
	CrossRackGbps float64
}

// Default hardware of a node built by Homogeneous: a DGX-1-like server.
const (
	defaultCPUs      = 64
	defaultMemoryGiB = 512
	defaultNICGbps   = 100
	defaultRackSize  = 8
)

// Homogeneous returns a cluster of n identical nodes with g GPUs each,
// racked eight to a rack, with 100 Gbit/s NICs, 100 Gbit/s within a rack and
// 40 Gbit/s per node across racks (a 320 Gbit/s uplink per rack: 2.5x
// oversubscribed).
func Homogeneous(n, g int) Cluster {
	c := Cluster{Nodes: make([]Node, n), IntraRackGbps: 100, CrossRackGbps: 40}
	for i := range c.Nodes {
		c.Nodes[i] = Node{
			Name:      fmt.Sprintf("node-%d", i),
			GPUs:      g,
			Speed:     1,
			CPUs:      defaultCPUs,
			MemoryGiB: defaultMemoryGiB,
			NICGbps:   defaultNICGbps,
			Rack:      i / defaultRackSize,
		}
	}
	return c
}

// TotalGPUs returns the number of GPUs in the cluster.
func (c *Cluster) TotalGPUs() int {
	t := 0
	for _, n := range c.Nodes {
		t += n.GPUs
	}
	return t
}

// MaxNodeGPUs returns the most GPUs on one node of the cluster (0 for no
// nodes): the node size of the packed reference placement that the
// throughput models take for it (Drover.GPUsPerNode, Pollux.GPUsPerNode),
// as trace.Run sets them. A model left at its default of 4 on a cluster
// of 8-GPU nodes would count an 8-GPU job's measured duration as that of
// two nodes, so the job would run faster than measured on one.
func (c *Cluster) MaxNodeGPUs() int {
	g := 0
	for _, n := range c.Nodes {
		g = max(g, n.GPUs)
	}
	return g
}

// validate reports the first problem with the cluster description.
func (c *Cluster) validate() error {
	if len(c.Nodes) == 0 {
		return fmt.Errorf("%w: no nodes", ErrBadCluster)
	}
	if len(c.Nodes) > MaxNodes {
		return fmt.Errorf("%w: %d nodes, want at most %d", ErrBadCluster, len(c.Nodes), MaxNodes)
	}
	for i, n := range c.Nodes {
		switch {
		case n.GPUs <= 0 || n.GPUs > MaxGPUsPerNode:
			return fmt.Errorf("%w: node %d (%s): GPUs = %d, want 1 to %d", ErrBadCluster, i, n.Name, n.GPUs, MaxGPUsPerNode)
		case n.Speed < 0 || n.Speed != n.Speed:
			return fmt.Errorf("%w: node %d (%s): speed = %v, want >= 0", ErrBadCluster, i, n.Name, n.Speed)
		case n.NICGbps < 0 || n.NICGbps != n.NICGbps:
			return fmt.Errorf("%w: node %d (%s): NIC = %v Gbit/s, want >= 0", ErrBadCluster, i, n.Name, n.NICGbps)
		}
	}
	return nil
}
