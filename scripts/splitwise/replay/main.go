// Command replay is Drover's side of the speed comparison with SplitwiseSim
// (issue 34, "Speed"; scripts/splitwise/speed.sh runs both): one whole
// process that reads SplitwiseSim's performance table and a trace in
// SplitwiseSim's format (make_trace.py), replays it through one of the two
// Splitwise-faithful deployments of env/infer, writes every request's
// outcome as CSV and prints the summary, as SplitwiseSim's command reads,
// simulates and writes.
//
// Usage:
//
//	go build -o /tmp/replay ./scripts/splitwise/replay
//	/tmp/replay -perf ../shared/traces/llm/calibration/splitwise_perf_model.csv \
//		-trace traces/azure_conv_10min.csv -config baseline_h100 -out requests.csv
//
// The arrival times are read as pandas reads them (infer.ParseFloatPandas),
// as SplitwiseSim does, so that the replay is SplitwiseSim's bit for bit.
// It imports only the simulator and its routers, so that the process's own
// start costs what a Go program's does.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/drover-sched/drover/env/infer"
	"github.com/drover-sched/drover/policies/splitwise"
)

func main() {
	perfPath := flag.String("perf", "", "SplitwiseSim's performance table (splitwise_perf_model.csv)")
	tracePath := flag.String("trace", "", "trace in SplitwiseSim's format (arrival_timestamp, prompt_size, token_size)")
	config := flag.String("config", "baseline_h100", "deployment: baseline_h100 (2 DGX-H100, token_jsq) or splitwise_ha (1 DGX-H100 prompt + 1 DGX-A100 token machine, mixed_pool)")
	out := flag.String("out", "", "per-request CSV to write (none when empty)")
	flag.Parse()
	if err := run(*perfPath, *tracePath, *config, *out); err != nil {
		fmt.Fprintln(os.Stderr, "replay:", err)
		os.Exit(1)
	}
}

func run(perfPath, tracePath, config, out string) error {
	var cfg infer.Config
	var router infer.Router
	switch config {
	case "baseline_h100":
		cfg, router = infer.SplitwiseBaseline(nil, 2), splitwise.NewTokenJSQ()
	case "splitwise_ha":
		cfg, router = infer.SplitwiseHA(nil, 1, 1), splitwise.NewMixedPool(splitwise.MixedPoolConfig{})
	default:
		return fmt.Errorf("unknown config %q (baseline_h100, splitwise_ha)", config)
	}
	data, err := os.ReadFile(perfPath)
	if err != nil {
		return err
	}
	cfg.Perf, err = infer.ParsePerfTableFor(data, cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", perfPath, err)
	}
	data, err = os.ReadFile(tracePath)
	if err != nil {
		return err
	}
	reqs, err := readTrace(data)
	if err != nil {
		return fmt.Errorf("%s: %w", tracePath, err)
	}
	// The trace's text is not read again (readTrace keeps no part of it):
	// its buffer, whose pages are in memory already, holds the output.
	outBuf := data[:0]
	s, err := infer.New(cfg, reqs)
	if err != nil {
		return err
	}
	sum, err := s.Run(router)
	if err != nil {
		return err
	}
	if out != "" {
		if err := writeResults(out, s.Results(), outBuf); err != nil {
			return err
		}
	}
	fmt.Printf("requests %d finished %d\n", sum.Requests, sum.Finished)
	for _, m := range []struct {
		name string
		st   infer.Stat
	}{{"ttft", sum.TTFT}, {"e2e", sum.E2E}, {"queue", sum.Queue}, {"tpot", sum.TPOT}} {
		fmt.Printf("%s mean %.6g p50 %.6g p90 %.6g p99 %.6g max %.6g\n", m.name, m.st.Mean, m.st.P50, m.st.P90, m.st.P99, m.st.Max)
	}
	return nil
}

// readTrace reads SplitwiseSim's trace CSV: a header naming
// arrival_timestamp, prompt_size and token_size among plain
// comma-separated fields (make_trace.py writes no quotes), one request a
// line; a request's ID is its request_id, or its row.
func readTrace(data []byte) ([]infer.Request, error) {
	line, rest, _ := bytes.Cut(data, []byte{'\n'})
	cols := map[string]int{"arrival_timestamp": -1, "prompt_size": -1, "token_size": -1, "request_id": -1}
	nf := 0
	for f := range bytes.SplitSeq(bytes.TrimRight(line, "\r"), []byte{','}) {
		if _, ok := cols[string(f)]; ok {
			cols[string(f)] = nf
		}
		nf++
	}
	for _, c := range []string{"arrival_timestamp", "prompt_size", "token_size"} {
		if cols[c] < 0 {
			return nil, fmt.Errorf("no column %q", c)
		}
	}
	ca, cp, co, cid := cols["arrival_timestamp"], cols["prompt_size"], cols["token_size"], cols["request_id"]
	reqs := make([]infer.Request, 0, bytes.Count(rest, []byte{'\n'})+1)
	fields := make([]string, nf)
	text := unsafe.String(unsafe.SliceData(rest), len(rest)) // read in place: data is never written
	for n := 2; len(text) > 0; n++ {
		var s string
		s, text, _ = strings.Cut(text, "\n")
		s = strings.TrimRight(s, "\r")
		if len(s) == 0 {
			continue
		}
		i := 0
		for ; i < nf-1; i++ {
			j := strings.IndexByte(s, ',')
			if j < 0 {
				break
			}
			fields[i], s = s[:j], s[j+1:]
		}
		if i != nf-1 || strings.IndexByte(s, ',') >= 0 {
			return nil, fmt.Errorf("line %d: want %d fields", n, nf)
		}
		fields[i] = s
		at, ok := infer.ParseFloatPandas(fields[ca])
		p, err1 := strconv.Atoi(fields[cp])
		o, err2 := strconv.Atoi(fields[co])
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: bad arrival or token count", n)
		}
		id := len(reqs)
		if cid >= 0 {
			if id, err1 = strconv.Atoi(fields[cid]); err1 != nil {
				return nil, fmt.Errorf("line %d: bad request_id", n)
			}
		}
		reqs = append(reqs, infer.Request{ID: id, Arrival: at, Prompt: p, Output: o})
	}
	if len(reqs) == 0 {
		return nil, errors.New("no requests")
	}
	return reqs, nil
}

// writeResults writes each request's arrival, tokens, instances, TTFT and
// end-to-end latency (seconds, shortest round-trip decimals), in chunks
// of buf's capacity (its contents are overwritten).
func writeResults(path string, res []infer.Result, buf []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	const maxRow = 256 // a row's most bytes: 5 integers and 3 floats
	if cap(buf) < 16*maxRow {
		buf = make([]byte, 0, 1<<16)
	}
	b := append(buf[:0], "request_id,arrival,prompt_size,token_size,prefill,decode,ttft,e2e\n"...)
	for _, r := range res {
		if len(b) > cap(b)-maxRow {
			if _, err := f.Write(b); err != nil {
				f.Close()
				return err
			}
			b = b[:0]
		}
		b = strconv.AppendInt(b, int64(r.ID), 10)
		b = append(b, ',')
		b = strconv.AppendFloat(b, r.Arrival, 'g', -1, 64)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.Prompt), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.Output), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.Prefill), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.Decode), 10)
		b = append(b, ',')
		b = strconv.AppendFloat(b, r.TTFT(), 'g', -1, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, r.E2E(), 'g', -1, 64)
		b = append(b, '\n')
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
