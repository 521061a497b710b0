package main

import (
	"flag"
	"fmt"

	"github.com/drover-sched/drover/env"
	"github.com/drover-sched/drover/env/converge"
	"github.com/drover-sched/drover/policies/compare"
)

// convergenceSweep is the --convergence value of drover eval that runs
// the fit and both ends of the band.
const convergenceSweep = "sweep"

// convergenceFlag defines --convergence on fs, the point of the fitted
// convergence model's confidence band (env/converge) the per-worker model
// runs at; sweep says whether "sweep" is accepted (drover eval).
func convergenceFlag(fs *flag.FlagSet, sweep bool) *string {
	help := "per-worker model: the convergence model (env/converge, fitted to measured training curves) at its point estimates (fit) or at the end of every parameter's 95% interval that costs a strategy least (low) or most (high: larger accuracy drops and slowdowns from staleness, earlier divergence); policies weigh strategies by the fit whatever the band"
	if sweep {
		help += "; sweep: the fit for the table, then both ends (a run whose jobs all trained BSP is reused at the ends with its accuracy recomputed: BSP's pace is the same at every band), and a line per table saying whether the ranking of the top three holds at both ends (table-low.md, table-high.md and their summaries beside table.md)"
	}
	return fs.String("convergence", "fit", help)
}

// convergenceBands returns the bands --convergence v runs, the table's
// first: one band, or with sweep (drover eval) the fit, low and high. The
// fit is env's default model (nil Convergence); each end has one model
// shared by every run, whose outcomes it caches.
func convergenceBands(fs *flag.FlagSet, v string, sweep bool) ([]compare.Band, error) {
	band := func(b converge.Band) compare.Band {
		if b == converge.BandFit {
			return compare.Band{Name: b.String()}
		}
		return compare.Band{Name: b.String(), Convergence: &env.Convergence{Band: b}}
	}
	if sweep && v == convergenceSweep {
		return []compare.Band{band(converge.BandFit), band(converge.BandLow), band(converge.BandHigh)}, nil
	}
	b, err := converge.ParseBand(v)
	if err != nil || v == "" {
		want := "fit, low or high"
		if sweep {
			want = "fit, low, high or sweep"
		}
		return nil, fmt.Errorf("%s %q: want %s", flagName(fs, "convergence"), v, want)
	}
	return []compare.Band{band(b)}, nil
}

// needsPerWorker returns an error when a band other than the fit is asked
// of a run without the per-worker model: the job-level model trains every
// job BSP, and the Pollux model has no convergence model.
func needsPerWorker(fs *flag.FlagSet, bands []compare.Band, perWorker bool) error {
	if perWorker || len(bands) == 1 && bands[0].Convergence == nil {
		return nil
	}
	return fmt.Errorf("%s %s: needs the per-worker model (--model drover with --stragglers)", flagName(fs, "convergence"), fs.Lookup("convergence").Value)
}
