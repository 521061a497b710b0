package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/internal/loadgen"
	"github.com/drover-sched/drover/internal/plot"
)

// tailSeries is one run's latency tail, named for the legend.
type tailSeries struct {
	name string
	tail []loadgen.TailPoint
}

// runBenchPlot is `drover bench plot -o FILE.png REPORT.json...`: the
// latency tails of several drover bench place -json reports in one
// figure, each line named after its file (scripts/bench_place.sh names
// them server-log-call-rate.json).
func runBenchPlot(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drover bench plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the PNG file to write (required)")
	title := fs.String("title", "latency tail", "the figure's title")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: drover bench plot -o FILE.png REPORT.json...   (reports of drover bench place -json)")
		return errUsage
	}
	var series []tailSeries
	for _, path := range fs.Args() {
		data, err := inputfile.ReadText(path, inputfile.Document)
		if err != nil {
			return err
		}
		var rep benchReport
		if err := json.Unmarshal(data, &rep); err != nil {
			return fmt.Errorf("%s: not a drover bench place -json report: %w", path, err)
		}
		if len(rep.Tail) == 0 {
			return fmt.Errorf("%s: the report has no latency tail (written by a drover bench place before tails, or a run without a successful call)", path)
		}
		for i, p := range rep.Tail {
			if !(p.Ms >= 0) || math.IsInf(p.Ms, 0) || !(p.Above >= 0 && p.Above <= 1) {
				return fmt.Errorf("%s: tail[%d]: ms %v, above %v: want ms >= 0 and above in [0, 1]", path, i, p.Ms, p.Above)
			}
		}
		series = append(series, tailSeries{strings.TrimSuffix(filepath.Base(path), ".json"), rep.Tail})
	}
	if err := writeTailPNG(*out, *title, series); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d runs)\n", *out, len(series))
	return nil
}

// writeTailPNG draws the tails of series on log-log axes: the fraction of
// requests slower than x against x in milliseconds, with a vertical line
// at 1 ms (issue 18's p99 target: a run meets it when its line is below
// 0.01 there).
func writeTailPNG(path, title string, series []tailSeries) error {
	if len(series) == 0 {
		return errors.New("no runs to plot")
	}
	lines := make([]plot.Series, 0, len(series)+1)
	lo := 0.01 // the line spans p99's level at least
	for _, s := range series {
		var x, y []float64
		for _, p := range s.tail {
			if p.Above > 0 && p.Ms > 0 {
				x, y = append(x, p.Ms), append(y, p.Above)
				lo = min(lo, p.Above)
			}
		}
		lines = append(lines, plot.Series{Name: s.name, X: x, Y: y})
	}
	lines = append(lines, plot.Series{Name: "1 ms", X: []float64{1, 1}, Y: []float64{lo, 1}})
	o := plot.Options{Title: title, XLabel: "latency from the intended send time (ms)", YLabel: "fraction of requests slower", LogX: true, LogY: true, LegendBottomLeft: true}
	return plot.WriteFile(path, func(w io.Writer) error { return plot.Lines(w, o, lines) })
}

// shortMethod is the last element of a gRPC method name
// ("/drover.v1.Scheduler/Place": "Place").
func shortMethod(m string) string { return m[strings.LastIndex(m, "/")+1:] }
