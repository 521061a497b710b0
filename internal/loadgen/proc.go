package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"time"
)

// userHZ is the unit of the CPU times in /proc/PID/stat: Linux's USER_HZ,
// 100 on every architecture Go supports (the kernel's own HZ may differ;
// what /proc reports is scaled to USER_HZ).
const userHZ = 100

// ProcSample is one reading of a process's CPU time and memory, from
// /proc/PID/stat and /proc/PID/status.
type ProcSample struct {
	// CPU is the process's user plus system time, all threads, at 10 ms
	// resolution.
	CPU time.Duration
	// RSS is the resident set size (VmRSS), in bytes.
	RSS int64
	// HWM is the peak resident set size since the process started
	// (VmHWM), in bytes.
	HWM int64
}

// maxTicks bounds each of /proc/PID/stat's two CPU times, in ticks, so
// that their sum fits a time.Duration (146 years each at 100 Hz; a
// bound of 1<<40 ticks, 348 years, overflowed: FuzzParseProcStat).
const maxTicks = math.MaxInt64 / int64(time.Second/userHZ) / 2

// ParseProcStat returns the user plus system CPU time in /proc/PID/stat's
// contents (fields 14 and 15, in USER_HZ ticks). The command name, field
// 2, is in parentheses and may hold spaces and parentheses itself, so
// the fields are counted from the last ')'.
func ParseProcStat(data []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc stat: no ')' closing the command name")
	}
	f := bytes.Fields(data[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, fmt.Errorf("proc stat: %d fields after the command name, want >= 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] { // fields 14 (utime) and 15 (stime)
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil || n < 0 || n > maxTicks {
			return 0, fmt.Errorf("proc stat: CPU time %q: not a tick count", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / userHZ), nil
}

// ParseProcStatus returns VmRSS and VmHWM from /proc/PID/status's
// contents, in bytes; a field that is missing (a kernel thread, a zombie)
// is 0.
func ParseProcStatus(data []byte) (rss, hwm int64, err error) {
	for line := range bytes.Lines(data) {
		var dst *int64
		switch {
		case bytes.HasPrefix(line, []byte("VmRSS:")):
			dst = &rss
		case bytes.HasPrefix(line, []byte("VmHWM:")):
			dst = &hwm
		default:
			continue
		}
		name, rest, _ := bytes.Cut(line, []byte(":"))
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, 0, fmt.Errorf("proc status: %s: %q: want \"N kB\"", name, bytes.TrimSpace(rest))
		}
		n, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || n < 0 || n > 1<<53 {
			return 0, 0, fmt.Errorf("proc status: %s: %q: not a size", name, f[0])
		}
		*dst = n << 10
	}
	return rss, hwm, nil
}

// ReadProc reads process pid's CPU time and memory (Linux only).
func ReadProc(pid int) (ProcSample, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return ProcSample{}, err
	}
	cpu, err := ParseProcStat(stat)
	if err != nil {
		return ProcSample{}, fmt.Errorf("%s/stat: %w", dir, err)
	}
	st, err := os.ReadFile(dir + "/status")
	if err != nil {
		return ProcSample{}, err
	}
	rss, hwm, err := ParseProcStatus(st)
	if err != nil {
		return ProcSample{}, fmt.Errorf("%s/status: %w", dir, err)
	}
	return ProcSample{CPU: cpu, RSS: rss, HWM: hwm}, nil
}

// ProcWatch follows a process (a server under load) through a run: its
// CPU time at the start and the end, and its peak RSS sampled in between.
type ProcWatch struct {
	pid    int
	first  ProcSample
	cancel context.CancelFunc
	done   sync.WaitGroup
	peak   int64
	err    error
}

// WatchProc reads pid now and then samples its RSS every interval until
// Stop.
func WatchProc(pid int, interval time.Duration) (*ProcWatch, error) {
	s, err := ReadProc(pid)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &ProcWatch{pid: pid, first: s, cancel: cancel, peak: s.RSS}
	w.done.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if s, err := ReadProc(pid); err == nil {
					w.peak = max(w.peak, s.RSS)
				} else if w.err == nil {
					w.err = err
				}
			}
		}
	})
	return w, nil
}

// ProcUsage is what a ProcWatch saw.
type ProcUsage struct {
	// CPU is the process's CPU time between WatchProc and Stop.
	CPU time.Duration
	// PeakRSS is the largest RSS sampled, in bytes.
	PeakRSS int64
	// HWM is the process's peak RSS since it started (VmHWM) at Stop.
	HWM int64
}

// Stop ends the sampling and reads the process once more.
func (w *ProcWatch) Stop() (ProcUsage, error) {
	w.cancel()
	w.done.Wait()
	s, err := ReadProc(w.pid)
	if err != nil {
		return ProcUsage{}, err
	}
	return ProcUsage{CPU: s.CPU - w.first.CPU, PeakRSS: max(w.peak, s.RSS), HWM: s.HWM}, w.err
}
