package live_test

import (
	"fmt"
	"slices"

	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/live"
	"github.com/drover-sched/drover/policies/direct"
)

// toyCluster stands for the server's live state: 4 nodes of 4 GPUs in 2
// racks, node 1 busy with other work. It is both the Source (a snapshot
// every 600 s of its clock, jobs finishing 1000 s after they start) and
// the Actuator (it starts a job where the decision says).
type toyCluster struct {
	started bool
	now     float64
	arrive  []env.JobSpec
	running []live.Running
}

func (c *toyCluster) Snapshot(dst *live.State) error {
	if c.started {
		c.now += 600
	}
	c.started = true
	dst.Cluster = env.Homogeneous(4, 4)
	for i := range dst.Cluster.Nodes {
		dst.Cluster.Nodes[i].Rack = i / 2
	}
	c.running = slices.DeleteFunc(c.running, func(r live.Running) bool { return r.Start+1000 <= c.now })
	dst.Now = c.now
	dst.Free = append(dst.Free[:0], 4, 4, 4, 4)
	dst.Load = append(dst.Load[:0], env.Usage{CPU: 0.1}, env.Usage{CPU: 0.9, MemBW: 0.7}, env.Usage{CPU: 0.2}, env.Usage{CPU: 0.1})
	for _, r := range c.running {
		for _, n := range r.Nodes {
			dst.Free[n]--
		}
	}
	dst.Pending = dst.Pending[:0]
	for _, j := range c.arrive {
		if j.Submit <= c.now {
			dst.Pending = append(dst.Pending, j)
		}
	}
	dst.Running = append(dst.Running[:0], c.running...)
	return nil
}

func (c *toyCluster) Apply(d live.Decision) error {
	i := slices.IndexFunc(c.arrive, func(j env.JobSpec) bool { return j.Name == d.Job })
	c.running = append(c.running, live.Running{Spec: c.arrive[i], Nodes: d.Nodes, Start: c.now})
	c.arrive = slices.Delete(c.arrive, i, i+1)
	fmt.Printf("t=%4.0f s: start %s on %d GPUs\n", c.now, d.Job, len(d.Nodes))
	return nil
}

// Example runs the shipped strn-rl checkpoint, trained in simulation, on
// a (toy) live cluster: its greedy actor picks each action from the
// observation and the mask, and the decisions go to the cluster. Jobs a,
// b and d start at once (c, 16 GPUs, does not fit: d is backfilled), c
// when they have finished, e (arriving at 1500 s) when c has. The
// episode ends at the first snapshot with no pending job. The jobs ran
// 4 x 1000 s, and e 600 s so far: 1.28 hours; the return counts each job
// until the snapshot that no longer lists it: 1.5 hours.
func Example() {
	m, nets, err := checkpoints.Load("../../checkpoints/strn-rl")
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := direct.ConfigOf(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	actor := direct.Greedy(nets["actor"])
	cluster := &toyCluster{arrive: []env.JobSpec{
		{Name: "a", GPUs: 4, Model: "cifar10"}, {Name: "b", GPUs: 8, Model: "bert"},
		{Name: "c", GPUs: 16, Model: "imagenet"}, {Name: "d", GPUs: 2, Model: "ncf"},
		{Name: "e", Submit: 1500, GPUs: 1, Model: "yolov3"},
	}}
	e, err := live.New(live.Config{Encoder: cfg}, cluster, cluster)
	if err != nil {
		fmt.Println(err)
		return
	}
	obs, _ := e.Reset(0)
	var mask []bool
	ret := 0.0
	for e.Job() != nil {
		mask = e.ActionMask(mask)
		var r float64
		var term, trunc bool
		obs, r, term, trunc, _ = e.Step(actor(obs, mask))
		ret += r
		if term || trunc {
			fmt.Printf("t=%4.0f s: terminated %v, truncated %v, error %v; return %.2f h\n", e.View().Now, term, trunc, e.Err(), ret)
		}
	}
	// Output:
	// t=   0 s: start a on 4 GPUs
	// t=   0 s: start b on 8 GPUs
	// t=   0 s: start d on 2 GPUs
	// t=1200 s: start c on 16 GPUs
	// t=2400 s: start e on 1 GPUs
	// t=3000 s: terminated true, truncated false, error <nil>; return -1.50 h
}
