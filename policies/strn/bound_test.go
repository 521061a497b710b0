package strn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/drover-sched/drover/env"
)

// TestBound checks the one-node bound against the score it bounds, on
// random loads (inside, below and above the risk table's grid), speeds,
// free GPUs, sensitivities and settings: never above the score by more
// than the slack the scan allows it.
func TestBound(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 20000 {
		s := &STRN{}
		if i%2 == 0 {
			s.Overload, s.Uncertainty = 0.5+0.4*r.Float64(), 0.01+0.3*r.Float64()
		}
		s.defaults()
		c := &env.Cluster{}
		for range 4 {
			c.Nodes = append(c.Nodes, env.Node{GPUs: 1 + r.IntN(8), Speed: []float64{1, 0.5, 0.9, 1.3}[r.IntN(4)]})
		}
		s.free = make([]int, len(c.Nodes))
		s.load = make([]env.Usage, len(c.Nodes))
		for n, nd := range c.Nodes {
			s.free[n] = r.IntN(nd.GPUs + 1)
			s.load[n] = env.Usage{CPU: 4*r.Float64() - 1.5, MemBW: 4*r.Float64() - 1.5}
		}
		sens := Sensitivity{CPU: 2 * r.Float64(), MemBW: 2 * r.Float64(), Straggling: r.Float64(), Spread: r.Float64()}
		if r.IntN(5) == 0 {
			sens.CPU = 0
		}
		if !s.prepareBound(sens) {
			t.Fatalf("case %d: no bound for %+v", i, sens)
		}
		n := r.IntN(len(c.Nodes))
		g := 1 + r.IntN(max(1, s.free[n]))
		s.order, s.take = []int{n}, []int{g}
		sc := s.score(c, g, 8, sens).score
		if b := s.bound(c, n, g, sens); b-math.Abs(b)*boundSlack > sc {
			t.Fatalf("case %d: bound %v above score %v (load %+v, sens %+v)", i, b, sc, s.load[n], sens)
		}
	}
}
