// Package nn is Drover's small neural-network backend: float32 multilayer
// perceptrons with explicit forward and backward passes, a masked categorical
// distribution, losses, the Adam optimiser, global-norm gradient clipping,
// orthogonal initialisation, and weight files in the safetensors format.
//
// It has no autograd graph. A Layer's Forward caches what its Backward needs;
// Backward takes dL/d(output), accumulates parameter gradients into
// Param.Grad (as PyTorch does, until ZeroGrad) and returns dL/d(input). Every
// gradient is checked against central finite differences in the tests.
//
// Matrices are row-major [Mat] values, one sample per row. Products follow
// gonum's pure-Go float32 BLAS (about 4.7x faster than plain Go loops for a
// 256x64x64 product); [SetBLAS] swaps in a cgo BLAS such as OpenBLAS
// through gonum.org/v1/netlib. On amd64 with AVX2, Linear's three products
// (forward, input gradient, weight gradient) run on assembly kernels that
// keep a block of the result in registers (gemm_amd64.s, and twice as wide
// with AVX-512 in gemm512_amd64.s: 10-14x gonum's speed on 64-wide layers),
// and Tanh on a vector kernel (tanh_amd64.s, tanh512_amd64.s);
// both give gonum's and float32(math.Tanh)'s results bit for bit, by
// reproducing gonum's order of summation (gemm_fast.go) and by checking
// every float32 input of tanh (TestTanhSliceExhaustive), so training
// curves and checkpoints are the same with or without them. The purego
// build tag turns them off, and so does the netlib tag (a package with cgo
// cannot hold Go assembly; OpenBLAS then does the products).
//
// Randomness (initialisation, sampling) comes only from the rand.Source the
// caller passes, so one seed gives bit-identical weights. Shape mismatches
// are programmer errors and panic with an "nn: " message; malformed weight
// files are data errors and return an error wrapping [ErrCorrupt].
//
// # Usage
//
// A PPO-style network as in CleanRL's ppo.py (orthogonal init with gain √2,
// a head with gain 0.01 for the actor and 1 for the critic, zero biases) and
// one optimisation step on a minibatch:
//
//	src := rand.NewPCG(seed, 0)
//	actor := nn.NewOrthogonalMLP([]int{obsDim, 64, 64, nActions}, nn.NewTanh, math.Sqrt2, 0.01, src)
//	critic := nn.NewOrthogonalMLP([]int{obsDim, 64, 64, 1}, nn.NewTanh, math.Sqrt2, 1, src)
//	params := append(actor.Params(), critic.Params()...)
//	opt := nn.NewAdam(params, 2.5e-4, 1e-5)
//
//	for _, mb := range minibatches {
//		opt.SetLR(annealedLR)
//		actor.ZeroGrad()
//		critic.ZeroGrad()
//		dist := nn.NewCategorical(actor.Forward(mb.Obs), mb.Mask)
//		newLogProb, entropy := dist.LogProb(mb.Actions), dist.Entropy()
//		// ... compute the clipped policy loss and dL/dlogp, dL/dentropy per row ...
//		dLogits := dist.LogProbGrad(mb.Actions, dLdLogProb)
//		dEnt := dist.EntropyGrad(dLdEntropy)
//		for i := range dLogits.Data {
//			dLogits.Data[i] += dEnt.Data[i]
//		}
//		actor.Accumulate(dLogits)
//		_, dValue := nn.MSE(critic.Forward(mb.Obs), mb.Returns) // scale for 0.5·vf_coef
//		critic.Accumulate(dValue)
//		nn.ClipGradNorm(params, 0.5)
//		opt.Step()
//	}
//
// Save and restore both networks in one safetensors file:
//
//	all := append(nn.WithPrefix("actor", actor.Params()), nn.WithPrefix("critic", critic.Params())...)
//	err := nn.Save(f, all, map[string]string{"algo": "ppo"})
//	...
//	tensors, meta, err := nn.Load(f)
//	err = nn.Assign(all, tensors)
//
// The weight file format is described in docs/format/checkpoint-weights.md.
//
// # Backends
//
// The agents learn through a [Trainer] from [OpenBackend], so that the
// same loop runs on the pure-Go backend ("go", the MLPs trained in place,
// bit for bit the loop above) or on libtorch ("torch", package
// agents/nn/torch, in a binary built with the torch tag, on a CPU or a
// CUDA device). The Go MLPs stay canonical: built and initialised here,
// acting in rollouts, saved in checkpoints; Sync copies a backend's
// trained weights back into them:
//
//	be, err := nn.OpenBackend(cfg.Backend, cfg.Device) // "" and "": Go on the CPU
//	tr, err := be.NewTrainer([]*nn.MLP{actor, critic}, 2.5e-4, 1e-5)
//	defer tr.Close()
//	for _, mb := range minibatches {
//		tr.ZeroGrad()
//		dist := nn.NewCategorical(tr.Module(0).Forward(mb.Obs), mb.Mask)
//		// ... dLogits as above ...
//		tr.Module(0).Accumulate(dLogits)
//		tr.ClipGradNorm(0.5)
//		if err := tr.Step(); err != nil { ... }
//	}
//	err = tr.Sync()
package nn
