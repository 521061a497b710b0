package main

import (
	"flag"

	"github.com/drover-sched/drover/datasets"
)

// psShareFlag defines --ps-share on fs: the share of multi-GPU jobs that
// use parameter servers when the workload does not say (loadSetup reads it
// through psRule).
func psShareFlag(fs *flag.FlagSet) {
	fs.Float64("ps-share", datasets.FormatDefaultShare,
		"share of the multi-GPU jobs on parameter servers (as many as their workers), in [0, 1], for jobs whose rows do not say their architecture (on builtin: drawn anew);\n-1 = the format's default: alibaba 0.5 (PAI), philly, helios, pollux and job tables 0; builtin as embedded (0.5)")
}

// psRule is the PS rule of --ps-share (the format's default when fs has
// no such flag).
func psRule(fs *flag.FlagSet) *datasets.PSRule {
	r := &datasets.PSRule{Share: datasets.FormatDefaultShare}
	if f := fs.Lookup("ps-share"); f != nil {
		r.Share = f.Value.(flag.Getter).Get().(float64)
	}
	return r
}
