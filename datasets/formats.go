package datasets

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// scan runs fn on every data row of t, routing malformed rows and field
// errors through b. A row on which fn set r.known keeps the architecture
// fn read; the others get the builder's PSRule's.
func scan(t *table, b *builder, fn func(r *row, line int) (Job, bool)) error {
	r := &row{t: t}
	b.reserve(t.lines)
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if e := b.bad(line, "row", ReasonMalformed, err); e != nil {
				return e
			}
			continue
		}
		r.rec, r.field, r.err, r.known = rec, "", nil, false
		j, keep := fn(r, line)
		if r.err != nil {
			if e := b.bad(line, r.field, ReasonMalformed, r.err); e != nil {
				return e
			}
			continue
		}
		if !keep {
			continue
		}
		if err := b.addArch(line, j, r.known); err != nil {
			return err
		}
	}
}

// decodePollux reads a Pollux workload-N.csv: name,time,application,
// num_replicas,batch_size. Submit keeps `time`; Duration is 0.
func decodePollux(data []byte, o Options) (*Workload, error) {
	t, err := openTable(data, o.Source, false, "name", "time", "application", "num_replicas", "batch_size")
	if err != nil {
		return nil, err
	}
	b := newBuilder(FormatPollux, o)
	b.columns = map[string]string{"submit": "time", "gpus": "num_replicas", "model": "application"}
	err = scan(t, b, func(r *row, line int) (Job, bool) {
		j := Job{
			Name:      r.str("name"),
			Submit:    r.float("time"),
			Model:     r.str("application"),
			GPUs:      r.gpus("num_replicas"),
			BatchSize: int(r.int("batch_size")),
		}
		if j.Model == "" {
			r.fail("application", fmt.Errorf("%w: empty", ErrUnknownModel))
		}
		return j, true
	})
	if err != nil {
		return nil, err
	}
	return b.finish(false)
}

// decodePhilly reads Pollux's philly.csv: timestamp,duration,num_gpus,
// gpu_time,cluster. Rows are named "philly-<data row>" (1-based) and
// rebased to the earliest timestamp.
func decodePhilly(data []byte, o Options) (*Workload, error) {
	t, err := openTable(data, o.Source, false, "timestamp", "duration", "num_gpus")
	if err != nil {
		return nil, err
	}
	b := newBuilder(FormatPhilly, o)
	b.absolute = true
	b.columns = map[string]string{"submit": "timestamp", "gpus": "num_gpus"}
	idx := 0
	err = scan(t, b, func(r *row, line int) (Job, bool) {
		idx++
		ts, terr := parseNaiveTime(r.str("timestamp"))
		if terr != nil {
			r.fail("timestamp", terr)
		}
		return Job{
			Name:     "philly-" + strconv.Itoa(idx),
			Submit:   float64(ts),
			Duration: r.float("duration"),
			GPUs:     r.gpus("num_gpus"),
			Cluster:  r.str("cluster"),
		}, true
	})
	if err != nil {
		return nil, err
	}
	return b.finish(true)
}

// parseNaiveTime parses "YYYY-MM-DD HH:MM:SS" as a naive (zone-less) time
// and returns seconds since the Unix epoch, treating it as UTC.
func parseNaiveTime(s string) (int64, error) {
	if len(s) != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return 0, fmt.Errorf("parse %q as YYYY-MM-DD HH:MM:SS", s)
	}
	num := func(a, b int) int {
		n := 0
		for i := a; i < b; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d := num(0, 4), num(5, 7), num(8, 10)
	h, mi, se := num(11, 13), num(14, 16), num(17, 19)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59 {
		return 0, fmt.Errorf("parse %q as YYYY-MM-DD HH:MM:SS", s)
	}
	tm := time.Date(y, time.Month(mo), d, h, mi, se, 0, time.UTC)
	if tm.Day() != d {
		return 0, fmt.Errorf("parse %q: day out of range", s)
	}
	return tm.Unix(), nil
}

// decodeHelios reads the fleetsim Helios slice: '#' comments, then
// job_id,...,tenant,...,submit_time(µs),num_chips,...,duration_s,...,
// final_status. Submit is rebased to the earliest job.
func decodeHelios(data []byte, o Options) (*Workload, error) {
	t, err := openTable(data, o.Source, true, "job_id", "submit_time", "num_chips", "duration_s")
	if err != nil {
		return nil, err
	}
	b := newBuilder(FormatHelios, o)
	b.columns = map[string]string{"name": "job_id", "submit": "submit_time", "gpus": "num_chips", "duration": "duration_s"}
	err = scan(t, b, func(r *row, line int) (Job, bool) {
		return Job{
			Name:     r.str("job_id"),
			Submit:   r.float("submit_time") / 1e6,
			GPUs:     r.gpus("num_chips"),
			Duration: r.float("duration_s"),
			Cluster:  r.str("tenant"),
			Status:   r.str("final_status"),
		}, true
	})
	if err != nil {
		return nil, err
	}
	return b.finish(true)
}

