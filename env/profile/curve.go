package profile

// ValidationCurve returns, for a global batch size, the iterations done
// and the validation metric after each epoch up to and including the
// completion epoch (CompletionEpoch + 1 points each), interpolated
// between the bracketing validated batch sizes as Iteration and
// FinalMetric are, with the batch size clamped to the validated range
// first (as FinalMetric clamps it). The metric is the model's own, rising
// (accuracy) or falling (loss, WER). It implements env.Curve.
func (m *Measured) ValidationCurve(batchSize int) (iterations, metric []float64) {
	batchSize = min(max(batchSize, m.valBsz[0]), m.valBsz[len(m.valBsz)-1])
	n := m.CompletionEpoch(batchSize) + 1
	iterations, metric = make([]float64, n), make([]float64, n)
	lo, hi := m.bracket(batchSize)
	for e := range n {
		l, u := m.row(lo, e), m.row(hi, e)
		iterations[e], metric[e] = l.Iteration, l.Metric
		if lo != hi {
			bl, bh := m.valBsz[lo], m.valBsz[hi]
			iterations[e] = lerp(batchSize, bl, bh, l.Iteration, u.Iteration)
			metric[e] = lerp(batchSize, bl, bh, l.Metric, u.Metric)
		}
	}
	return iterations, metric
}
