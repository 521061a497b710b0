package datasets

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"
)

// Stats summarises a workload; `drover trace inspect` prints it.
type Stats struct {
	Name        string
	Format      Format
	Jobs        int
	Skipped     int
	SkipReasons map[string]int
	FirstSubmit float64 // seconds
	LastSubmit  float64 // seconds
	Span        float64 // LastSubmit - FirstSubmit, seconds
	GPUHist     []GPUCount
	// Duration percentiles in seconds over jobs with Duration > 0;
	// HasDurations is false (and they are 0) when no job has one.
	HasDurations               bool
	P50, P90, P99, MaxDuration float64
	GPUHours                   float64 // sum of Duration*GPUs / 3600
	Models                     []ModelCount
	// MultiGPUJobs counts the jobs with two or more GPUs, PSJobs those on
	// parameter servers (Arch ArchPS).
	MultiGPUJobs, PSJobs int
}

// GPUCount is one bar of the GPU-count histogram.
type GPUCount struct {
	GPUs int // requested GPUs
	Jobs int // jobs requesting exactly GPUs
}

// ModelCount is the number of jobs of one model.
type ModelCount struct {
	Model string
	Jobs  int
}

// Inspect computes the Stats of w. Histograms are sorted by GPU count and
// by model name.
func Inspect(w *Workload) Stats {
	s := Stats{Name: w.Name, Format: w.Format, Jobs: len(w.Jobs), Skipped: w.Skipped, SkipReasons: w.SkipReasons}
	if len(w.Jobs) == 0 {
		return s
	}
	s.FirstSubmit, s.LastSubmit = math.Inf(1), math.Inf(-1)
	gpus := map[int]int{}
	models := map[string]int{}
	var durs []float64
	for _, j := range w.Jobs {
		s.FirstSubmit = math.Min(s.FirstSubmit, j.Submit)
		s.LastSubmit = math.Max(s.LastSubmit, j.Submit)
		gpus[j.GPUs]++
		models[j.Model]++
		if j.Duration > 0 {
			durs = append(durs, j.Duration)
		}
		s.GPUHours += j.GPUTime() / 3600
		if j.GPUs >= 2 {
			s.MultiGPUJobs++
		}
		if j.Arch == ArchPS {
			s.PSJobs++
		}
	}
	s.Span = s.LastSubmit - s.FirstSubmit
	for g, n := range gpus {
		s.GPUHist = append(s.GPUHist, GPUCount{g, n})
	}
	slices.SortFunc(s.GPUHist, func(a, b GPUCount) int { return a.GPUs - b.GPUs })
	for m, n := range models {
		s.Models = append(s.Models, ModelCount{m, n})
	}
	slices.SortFunc(s.Models, func(a, b ModelCount) int {
		switch {
		case a.Model < b.Model:
			return -1
		case a.Model > b.Model:
			return 1
		}
		return 0
	})
	if len(durs) > 0 {
		slices.Sort(durs)
		s.HasDurations = true
		s.P50, s.P90, s.P99 = quantile(durs, 0.5), quantile(durs, 0.9), quantile(durs, 0.99)
		s.MaxDuration = durs[len(durs)-1]
	}
	return s
}

// quantile returns the q-quantile of sorted x by the nearest-rank method:
// the smallest value with at least q*len(x) values at or below it.
func quantile(x []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(x)))) - 1
	return x[max(0, min(i, len(x)-1))]
}

// WriteText prints s as an aligned, human-readable table.
func (s Stats) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }
	p("workload\t%s\n", s.Name)
	p("format\t%s\n", s.Format)
	p("jobs\t%d\n", s.Jobs)
	if s.Skipped > 0 {
		p("skipped\t%d\n", s.Skipped)
		keys := make([]string, 0, len(s.SkipReasons))
		for k := range s.SkipReasons {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p("  %s\t%d\n", k, s.SkipReasons[k])
		}
	}
	p("first submit\t%s\n", fmtSeconds(s.FirstSubmit))
	p("last submit\t%s\n", fmtSeconds(s.LastSubmit))
	p("span\t%s\n", fmtSeconds(s.Span))
	p("gpu-hours\t%.1f\n", s.GPUHours)
	if s.HasDurations {
		p("duration p50\t%s\n", fmtSeconds(s.P50))
		p("duration p90\t%s\n", fmtSeconds(s.P90))
		p("duration p99\t%s\n", fmtSeconds(s.P99))
		p("duration max\t%s\n", fmtSeconds(s.MaxDuration))
	} else {
		p("durations\tnone\n")
	}
	p("gpus\tjobs\n")
	for _, g := range s.GPUHist {
		p("  %d\t%d\n", g.GPUs, g.Jobs)
	}
	if s.MultiGPUJobs > 0 {
		p("ps jobs\t%d of %d multi-GPU (%.1f%%)\n", s.PSJobs, s.MultiGPUJobs, 100*float64(s.PSJobs)/float64(s.MultiGPUJobs))
	} else {
		p("ps jobs\t%d\n", s.PSJobs)
	}
	p("model\tjobs\n")
	for _, m := range s.Models {
		p("  %s\t%d\n", m.Model, m.Jobs)
	}
	return tw.Flush()
}

// fmtSeconds prints seconds with a human-scale unit in parentheses.
func fmtSeconds(sec float64) string {
	switch a := math.Abs(sec); {
	case a >= 86400:
		return fmt.Sprintf("%.0f s (%.2f d)", sec, sec/86400)
	case a >= 3600:
		return fmt.Sprintf("%.0f s (%.2f h)", sec, sec/3600)
	case a >= 60:
		return fmt.Sprintf("%.0f s (%.1f min)", sec, sec/60)
	}
	return fmt.Sprintf("%g s", sec)
}
