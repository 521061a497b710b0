//go:build torch

package torch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/agents/nn"
)

// benchShapes are the speed table's networks (docs/results/learning.md):
// CleanRL's 64-64 tanh net on CartPole (4 inputs, 2 outputs) at PPO's
// minibatch of 128, and a large 256-128-128-64 MLP at batches 256 and
// 4096.
var benchShapes = []struct {
	name  string
	sizes []int
	batch int
}{
	{"cleanrl-64-64", []int{4, 64, 64, 2}, 128},
	{"mlp-256-128-128-64", []int{256, 128, 128, 64}, 256},
	{"mlp-256-128-128-64", []int{256, 128, 128, 64}, 4096},
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStep times one training step of a network on each backend:
// zero the gradients, forward a batch, backpropagate a gradient of the
// outputs (an MSE's, computed on the host as PPO's and DQN's losses are),
// clip the global norm and take an Adam step. torch runs with 1 and with
// 2 intra-op threads; Go with one goroutine. CPU time per step is
// reported beside wall time (the fairer figure on a loaded machine).
func BenchmarkStep(b *testing.B) {
	type backend struct {
		name, device string
		threads      int
	}
	backends := []backend{{nn.GoBackend, "", 1}, {Name, "cpu", 1}, {Name, "cpu", 2}}
	if CUDADevices() > 0 {
		backends = append(backends, backend{Name, "cuda", 1})
	}
	for _, s := range benchShapes {
		for _, bk := range backends {
			name := fmt.Sprintf("net=%s/batch=%d/backend=%s", s.name, s.batch, bk.name)
			if bk.name == Name {
				name += fmt.Sprintf("/device=%s/threads=%d", bk.device, bk.threads)
			}
			b.Run(name, func(b *testing.B) {
				if bk.name == Name {
					SetThreads(bk.threads)
				}
				be, err := nn.OpenBackend(bk.name, bk.device)
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 2))
				m := nn.NewOrthogonalMLP(s.sizes, nn.NewTanh, math.Sqrt2, 1, rng)
				tr, err := be.NewTrainer([]*nn.MLP{m}, 1e-4, 1e-5)
				if err != nil {
					b.Fatal(err)
				}
				defer tr.Close()
				x := randomMat(s.batch, s.sizes[0], rng)
				target := randomMat(s.batch, s.sizes[len(s.sizes)-1], rng)
				step := func() {
					tr.ZeroGrad()
					y := tr.Module(0).Forward(x)
					_, dy := nn.MSE(y, target)
					tr.Module(0).Accumulate(dy)
					tr.ClipGradNorm(0.5)
					if err := tr.Step(); err != nil {
						b.Fatal(err)
					}
				}
				step()
				cpu0 := cpuNow()
				for b.Loop() {
					step()
				}
				if err := tr.Sync(); err != nil { // also waits for a device's queue
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/step")
				b.ReportMetric(float64((cpuNow()-cpu0).Microseconds())/float64(b.N), "cpu-us/step")
			})
		}
	}
}
