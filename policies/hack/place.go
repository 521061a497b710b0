package hack

import "github.com/drover-sched/drover/env/infer"

// Instances is what Place reads of a deployment: its instances' states in
// the order a Decision names them. *infer.View is one; a client's report
// of its instances (env/infergym.State, as policies/pdrl decides on it)
// is another.
type Instances interface {
	NumInstances() int
	Instance(i int) infer.InstanceState
}

// Place is HACK's routing rule, which Router applies to the simulator's
// View and policies/pdrl's HACK to a reported State: the prefill instance
// with the fewest pending tokens, and the decode instance with the fewest
// among those whose memory can still take need bytes (the request's whole
// KV cache in its format; -1 when unknown, which no instance is checked
// for), all of them if none can, the first on a tie. Without prefill or
// decode instances both phases run on the instance with the fewest
// pending tokens (pre == dec). ok is false when there is no instance.
func Place[S Instances](s S, need int64) (pre, dec int, ok bool) {
	pre, dec = -1, -1
	col, fitDec := -1, -1
	fewer := func(i, j int) bool { return j < 0 || s.Instance(i).PendingTokens < s.Instance(j).PendingTokens }
	for i := range s.NumInstances() {
		st := s.Instance(i)
		if fewer(i, col) {
			col = i
		}
		switch st.Role {
		case infer.Prefill:
			if fewer(i, pre) {
				pre = i
			}
		case infer.Decode:
			if fewer(i, dec) {
				dec = i
			}
			if need >= 0 && st.ReservedBytes+need <= st.MaxBytes && fewer(i, fitDec) {
				fitDec = i
			}
		}
	}
	if fitDec >= 0 {
		dec = fitDec
	}
	switch {
	case pre >= 0 && dec >= 0:
		return pre, dec, true
	case col >= 0:
		return col, col, true
	}
	return -1, -1, false
}
