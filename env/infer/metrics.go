package infer

import (
	"math"
	"slices"

	"github.com/drover-sched/drover/env"
)

// Result is what happened to one request. Times are in seconds since the
// start of the trace; a phase that did not happen is NaN.
type Result struct {
	// ID, Arrival, Prompt and Output are the request's.
	ID             int
	Arrival        float64
	Prompt, Output int
	// Prefill and Decode are the instances the router chose.
	Prefill, Decode int
	// PromptStart is when the prompt began its iteration, FirstToken when
	// that iteration ended (the first output token).
	PromptStart, FirstToken float64
	// TransferStart and TransferEnd bound the KV transfer (disaggregated
	// requests only); TransferBytes is its size.
	TransferStart, TransferEnd float64
	TransferBytes              int64
	// DecodeStart is when the decode first ran, End when the last token
	// was made.
	DecodeStart, End float64
	// Format names the request's KV format (kv.Format.Name); empty for
	// the dense cache.
	Format string
	// FormatTime is the time the request waited on KV-format work: the
	// encoding in its prompt's iteration, the decoding on arrival, and the
	// format work of every iteration it ran in (its batch's, which delays
	// all of the batch).
	FormatTime float64
	// Rejected marks a request Apply rejected because its KV cache can
	// never fit its instances (Config.RetryUnfit); it never ran.
	Rejected bool
}

// TTFT is the time to first token, FirstToken - Arrival (SplitwiseSim's
// TTFT: prompt completion minus router arrival, task.py).
func (r Result) TTFT() float64 { return r.FirstToken - r.Arrival }

// E2E is the end-to-end latency (the request's JCT), End - Arrival
// (SplitwiseSim's router_response_time).
func (r Result) E2E() float64 { return r.End - r.Arrival }

// Queue is the wait before the prompt ran, PromptStart - Arrival
// (SplitwiseSim's queue_time).
func (r Result) Queue() float64 { return r.PromptStart - r.Arrival }

// TPOT is the mean time between output tokens after the first,
// (E2E - TTFT) / (Output - 1), 0 for a one-token output. SplitwiseSim's
// tbt_times divide by Output instead.
func (r Result) TPOT() float64 {
	if r.Output <= 1 {
		return 0
	}
	return (r.E2E() - r.TTFT()) / float64(r.Output-1)
}

// Stat summarises one metric over the finished requests.
type Stat struct {
	Mean, P50, P90, P99, Max float64
}

// stat summarises xs, which it sorts in place; scratch holds at least
// 2 len(xs) values.
func stat(xs []float64, scratch []uint64) Stat {
	if len(xs) == 0 {
		nan := math.NaN()
		return Stat{nan, nan, nan, nan, nan}
	}
	s := sortInto(xs, scratch)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return Stat{Mean: sum / float64(len(s)), P50: env.Quantile(s, 0.5), P90: env.Quantile(s, 0.9),
		P99: env.Quantile(s, 0.99), Max: s[len(s)-1]}
}

// Summary is a run's outcome over its finished requests. Percentiles are
// linear (type 7, numpy's default, as SplitwiseSim's summaries use).
type Summary struct {
	// Requests is the trace's requests, Finished those that finished,
	// Rejected those Apply rejected (Result.Rejected).
	Requests, Finished, Rejected int
	// TTFT, TPOT, E2E and Queue summarise the per-request metrics (Result).
	TTFT, TPOT, E2E, Queue Stat
	// SLOAttainment is the share of requests (of all) that finished within
	// every objective Config.SLO sets (1 when it sets none and all
	// finished).
	SLOAttainment float64
	// Makespan is the time the last request finished.
	Makespan float64
	// GPUHours is the deployment's GPUs times the makespan; GPUCost prices
	// them at the GPUs' DollarsPerHour; Utilization is the share of the
	// instance-time a batch ran.
	GPUHours, GPUCost, Utilization float64
	// KVBytesMoved is the KV caches sent between instances; Transfers
	// counts them.
	KVBytesMoved int64
	Transfers    int
	// Iterations counts the model iterations the instances ran.
	Iterations int64
	// FormatShare is the mean over finished requests of FormatTime / E2E:
	// the share of the latency spent on KV-format work (0 with the dense
	// cache).
	FormatShare float64
	// Extrapolated names the GPU types whose latencies were extrapolated
	// from another type's measurements (see GPUs); empty when every
	// instance ran on measured rows.
	Extrapolated []string
	// Derived reports that the latencies came from the built-in roofline
	// (RooflinePerfTable) rather than measurements: every output of such
	// a run is "derived (built-in roofline)", not SplitwiseSim's.
	Derived bool
}

