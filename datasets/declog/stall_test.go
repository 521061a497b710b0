//go:build linux

package declog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// serverIDs are the node ids of the 64-node cluster serverDecision places
// on (drover place's naming).
var serverIDs = func() []string {
	ids := make([]string, 64)
	for i := range ids {
		ids[i] = "node-" + strconv.Itoa(i)
	}
	return ids
}()

// serverDecision returns the record serve.LogRecord makes of the server's
// i-th Place of an 8-worker ring job on a 64-node cluster: a fresh decision
// id and worker slice per call, as the server allocates them, and the
// shared node id strings.
func serverDecision(i int, at time.Time) Record {
	workers := make([]string, 8)
	for k := range workers {
		workers[k] = serverIDs[(i*8+k)%len(serverIDs)]
	}
	var id [40]byte
	rid := append(id[:0], "mk3q9x2a1-"...)
	rid = strconv.AppendInt(rid, int64(i), 10)
	return Decision{Time: at, RequestID: string(rid), JobID: "job-" + strconv.Itoa(i), Source: "heuristic:strn",
		Workers: workers, Sync: "bsp", Latency: time.Duration(20000 + i%7000),
		JobModel: "resnet50", JobGPUs: 8, JobArch: "ring", JobBatchSize: 256, JobExpectedDuration: 3600,
		JobSubmitted: at.Add(-time.Second)}.Record()
}

// tickerEnv makes TestTickerHelper the probe's ticker.
const tickerEnv = "DECLOG_TICKER"

// tickPeriod is how often the ticker writes.
const tickPeriod = 100 * time.Microsecond

// TestTickerHelper is BenchmarkServerLoad's ticker, a child process: every
// tickPeriod (nanosleep, not the Go timer) it writes the time to stdout
// as 8 bytes (Unix nanoseconds, little endian), until the write fails.
func TestTickerHelper(t *testing.T) {
	if os.Getenv(tickerEnv) == "" {
		t.Skip("run by BenchmarkServerLoad")
	}
	runtime.GOMAXPROCS(1)
	var b [8]byte
	start := time.Now()
	for k := 1; ; k++ {
		if d := time.Until(start.Add(time.Duration(k) * tickPeriod)); d > 0 {
			ts := syscall.NsecToTimespec(int64(d))
			syscall.Nanosleep(&ts, nil)
		}
		binary.LittleEndian.PutUint64(b[:], uint64(time.Now().UnixNano()))
		if _, err := os.Stdout.Write(b[:]); err != nil {
			os.Exit(0)
		}
	}
}

