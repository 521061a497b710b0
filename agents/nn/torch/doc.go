// Package torch is Drover's libtorch backend for agents/nn: the learning
// half of PPO and DQN (forward passes with autograd, backward passes,
// gradient clipping, torch.optim.Adam) on a CPU or a CUDA device, behind
// the same nn.Trainer interface as the pure-Go backend. It is built only
// with the torch build tag, through cgo and a small C shim over libtorch's
// C++ API (shim.h, shim.cc), and links against libtorch (Debian's
// libtorch-dev: CPU only; a CUDA build of libtorch for GPUs). The default
// build of Drover has no cgo and no such dependency; there the package is
// this documentation only, and nn.OpenBackend("torch", ...) says how to
// get it.
//
// Importing the package registers the backend as "torch"; drover's
// --backend torch (and a config's ppo.backend, dqn.backend) selects it,
// and --device cpu|cuda|cuda:N picks the device. The Go MLPs stay the
// networks' canonical form: they are initialised in Go from the seed, act
// during rollouts, and are what checkpoints save, so a checkpoint trained
// with either backend is the same safetensors file. A trainer copies them
// to the device, trains there, and writes the weights back with Sync
// after every update (PPO) or step (DQN).
//
// The results agree with the Go backend's to float32 rounding (the tests
// compare forward passes, gradients, clipping and Adam steps within 1e-5
// relative), not bit for bit: libtorch sums in its own order. A run is
// reproducible on one machine for one thread count. On the CPU, libtorch's
// intra-op threads are DROVER_TORCH_THREADS, or 1 when unset: one thread is
// fastest for CleanRL-sized networks, more pay off only for large layers
// and batches (docs/results/learning.md).
//
// Usage:
//
//	import _ "github.com/drover-sched/drover/agents/nn/torch" // in a torch build
//
//	b, err := nn.OpenBackend("torch", "cuda:0")
//	tr, err := b.NewTrainer([]*nn.MLP{actor, critic}, 2.5e-4, 1e-5)
//	defer tr.Close()
//	for _, mb := range minibatches {
//		tr.ZeroGrad()
//		logits := tr.Module(0).Forward(mb.Obs)
//		// ... losses and dL/dlogits on the host ...
//		tr.Module(0).Accumulate(dLogits)
//		tr.ClipGradNorm(0.5)
//		if err := tr.Step(); err != nil { ... }
//	}
//	err = tr.Sync() // actor and critic now hold the trained weights
package torch