// Results returns the per-request outcomes, in the trace's order. The
// slice is the Sim's: do not modify it.
func (s *Sim) Results() []Result { return s.res }

// Summary summarises the run so far.
func (s *Sim) Summary() Summary {
	// One allocation for the four metrics' values and one for their
	// sorting (stat).
	n := len(s.res)
	buf := make([]float64, 4*n)
	ttft, tpot, e2e, queue := buf[:0:n], buf[n:n:2*n], buf[2*n:2*n:3*n], buf[3*n:3*n:4*n]
	sum := Summary{Requests: len(s.reqs)}
	met := 0
	slo := s.cfg.SLO
	for _, r := range s.res {
		if math.IsNaN(r.End) {
			continue
		}
		sum.Finished++
		ttft = append(ttft, r.TTFT())
		tpot = append(tpot, r.TPOT())
		e2e = append(e2e, r.E2E())
		queue = append(queue, r.Queue())
		if r.FormatTime > 0 && r.E2E() > 0 {
			sum.FormatShare += r.FormatTime / r.E2E()
		}
		sum.Makespan = max(sum.Makespan, r.End)
		if r.Prefill != r.Decode {
			sum.Transfers++
		}
		if (slo.TTFT == 0 || r.TTFT() <= slo.TTFT) && (slo.TPOT == 0 || r.TPOT() <= slo.TPOT) && (slo.E2E == 0 || r.E2E() <= slo.E2E) {
			met++
		}
	}
	scratch := make([]uint64, 2*sum.Finished)
	sum.TTFT, sum.TPOT, sum.E2E, sum.Queue = stat(ttft, scratch), stat(tpot, scratch), stat(e2e, scratch), stat(queue, scratch)
	if sum.Finished > 0 {
		sum.FormatShare /= float64(sum.Finished)
	}
	if len(s.reqs) > 0 {
		sum.SLOAttainment = float64(met) / float64(len(s.reqs))
	}
	sum.KVBytesMoved = s.kvMoved
	sum.Rejected = s.rejected
	busy, total := 0.0, 0.0
	for _, in := range s.insts {
		hours := float64(in.cfg.TP) * sum.Makespan / 3600
		sum.GPUHours += hours
		sum.GPUCost += float64(hours * in.gpu.DollarsPerHour)
		b := in.busy
		if len(in.batch) > 0 {
			b += s.now - in.runStamp
		}
		busy += b
		total += sum.Makespan
		sum.Iterations += in.iterations
		if in.extrapolated && !slices.Contains(sum.Extrapolated, in.gpu.Name) {
			sum.Extrapolated = append(sum.Extrapolated, in.gpu.Name)
		}
	}
	if total > 0 {
		sum.Utilization = busy / total
	}
	slices.Sort(sum.Extrapolated)
	sum.Derived = s.cfg.Perf.Derived()
	return sum
}

// sortedCopy returns xs sorted (sortInto on a copy).
func sortedCopy(xs []float64) []float64 {
	return sortInto(slices.Clone(xs), make([]uint64, 2*len(xs)))
}

// sortInto sorts xs in place and returns it. Latencies are never
// negative, and the bits of non-negative floats sort as the floats do, so
// they are sorted as integers, by an LSD radix sort of 8-bit digits
// (skipping the digits all values share) in scratch (at least 2 len(xs)
// values): the same order as slices.Sort, in a few linear passes. A
// negative or NaN value falls back to slices.Sort.
func sortInto(xs []float64, scratch []uint64) []float64 {
	n := len(xs)
	a, b := scratch[:n], scratch[n:2*n]
	var or, and uint64 = 0, ^uint64(0)
	for i, x := range xs {
		if !(x >= 0) {
			slices.Sort(xs)
			return xs
		}
		a[i] = math.Float64bits(x)
		or |= a[i]
		and &= a[i]
	}
	for shift := uint(0); shift < 64; shift += 8 {
		if (or^and)>>shift&0xff == 0 {
			continue // every value has this digit
		}
		var count [257]int
		for _, v := range a {
			count[v>>shift&0xff+1]++
		}
		for i := 1; i < 257; i++ {
			count[i] += count[i-1]
		}
		for _, v := range a {
			d := v >> shift & 0xff
			b[count[d]] = v
			count[d]++
		}
		a, b = b, a
	}
	for i, v := range a {
		xs[i] = math.Float64frombits(v)
	}
	return xs
}