// BenchmarkServerLoad runs what issue 18's benchmarked server runs, one P
// (GOMAXPROCS=1) and a 48 MiB soft memory limit (drover serve's default),
// without the decision log (log=off) and with it (rowgroup=N: the default
// row group size and the former 4,096): one goroutine appends a decision
// per op at 10,000/s on a fixed schedule (-benchtime 100000x: 10 s, one
// file sealed), and a probe goroutine reads a pipe that a child process
// writes the time to every 100 us. The probe wakes the way a Place call
// does, through the network poller, which the scheduler consults only
// when no goroutine is runnable (or every 10 ms, from sysmon); its
// lateness, read time minus write time for every tick, is the stall the
// log inflicts on requests: probe-p99-us, probe-p99.9-us and probe-max-us,
// to be compared with log=off's. It also reports the peak, sampled every
// 10 ms, of the Go heap in use (heap-MB: objects and the unused part of
// their spans), of the memory the runtime holds from the OS (sys-MB), and
// of the process's resident set (rss-MB), and the records dropped per op.
// Run each case in its own process, pinned to an otherwise idle core, for
// comparable RSS, and interleave the cases (the probe's tail moves with
// the machine's other load):
//
//	go test -c -o declog.test ./datasets/declog
//	for c in log=off rowgroup=1024 rowgroup=4096; do taskset -c 0 ./declog.test -test.run '^$' -test.bench "ServerLoad/$c\$" -test.benchtime 50000x; done
func BenchmarkServerLoad(b *testing.B) {
	for _, rowGroup := range []int{0, DefaultRowGroupRecords, 4096} {
		name := fmt.Sprintf("rowgroup=%d", rowGroup)
		if rowGroup == 0 {
			name = "log=off"
		}
		b.Run(name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(48 << 20))
			exe, err := os.Executable()
			if err != nil {
				b.Fatal(err)
			}
			ticker := exec.Command(exe, "-test.run=^TestTickerHelper$")
			ticker.Env = append(os.Environ(), tickerEnv+"=1")
			ticks, err := ticker.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := ticker.Start(); err != nil {
				b.Fatal(err)
			}
			defer ticker.Wait()
			defer ticker.Process.Kill()
			var w *Writer
			if rowGroup > 0 {
				if w, err = NewWriter(b.TempDir(), WithRowGroupRecords(rowGroup)); err != nil {
					b.Fatal(err)
				}
			}
			// Wait for the ticker's first tick, then probe.
			var first [8]byte
			if _, err := io.ReadFull(ticks, first[:]); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			stop := make(chan struct{})
			probed := make(chan *latencyHist)
			go func() {
				var h latencyHist
				buf := make([]byte, 8<<10)
				n := 0
				for {
					m, err := ticks.Read(buf[n:])
					now := time.Now().UnixNano()
					n += m
					k := 0
					for ; n-k >= 8; k += 8 {
						h.add(time.Duration(now - int64(binary.LittleEndian.Uint64(buf[k:]))))
					}
					n = copy(buf, buf[k:n])
					select {
					case <-stop:
						probed <- &h
						return
					default:
					}
					if err != nil {
						probed <- &h
						return
					}
				}
			}()
			sampled := make(chan memPeak)
			go func() {
				var p memPeak
				t := time.NewTicker(10 * time.Millisecond)
				defer t.Stop()
				for {
					p.sample()
					select {
					case <-stop:
						p.sample()
						sampled <- p
						return
					case <-t.C:
					}
				}
			}()
			const period = 100 * time.Microsecond
			start := time.Now()
			i := 0
			for b.Loop() {
				at := start.Add(time.Duration(i) * period)
				if d := time.Until(at); d > 0 {
					time.Sleep(d)
				}
				if w != nil {
					if err := w.Append(serverDecision(i, at)); err != nil {
						b.Fatal(err)
					}
				} else {
					sinkRecord = serverDecision(i, at)
				}
				i++
			}
			close(stop)
			h, p := <-probed, <-sampled
			if w != nil {
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(w.Dropped())/float64(i), "dropped/op")
			}
			us := func(d time.Duration) float64 { return float64(d) / 1e3 }
			b.ReportMetric(us(h.quantile(0.99)), "probe-p99-us")
			b.ReportMetric(us(h.quantile(0.999)), "probe-p99.9-us")
			b.ReportMetric(us(h.max), "probe-max-us")
			b.ReportMetric(float64(p.heap)/1e6, "heap-MB")
			b.ReportMetric(float64(p.sys)/1e6, "sys-MB")
			b.ReportMetric(float64(p.rss)/1e6, "rss-MB")
		})
	}
}

// sinkRecord keeps the log=off benchmark's records from being optimized
// away.
var sinkRecord Record

// memPeak is the peak of a process's memory over samples.
type memPeak struct {
	heap, sys, rss uint64
}

var memSamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
}

// sample reads the Go heap in use, the memory the runtime holds from the
// OS (less what it released) and VmRSS from /proc/self/status.
func (p *memPeak) sample() {
	metrics.Read(memSamples)
	v := func(i int) uint64 { return memSamples[i].Value.Uint64() }
	p.heap = max(p.heap, v(0)+v(1))
	p.sys = max(p.sys, v(2)-v(3))
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		s := bufio.NewScanner(bytes.NewReader(data))
		for s.Scan() {
			var kb uint64
			if n, _ := fmt.Sscanf(s.Text(), "VmRSS: %d kB", &kb); n == 1 {
				p.rss = max(p.rss, kb<<10)
			}
		}
	}
}
