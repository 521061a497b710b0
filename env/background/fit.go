package background

import (
	"math"
	"strconv"
)

// Fit estimates Params from measured series at the given step. The series
// are resampled and their MemBW filled as by NewReplay; each resource is
// mapped to logit space (clamped to [LogitEps, 1-LogitEps]), and then:
//
//   - LevelMean and LevelStd are the mean and sample standard deviation
//     (n-1) over series of each series' mean logit;
//   - Std is the root mean square of the deviations from the own series'
//     mean, pooled over all steps of all series;
//   - Phi is the pooled lag-1 autocorrelation of those deviations,
//     sum x[t]*x[t-1] / sum x[t]^2 (within series), capped at 0.9999;
//   - the correlations are those of the pooled innovations
//     x[t] - Phi*x[t-1].
//
// Every number is rounded to 6 significant digits, so a refit reproduces
// params.json exactly. Fit returns the errors of NewReplay for unusable
// series or step.
func Fit(series []Series, step float64) (Params, error) {
	if err := checkStep(step); err != nil {
		return Params{}, err
	}
	machines, err := resampleAll(series, step)
	if err != nil {
		return Params{}, err
	}
	// dev[r][m] is resource r's deviation series on machine m.
	var dev [3][][]float64
	var procs [3]Process
	for r := range 3 {
		var levels []float64
		var sxx, sxy float64
		var n int
		for _, u := range machines {
			z := make([]float64, len(u))
			var mean float64
			for i, v := range u {
				z[i] = logit([3]float64{v.CPU, v.MemBW, v.Net}[r])
				mean += z[i]
			}
			mean /= float64(len(z))
			levels = append(levels, mean)
			for i := range z {
				z[i] -= mean
				sxx += z[i] * z[i]
				n++
				if i > 0 {
					sxy += z[i] * z[i-1]
				}
			}
			dev[r] = append(dev[r], z)
		}
		lm, ls := meanStd(levels)
		procs[r] = Process{LevelMean: lm, LevelStd: ls, Std: math.Sqrt(sxx / float64(n))}
		if sxx > 0 {
			procs[r].Phi = min(0.9999, max(-0.9999, sxy/sxx))
		}
	}
	// Innovation correlations.
	var cov [3][3]float64
	for m := range machines {
		for i := 1; i < len(dev[0][m]); i++ {
			var e [3]float64
			for r := range 3 {
				e[r] = dev[r][m][i] - procs[r].Phi*dev[r][m][i-1]
			}
			for a := range 3 {
				for b := range 3 {
					cov[a][b] += e[a] * e[b]
				}
			}
		}
	}
	corr := func(a, b int) float64 {
		if cov[a][a] == 0 || cov[b][b] == 0 {
			return 0
		}
		return cov[a][b] / math.Sqrt(cov[a][a]*cov[b][b])
	}
	p := Params{
		Step: step, CPU: procs[0], MemBW: procs[1], Net: procs[2],
		CorrCPUMemBW: corr(0, 1), CorrCPUNet: corr(0, 2), CorrMemBWNet: corr(1, 2),
	}
	return p.rounded(), nil
}

// meanStd returns the mean and the sample standard deviation (0 for fewer
// than two values).
func meanStd(x []float64) (mean, std float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1))
}

// round6 rounds v to 6 significant digits.
func round6(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return r
}

func (p Params) rounded() Params {
	for _, q := range []*Process{&p.CPU, &p.MemBW, &p.Net} {
		q.LevelMean, q.LevelStd, q.Std, q.Phi = round6(q.LevelMean), round6(q.LevelStd), round6(q.Std), round6(q.Phi)
	}
	p.Step = round6(p.Step)
	p.CorrCPUMemBW, p.CorrCPUNet, p.CorrMemBWNet = round6(p.CorrCPUMemBW), round6(p.CorrCPUNet), round6(p.CorrMemBWNet)
	return p
}
