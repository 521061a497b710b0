package splitwise

import (
	"errors"
	"fmt"
	"slices"

	"github.com/drover-sched/drover/env/infer"
)

// Names of the routers, as SplitwiseSim's scheduler configurations spell
// them (configs/orchestrator_repo/schedulers/).
const (
	TokenJSQName  = "token_jsq"
	MixedPoolName = "mixed_pool"
)

// Names lists the routers New builds.
var Names = []string{TokenJSQName, MixedPoolName}

// New returns a fresh router by name, mixed_pool with SplitwiseSim's
// defaults.
func New(name string) (infer.Router, error) {
	switch name {
	case TokenJSQName:
		return NewTokenJSQ(), nil
	case MixedPoolName:
		return NewMixedPool(MixedPoolConfig{}), nil
	}
	return nil, fmt.Errorf("splitwise: unknown router %q (want one of %v)", name, Names)
}

// ErrNoInstances is returned when a router has no instance to route to.
var ErrNoInstances = errors.New("splitwise: no instances available")

// TokenJSQ runs both phases of every request on the instance with the
// fewest pending tokens (TokenJSQScheduler, scheduler.py), the first such
// instance on a tie.
type TokenJSQ struct{}

var _ infer.Router = (*TokenJSQ)(nil)

// NewTokenJSQ returns a token_jsq router.
func NewTokenJSQ() *TokenJSQ { return &TokenJSQ{} }

// Route implements infer.Router.
func (*TokenJSQ) Route(v *infer.View, _ infer.Request) (infer.Decision, error) {
	n := v.NumInstances()
	if n == 0 {
		return infer.Decision{}, ErrNoInstances
	}
	best, bestTok := 0, v.Instance(0).PendingTokens
	for i := 1; i < n; i++ {
		if t := v.Instance(i).PendingTokens; t < bestTok {
			best, bestTok = i, t
		}
	}
	return infer.Decision{Prefill: best, Decode: best}, nil
}

// MixedPoolConfig holds mixed_pool's parameters.
type MixedPoolConfig struct {
	// PromptMaxPendingTokens is how many pending tokens make a prompt
	// instance's queue long (prompt_max_pending_batch_tokens, 8192 in
	// configs/orchestrator_repo/schedulers/mixed_pool.yml); 0 means 8192.
	PromptMaxPendingTokens int64
}

// MixedPool is SplitwiseSim's MixedPoolScheduler (scheduler.py). It keeps
// three pools: prompt instances (role infer.Prefill), token instances
// (infer.Decode) and mixed ones, borrowed from either. A prompt goes to the
// prompt pool's instance with the fewest pending tokens unless that one
// has a queue and would pass PromptMaxPendingTokens, then to the mixed
// pool's by the same rule; a decode goes to the token pool's instance with
// the least reserved memory unless the request's KV cache would fill it,
// then to the mixed pool's. When the prompt pools fail, the token instance
// with the fewest pending tokens is borrowed into the mixed pool for the
// prompt; when the token pools fail, the prompt instance with the least
// reserved memory. If either still has none, both phases run on the
// instance of fewest pending tokens of all. A borrowed instance returns to
// its pool when it falls idle (infer.IdleObserver). Colocated instances
// start, and stay, in the mixed pool (SplitwiseSim has no such role).
type MixedPool struct {
	cfg                  MixedPoolConfig
	init                 bool
	prompt, token, mixed []int
	borrowed             []bool
}

var (
	_ infer.Router       = (*MixedPool)(nil)
	_ infer.IdleObserver = (*MixedPool)(nil)
)

// NewMixedPool returns a mixed_pool router.
func NewMixedPool(cfg MixedPoolConfig) *MixedPool {
	if cfg.PromptMaxPendingTokens == 0 {
		cfg.PromptMaxPendingTokens = 8192
	}
	return &MixedPool{cfg: cfg}
}

func (m *MixedPool) setup(v *infer.View) {
	m.init = true
	m.borrowed = make([]bool, v.NumInstances())
	for i := range v.NumInstances() {
		switch v.Instance(i).Role {
		case infer.Prefill:
			m.prompt = append(m.prompt, i)
		case infer.Decode:
			m.token = append(m.token, i)
		default:
			m.mixed = append(m.mixed, i)
		}
	}
}

// argmin returns the first instance of pool with the least key, or -1.
func argmin(pool []int, key func(int) int64) int {
	best := -1
	var bk int64
	for _, i := range pool {
		if k := key(i); best < 0 || k < bk {
			best, bk = i, k
		}
	}
	return best
}

// Route implements infer.Router.
func (m *MixedPool) Route(v *infer.View, r infer.Request) (infer.Decision, error) {
	if !m.init {
		m.setup(v)
	}
	if (len(m.prompt) == 0 || len(m.token) == 0) && len(m.mixed) == 0 {
		return infer.Decision{}, ErrNoInstances
	}
	pending := func(i int) int64 { return v.Instance(i).PendingTokens }
	reserved := func(i int) int64 { return v.Instance(i).ReservedBytes }
	p := -1
	for _, pool := range [][]int{m.prompt, m.mixed} {
		// find_best_prompt_instance and is_queue_long.
		if i := argmin(pool, pending); i >= 0 {
			st := v.Instance(i)
			if !(st.Queued > 0 && st.PendingTokens+int64(r.Prompt) > m.cfg.PromptMaxPendingTokens) {
				p = i
				break
			}
		}
	}
	d := -1
	for _, pool := range [][]int{m.token, m.mixed} {
		// find_best_token_instance and is_memory_loaded: the prompt's
		// prompt + 1 tokens and the decode's output - 1.
		if i := argmin(pool, reserved); i >= 0 {
			st := v.Instance(i)
			if st.ReservedBytes+v.KVBytes(i, r.Prompt+1)+v.KVBytes(i, r.Output-1) < st.MaxBytes {
				d = i
				break
			}
		}
	}
	if p < 0 && len(m.token) > 0 {
		p = argmin(m.token, pending)
		m.borrow(&m.token, p)
	}
	if d < 0 && len(m.prompt) > 0 {
		d = argmin(m.prompt, reserved)
		m.borrow(&m.prompt, d)
	}
	if p < 0 || d < 0 {
		all := slices.Concat(m.prompt, m.mixed, m.token)
		p = argmin(all, pending)
		d = p
	}
	return infer.Decision{Prefill: p, Decode: d}, nil
}

func (m *MixedPool) borrow(pool *[]int, i int) {
	*pool = slices.DeleteFunc(*pool, func(j int) bool { return j == i })
	m.mixed = append(m.mixed, i)
	m.borrowed[i] = true
}

// InstanceIdle implements infer.IdleObserver: a borrowed instance returns
// to its own pool (notify_free_instance).
func (m *MixedPool) InstanceIdle(v *infer.View, i int) {
	if !m.init || !m.borrowed[i] {
		return
	}
	m.borrowed[i] = false
	m.mixed = slices.DeleteFunc(m.mixed, func(j int) bool { return j == i })
	switch v.Instance(i).Role {
	case infer.Prefill:
		m.prompt = append(m.prompt, i)
	case infer.Decode:
		m.token = append(m.token, i)
	}
}
