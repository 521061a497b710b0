package sas

import (
	"math"
	"testing"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/envtest"
	"github.com/drover-sched/drover/policies"
)

// TestEvenPS runs one PS job under SAS and under SAS without its
// reassignment (NewEvenPS) on a hand-built cluster whose second server
// node is overloaded, and checks the job's JCT against the iteration
// times worked by hand.
//
// Two 1-GPU nodes, so the 2-GPU job has one worker on each and one
// parameter-server shard on each (PSShards 2). The flat profile computes
// for 1 s per iteration and all-reduces for 0.5 s across the two nodes; on
// two servers the exchange is 0.5 x psOverRing(2, 2) = 0.5 x 1/(1/2) =
// 1 s. Node 1 has its CPU saturated in the background: u = 1 + 1/16 (its
// worker), overload (1.0625 - 0.8)/0.2 = 1.3125, so with CPU sensitivity 1
// its worker computes 2.3125x slower and its server serves 2.3125x slower
// (no other flows: no NIC contention). An iteration (BSP) waits for node
// 1's worker: 2.3125 s of compute plus the exchange, which
// env.PSTimeFactor stretches to
//
//	even shares (sas-even-ps):  max(1, 2.3125)      = 2.3125 s
//	shares by speed (sas):      2 / (1 + 1/2.3125)  = 1.3962264 s
//
// so 4.625 s and 3.7087264 s per iteration; on idle nodes 1 + 1 = 2 s. The
// job's work is fixed, so its run time scales with its iteration time:
// JCT/JCT(idle) = 2.3125 even, 1.8543632 rebalanced, and the reassignment
// lowers the JCT by 1 - 3.7087264/4.625 = 19.8%.
func TestEvenPS(t *testing.T) {
	job := envtest.MakeJob("ps").GPUs(2).Duration(100).Obj()
	job.Arch, job.PSShards = env.PS, 2
	run := func(bg env.Background, newPolicy policies.Factory) float64 {
		m := &env.Drover{
			Profiles: envtest.Profiles(envtest.Flat{Step: 1, Sync: 0.5, PerEpoch: 1, Epochs: 1}),
			Workers: &env.Workers{Background: bg, Period: 300, BurstNoise: -1, // no network burst noise: times are exact
				Sensitivities: map[string]env.Sensitivity{envtest.FlatName: {CPU: 1}}},
		}
		s, err := env.New(env.Config{Cluster: env.Homogeneous(2, 1), Model: m}, []env.JobSpec{job})
		if err != nil {
			t.Fatal(err)
		}
		p, err := newPolicy(policies.Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(p, nil); err != nil {
			t.Fatal(err)
		}
		return s.Jobs()[0].JCT()
	}
	hot := envtest.Background{Loads: map[int]env.Usage{1: {CPU: 1}}}
	idle := run(nil, New)
	slow := 2.3125
	tests := []struct {
		name   string
		policy policies.Factory
		bg     env.Background
		want   float64 // JCT / idle JCT
	}{
		{"sas, idle servers", New, nil, 1},
		{"sas-even-ps, idle servers", NewEvenPS, nil, 1},
		{"sas, node 1 overloaded: shares by speed", New, hot, (slow + 2/(1+1/slow)) / 2},
		{"sas-even-ps, node 1 overloaded: even shares", NewEvenPS, hot, (slow + slow) / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := run(tt.bg, tt.policy) / idle; math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("JCT / idle JCT = %v, want %v", got, tt.want)
			}
		})
	}
	if got, want := run(hot, New)/run(hot, NewEvenPS)-1, 3.7087264/4.625-1; math.Abs(got-want) > 1e-7 {
		t.Errorf("reassignment changes the JCT by %v, want %v", got, want)
	}
}

func TestNewEvenPS(t *testing.T) {
	p, err := NewEvenPS(policies.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := p.(*SAS); !ok || !s.EvenPS {
		t.Fatalf("NewEvenPS = %#v, want a *SAS with EvenPS", p)
	}
}
