package pdrl

import (
	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/env/infer/kv"
	"github.com/drover-sched/drover/env/infergym"
)

// SpeedName is the speed-aware hand rule, pd-rl's default teacher.
const SpeedName = "speed"

// Speed is a speed-aware variant of HACK's router for heterogeneous
// GPUs: the prompt goes to the prefill instance where its tokens and
// those pending there take the least time at the instance's FP16
// throughput (pending + prompt tokens over TP x FP16 FLOPS), the decode
// to the decode instance with the fewest pending tokens per unit of
// memory bandwidth (TP x HBM bytes/s) among those whose memory can still
// take the request's whole KV cache in Format (all of them if none can),
// the first on a tie. On one GPU type it decides as HACK does. Without
// prefill or decode instances it decides as HACK does.
type Speed struct {
	// Format is the requests' KV format (NewSpeed: HACK with Pi = 64).
	Format kv.Format
	// Arch is the served model's architecture, which sizes the format.
	Arch kv.Arch
}

var _ Decider = (*Speed)(nil)

// NewSpeed returns the speed-aware rule for a model of architecture a,
// with HACK's format, Pi = 64.
func NewSpeed(a kv.Arch) *Speed { return &Speed{Format: kv.HACKPi(64), Arch: a} }

// Decide implements Decider.
func (h *Speed) Decide(s infergym.State, r infer.Request) (infer.Decision, error) {
	need := kvNeed(h.Format, h.Arch, r)
	pre, dec, fitDec := -1, -1, -1
	var bp, bd, bf float64
	for i, st := range s.Instances {
		g, err := infer.LookupGPU(st.GPU)
		if err != nil || st.TP < 1 {
			return (&HACK{Format: h.Format, Arch: h.Arch}).Decide(s, r)
		}
		switch st.Role {
		case infer.Prefill:
			t := float64(st.PendingTokens+int64(r.Prompt)) / (float64(st.TP) * g.FP16FLOPS)
			if pre < 0 || t < bp {
				pre, bp = i, t
			}
		case infer.Decode:
			t := float64(st.PendingTokens) / (float64(st.TP) * g.HBMBytesPerSec)
			if dec < 0 || t < bd {
				dec, bd = i, t
			}
			if need >= 0 && st.ReservedBytes+need <= st.MaxBytes && (fitDec < 0 || t < bf) {
				fitDec, bf = i, t
			}
		}
	}
	if fitDec >= 0 {
		dec = fitDec
	}
	if pre < 0 || dec < 0 {
		return (&HACK{Format: h.Format, Arch: h.Arch}).Decide(s, r)
	}
	return infer.Decision{Prefill: pre, Decode: dec, Format: h.Format}, nil
}