// decodeAlibaba reads an Alibaba PAI v2023 openb_pod_list_*.csv. Pending
// pods (empty scheduled_time) and CPU-only pods (num_gpu 0) are always
// skipped and counted. A GPU-sharing pod (gpu_milli < 1000) counts as one
// GPU. Duration is deletion_time - scheduled_time; Submit is creation_time,
// rebased.
func decodeAlibaba(data []byte, o Options) (*Workload, error) {
	t, err := openTable(data, o.Source, false, "name", "num_gpu", "creation_time", "deletion_time", "scheduled_time")
	if err != nil {
		return nil, err
	}
	b := newBuilder(FormatAlibaba, o)
	b.columns = map[string]string{"submit": "creation_time", "gpus": "num_gpu", "duration": "deletion_time"}
	err = scan(t, b, func(r *row, line int) (Job, bool) {
		if r.str("scheduled_time") == "" {
			b.skip(ReasonPending)
			return Job{}, false
		}
		j := Job{
			Name:      r.str("name"),
			CPUMilli:  r.optInt("cpu_milli"),
			MemoryMiB: r.optInt("memory_mib"),
			GPUs:      r.gpus("num_gpu"),
			Status:    r.str("pod_phase"),
			Submit:    float64(r.int("creation_time")),
		}
		del, sched := r.int("deletion_time"), r.int("scheduled_time")
		j.Duration = float64(del - sched)
		if r.err == nil && j.GPUs == 0 {
			b.skip(ReasonCPUOnly)
			return Job{}, false
		}
		return j, true
	})
	if err != nil {
		return nil, err
	}
	return b.finish(true)
}

// jobsHeader is the header of Drover's CSV job table, version 1: the
// columns every version has, and the ones a reader requires.
var jobsHeader = []string{"name", "submit", "gpus", "duration", "model", "batch_size", "cluster", "status", "cpu_milli", "memory_mib"}

// jobsHeaderV2 is the header Encode writes: version 1's columns, then the
// architecture columns version 2 added.
var jobsHeaderV2 = append(jobsHeader[:len(jobsHeader):len(jobsHeader)], "arch", "ps_shards")

// decodeJobs reads Drover's CSV job table (docs/format/jobs.md), version
// 1 or 2. Times are kept as written. A row whose arch cell is empty, or a
// table without the arch column (version 1), has its architecture decided
// by o.PS; a row that names one keeps it and its ps_shards.
func decodeJobs(data []byte, o Options) (*Workload, error) {
	t, err := openTable(data, o.Source, false, jobsHeader...)
	if err != nil {
		return nil, err
	}
	b := newBuilder(FormatJobs, o)
	err = scan(t, b, func(r *row, line int) (Job, bool) {
		j := Job{
			Name:      r.str("name"),
			Submit:    r.float("submit"),
			GPUs:      r.gpus("gpus"),
			Duration:  r.float("duration"),
			Model:     r.str("model"),
			BatchSize: int(r.optInt("batch_size")),
			Cluster:   r.str("cluster"),
			Status:    r.str("status"),
			CPUMilli:  r.optInt("cpu_milli"),
			MemoryMiB: r.optInt("memory_mib"),
		}
		if j.Model == "" {
			r.fail("model", fmt.Errorf("%w: empty", ErrUnknownModel))
		}
		if s := strings.TrimSpace(r.str("arch")); s != "" {
			a, err := ParseArch(s)
			if err != nil {
				r.fail("arch", err)
			}
			j.Arch, r.known = a, true
			if strings.TrimSpace(r.str("ps_shards")) != "" {
				j.PSShards = r.gpus("ps_shards")
			}
		}
		return j, true
	})
	if err != nil {
		return nil, err
	}
	return b.finish(false)
}

// Encode appends w's jobs to b as Drover's CSV job table, version 2
// (header included), and returns the extended slice. Floats use the
// shortest decimal form that reads back to the same value, and every row
// names its architecture, so Decode(FormatJobs, Encode(w, nil), o)
// reproduces w.Jobs exactly.
func Encode(w *Workload, b []byte) []byte {
	for i, h := range jobsHeaderV2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, h...)
	}
	b = append(b, '\n')
	for _, j := range w.Jobs {
		b = appendField(b, j.Name)
		b = append(b, ',')
		b = strconv.AppendFloat(b, j.Submit, 'f', -1, 64)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(j.GPUs), 10)
		b = append(b, ',')
		b = strconv.AppendFloat(b, j.Duration, 'f', -1, 64)
		b = append(b, ',')
		b = appendField(b, j.Model)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(j.BatchSize), 10)
		b = append(b, ',')
		b = appendField(b, j.Cluster)
		b = append(b, ',')
		b = appendField(b, j.Status)
		b = append(b, ',')
		b = strconv.AppendInt(b, j.CPUMilli, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, j.MemoryMiB, 10)
		b = append(b, ',')
		b = appendField(b, j.Arch.String())
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(j.PSShards), 10)
		b = append(b, '\n')
	}
	return b
}

// appendField appends s, quoted as RFC 4180 requires when it holds a comma,
// quote, line break or leading/trailing space.
func appendField(b []byte, s string) []byte {
	need := s != "" && (s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t')
	for i := 0; i < len(s) && !need; i++ {
		switch s[i] {
		case ',', '"', '\n', '\r':
			need = true
		}
	}
	if !need {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
