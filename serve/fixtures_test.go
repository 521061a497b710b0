package serve_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-sched/drover/agents/nn"
	"github.com/drover-sched/drover/checkpoints"
	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/placement"
	"github.com/drover-sched/drover/serve"
)

// writeCheckpoint writes a placement-env checkpoint for the 64-node,
// 8-rack test cluster to dir: small seeded random weights, with the output
// bias favouring action prefer (8: spread).
func writeCheckpoint(tb testing.TB, dir string, converged bool, prefer int, seed uint64) {
	tb.Helper()
	const obsDim, actions = 2 + 6 + 3 + 4*8 + 2, 9
	hidden := []int{16, 16}
	net := checkpoints.Build(obsDim, hidden, actions, "tanh")
	rng := rand.New(rand.NewPCG(seed, 7))
	for _, p := range net.Params() {
		for i := range p.Value {
			p.Value[i] = float32(rng.NormFloat64() * 0.01)
		}
	}
	ls := net.Linears()
	ls[len(ls)-1].B.Value[prefer] = 5
	meta := checkpoints.Meta{Env: "placement", Algo: "ppo", ObsDim: obsDim, Actions: actions, Hidden: hidden, Activation: "tanh",
		Networks: []string{"actor"}, Seed: seed, Converged: converged}
	if err := checkpoints.Save(dir, meta, map[string]*nn.MLP{"actor": net}); err != nil {
		tb.Fatal(err)
	}
}

// versionDir returns DIR/000n.
func versionDir(root string, n int) string { return filepath.Join(root, fmt.Sprintf("%04d", n)) }

// corrupt writes a checkpoint whose weights do not match its probe.
func corrupt(tb testing.TB, dir string) {
	tb.Helper()
	writeCheckpoint(tb, dir, true, 0, 99)
	p := filepath.Join(dir, checkpoints.WeightsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	for i := len(b) - 64; i < len(b); i++ {
		b[i] ^= 0x55
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// testDeadline is the learned policy's time limit (WithModelTimeout) in the
// tests' cores, and the deadline of their calls: what a loaded machine
// under -race must finish but a working one does at once. serve's default
// of 50 ms passed before a fake policy answered there (issue 31); the
// tests about the limit itself set their own.
const testDeadline = 10 * time.Minute

// fakeModel is a Learned policy for tests: it sleeps (until ctx ends)
// and then returns action or err.
type fakeModel struct {
	sleep  time.Duration
	action int
	err    error
	enter  chan struct{} // when set, receives a value on every call
	block  chan struct{} // when set, every call waits for it to close
}

func (f *fakeModel) Act(ctx context.Context, obs []float64, mask []bool) (int, error) {
	if f.enter != nil {
		f.enter <- struct{}{}
	}
	if f.block != nil {
		<-f.block
	}
	if f.sleep > 0 {
		select {
		case <-time.After(f.sleep):
		case <-ctx.Done():
			return -1, ctx.Err()
		}
	}
	return f.action, f.err
}

// fakeVersion wraps a Learned policy as a converged placement version
// for the 64-node test cluster.
func fakeVersion(seq int, l serve.Learned, converged bool) *serve.Version {
	enc := placement.NewEncoder(testCluster(), false)
	v := &serve.Version{Seq: seq, Name: serve.VersionName(seq), Policy: l}
	v.Meta.Env, v.Meta.ObsDim, v.Meta.Actions, v.Meta.Converged = "placement", enc.ObsDim(), enc.Actions(), converged
	return v
}

// testCluster is the env form of makeRequest's 64-node cluster (only its
// racks and GPUs matter to the encoder's shape).
func testCluster() *envCluster {
	c := &envCluster{}
	for i := range 64 {
		c.Nodes = append(c.Nodes, envNode{GPUs: 4, Rack: i / 8})
	}
	return c
}

type (
	envCluster = env.Cluster
	envNode    = env.Node
)

func readCheckpoint(tb testing.TB, dir string) (meta, weights []byte) {
	tb.Helper()
	meta, err := os.ReadFile(filepath.Join(dir, checkpoints.MetaFile))
	if err != nil {
		tb.Fatal(err)
	}
	weights, err = os.ReadFile(filepath.Join(dir, checkpoints.WeightsFile))
	if err != nil {
		tb.Fatal(err)
	}
	return meta, weights
}

func writeFiles(tb testing.TB, dir string, meta, weights []byte) {
	tb.Helper()
	if err := os.WriteFile(filepath.Join(dir, checkpoints.MetaFile), meta, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, checkpoints.WeightsFile), weights, 0o644); err != nil {
		tb.Fatal(err)
	}
}
