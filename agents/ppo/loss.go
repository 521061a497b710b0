package ppo

import "math"

// NormalizeAdvantages rescales adv in place to zero mean and unit standard
// deviation, (adv - mean) / (std + 1e-8) with the unbiased (n-1) standard
// deviation, as CleanRL's ppo.py does per minibatch (torch.std). A single
// element becomes 0.
func NormalizeAdvantages(adv []float32) {
	n := len(adv)
	if n == 0 {
		return
	}
	var mean float64
	for _, a := range adv {
		mean += float64(a)
	}
	mean /= float64(n)
	var ss float64
	for _, a := range adv {
		d := float64(a) - mean
		ss += d * d
	}
	std := 0.0
	if n > 1 {
		std = math.Sqrt(ss / float64(n-1))
	}
	for i, a := range adv {
		adv[i] = float32((float64(a) - mean) / (std + 1e-8))
	}
}

// ClippedPolicyLoss returns PPO's clipped surrogate loss over a minibatch,
//
//	mean_i max(-A_i r_i, -A_i clamp(r_i, 1-clip, 1+clip)),  r_i = exp(newLogp_i - oldLogp_i),
//
// and writes its gradient with respect to each newLogp_i into grad (sized
// to the minibatch): -A_i r_i / n where the unclipped term is the larger
// one or the ratio lies inside the clip range, 0 where the clipped term
// wins outside it. It also returns the approximate KL, mean((r-1) - log r),
// and the fraction of clipped ratios, as CleanRL logs them.
func ClippedPolicyLoss(newLogp, oldLogp, adv []float32, clip float32, grad []float32) (loss, approxKL, clipFrac float32) {
	n := len(newLogp)
	if len(oldLogp) != n || len(adv) != n || len(grad) != n {
		panic("ppo: ClippedPolicyLoss length mismatch")
	}
	var sum, kl float64
	clipped := 0
	for i := range n {
		logr := float64(newLogp[i] - oldLogp[i])
		r := math.Exp(logr)
		a := float64(adv[i])
		c := min(max(r, 1-float64(clip)), 1+float64(clip))
		l1, l2 := -a*r, -a*c
		inside := r > 1-float64(clip) && r < 1+float64(clip)
		if !inside {
			clipped++
		}
		if l1 >= l2 {
			sum += l1
			grad[i] = float32(-a * r / float64(n))
		} else {
			sum += l2
			if inside {
				grad[i] = float32(-a * r / float64(n))
			} else {
				grad[i] = 0
			}
		}
		kl += (r - 1) - logr
	}
	return float32(sum / float64(n)), float32(kl / float64(n)), float32(clipped) / float32(n)
}

// ClippedValueLoss returns PPO's clipped value loss over a minibatch,
//
//	0.5 mean_i max((v_i - R_i)^2, (oldV_i + clamp(v_i - oldV_i, -clip, clip) - R_i)^2),
//
// and writes its gradient with respect to each new value v_i into grad.
func ClippedValueLoss(newV, oldV, ret []float32, clip float32, grad []float32) float32 {
	n := len(newV)
	if len(oldV) != n || len(ret) != n || len(grad) != n {
		panic("ppo: ClippedValueLoss length mismatch")
	}
	var sum float64
	for i := range n {
		v, o, r := float64(newV[i]), float64(oldV[i]), float64(ret[i])
		d := v - o
		dc := min(max(d, -float64(clip)), float64(clip))
		u := (v - r) * (v - r)
		vc := o + dc - r
		c := vc * vc
		if u >= c {
			sum += u
			grad[i] = float32((v - r) / float64(n))
		} else {
			sum += c
			if d > -float64(clip) && d < float64(clip) {
				grad[i] = float32(vc / float64(n))
			} else {
				grad[i] = 0
			}
		}
	}
	return float32(0.5 * sum / float64(n))
}
