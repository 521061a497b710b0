package infer

import (
	"errors"

	"github.com/drover-sched/drover/env/infer/kv"
)

// Decision is a router's answer for one arriving request: the instance
// that runs its prompt and the one that generates its tokens, and the
// format its KV cache takes. Equal indices run both phases there
// (colocated, no KV transfer); different ones send the KV cache of the
// prompt from Prefill to Decode over the link.
type Decision struct {
	Prefill, Decode int
	// Format is the request's KV-cache format (package kv); the zero
	// Format is the dense 16-bit cache, the only one without a
	// Model.Arch. A format other than the dense one sizes the cache
	// (kv.Format.StoredBytes on the instances, TransferBytes on the link)
	// and adds its work (kv.Format.Work): encoding in the prompt's
	// iteration, decoding on arrival (in the transfer), and per decode
	// iteration its dequantization or HACK's approximation, in operations
	// at the GPUs' VectorOPS and bytes at their HBM bandwidth.
	Format kv.Format
}

// Router decides where each arriving request runs. Route is called once
// per request, in arrival order, at its arrival time; it reads the
// deployment through v (valid only during the call) and must not keep it.
type Router interface {
	Route(v *View, r Request) (Decision, error)
}

// IdleObserver is an optional ability of a Router: InstanceIdle is called
// whenever instance i looks for work and finds none (no batch and no
// request waiting), as SplitwiseSim's instances call the scheduler's
// notify_free_instance (instance.py, start_iteration). mixed_pool uses it
// to return a borrowed instance to its own pool.
type IdleObserver interface {
	InstanceIdle(v *View, i int)
}

// ErrBadDecision is returned by Apply (and Run) when a Decision names an
// instance that does not exist.
var ErrBadDecision = errors.New("infer: bad decision")

// InstanceState is what a router sees of one instance.
type InstanceState struct {
	// Role, GPU and TP are the instance's configuration.
	Role Role
	GPU  string
	TP   int
	// PendingTokens counts the work routed to the instance and not yet
	// done: a routed prompt's tokens until the prompt completes, and one
	// token per request whose decode it runs until the request finishes
	// (SplitwiseSim's sched_pending_tokens).
	PendingTokens int64
	// ReservedBytes is the memory the routed requests will need at most
	// (their prompt's and their full output's KV cache) plus the weights,
	// less what finished requests freed (SplitwiseSim's sched_memory).
	ReservedBytes int64
	// UsedBytes is the memory in use now: weights and allocated KV caches.
	UsedBytes int64
	// MaxBytes is the instance's memory: TP x the GPU's memory.
	MaxBytes int64
	// Queued counts the tasks waiting to run (SplitwiseSim's
	// pending_queue), Running those in the current batch.
	Queued, Running int
}

// View is the read-only state a router decides on.
type View struct {
	s *Sim
}

// Now is the simulated time in seconds.
func (v *View) Now() float64 { return v.s.now }

// NumInstances is the number of instances.
func (v *View) NumInstances() int { return len(v.s.insts) }

// Instance returns instance i's state.
func (v *View) Instance(i int) InstanceState {
	in := v.s.insts[i]
	return InstanceState{
		Role: in.cfg.Role, GPU: in.cfg.GPU, TP: in.cfg.TP,
		PendingTokens: in.schedPending, ReservedBytes: in.schedMem,
		UsedBytes: in.memory, MaxBytes: in.maxMem,
		Queued: len(in.pendingQueue), Running: len(in.batch),
	}
}

// KVBytes is the dense KV cache of tokens tokens on instance i.
func (v *View) KVBytes(i, tokens int) int64 {
	return int64(tokens) * v.s.cfg.Model.KVBytesPerToken
}

// StoredBytes is the KV cache of tokens tokens in format f, or -1 when the
// model has no architecture for f (Model.Arch) or f does not fit it.
func (v *View) StoredBytes(f kv.Format, tokens int) int64 {
	if f == (kv.Format{}) {
		return int64(tokens) * v.s.cfg.Model.KVBytesPerToken
	}
	if v.s.cfg.Model.Arch == (kv.Arch{}) || tokens < 0 {
		return -1
	}
	b, err := v.s.bindFormat(f)
	if err != nil {
		return -1
	}
	return b.StoredBytes(tokens)
}
