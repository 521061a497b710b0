package datasets

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
)

// Job is one row of Drover's common job table. Every importer in this
// package produces Jobs; the simulator consumes nothing else.
type Job struct {
	Name      string  // unique within the workload (trace id, or generated "<model>-<idx>")
	Submit    float64 // seconds since the workload start; absolute trace times are rebased so the earliest submit is 0; Pollux workloads keep their `time`
	GPUs      int     // requested GPUs (>= 1)
	Duration  float64 // measured run time in seconds; 0 when the trace has none (Pollux workloads)
	Model     string  // one of ModelNames; assigned deterministically (see AssignModel) when the trace has none
	BatchSize int     // initial global batch size; 0 = the model's default
	Cluster   string  // virtual cluster / tenant, or "" when unknown
	Status    string  // final status if the trace has one, else ""
	CPUMilli  int64   // requested CPU milli-cores, 0 if unknown
	MemoryMiB int64   // requested memory in MiB, 0 if unknown
	// Arch is the job's communication architecture: what the row says
	// (the job table's arch column), or else the decoder's PSRule's draw.
	Arch Arch
	// PSShards is a PS job's number of parameter servers (0 for a ring
	// job; 0 for a PS job means one, as in env.JobSpec).
	PSShards int
}

// GPUTime returns the job's GPU-seconds, Duration*GPUs.
func (j Job) GPUTime() float64 { return j.Duration * float64(j.GPUs) }

// Workload is a job list sorted by Submit (stable with respect to input
// order), together with what was left out while reading it.
type Workload struct {
	Name   string // e.g. the file's base name, or "builtin"
	Format Format // the format it was decoded from
	// Origin is, for a trace whose absolute times were rebased, the absolute
	// time of Submit 0 in Unix seconds (Philly's naive local times are read
	// as UTC, so Origin%86400 is the local time of day). It is 0 when the
	// source times were already relative.
	Origin int64
	Jobs   []Job
	// Skipped counts the data rows left out: bad rows under Options.SkipBad,
	// rows removed by the Options filters, and rows a format always drops
	// (Alibaba Pending and CPU-only pods).
	Skipped int
	// SkipReasons maps a Reason* constant to the number of rows skipped for
	// it. It is nil when nothing was skipped.
	SkipReasons map[string]int
}

// Clone returns a deep copy of w.
func (w *Workload) Clone() *Workload {
	c := *w
	c.Jobs = slices.Clone(w.Jobs)
	if w.SkipReasons != nil {
		c.SkipReasons = make(map[string]int, len(w.SkipReasons))
		for k, v := range w.SkipReasons {
			c.SkipReasons[k] = v
		}
	}
	return &c
}

// Format names an on-disk job-table layout.
type Format string

// The formats Decode understands.
const (
	FormatAuto    Format = "auto"    // sniff the header (or the Parquet magic)
	FormatPollux  Format = "pollux"  // Pollux simulator workload-N.csv
	FormatPhilly  Format = "philly"  // Pollux's philly.csv (Microsoft Philly jobs)
	FormatHelios  Format = "helios"  // fleetsim slice of SenseTime Helios Venus
	FormatAlibaba Format = "alibaba" // Alibaba PAI v2023 openb_pod_list_*.csv
	FormatJobs    Format = "jobs"    // Drover's own CSV job table (docs/format/jobs.md)
	FormatParquet Format = "parquet" // Drover's job table as Parquet (docs/format/jobs.md)
)

// Formats lists every concrete format, in a fixed order.
var Formats = []Format{FormatPollux, FormatPhilly, FormatHelios, FormatAlibaba, FormatJobs, FormatParquet}

// ModelNames are the models Drover has performance profiles for (the six
// Pollux applications). Job.Model is always one of them.
var ModelNames = []string{"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}

// IsModel reports whether name is one of ModelNames.
func IsModel(name string) bool {
	_, ok := slices.BinarySearch(ModelNames, name)
	return ok
}

// AssignModel picks a model for a job that has none, following the Pollux
// workload generator (petuum/adaptdl osdi21-artifact simulator/workload.py):
// GPU-time < 1 h gives cifar10 or ncf, < 10 h deepspeech2 or bert, < 100 h
// yolov3, otherwise imagenet. Within a pair, the 64-bit FNV-1a hash of name
// picks the first model when even and the second when odd.
func AssignModel(name string, gpuSeconds float64) string {
	var pair [2]string
	switch {
	case gpuSeconds < 1*3600:
		pair = [2]string{"cifar10", "ncf"}
	case gpuSeconds < 10*3600:
		pair = [2]string{"deepspeech2", "bert"}
	case gpuSeconds < 100*3600:
		return "yolov3"
	default:
		return "imagenet"
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return pair[h.Sum64()&1]
}

// Options control decoding.
type Options struct {
	// Source is the file name used in error messages; ReadFile defaults it
	// to the path.
	Source string
	// SkipBad skips bad rows (and counts them in Workload.SkipReasons)
	// instead of failing on the first one. Structural problems (a missing
	// column, an unreadable header, an empty result) still fail.
	SkipBad bool
	// MinDuration, when > 0, drops jobs whose measured Duration is below it
	// (seconds). Jobs without a duration (Duration == 0) are kept.
	MinDuration float64
	// MaxGPUTime, when > 0, drops jobs whose GPU-time (Duration*GPUs, in
	// GPU-seconds) is at least MaxGPUTime.
	MaxGPUTime float64
	// PS decides the architecture of the jobs whose rows do not say it
	// (every row but those of a job table with an arch column). Nil means
	// the format's default share (FormatPSShare), as many servers as
	// workers, seed 0. Rows that say their architecture keep it.
	PS *PSRule
}

// check reports a bad option: an invalid PS rule.
func (o Options) check() error {
	if o.PS != nil {
		return o.PS.Validate()
	}
	return nil
}

// Pollux's trace filter (simulator/workload.py): it keeps only jobs with
// duration >= 60 s and GPU-time < 1000 GPU-hours.
const (
	PolluxMinDuration = 60          // seconds
	PolluxMaxGPUTime  = 1000 * 3600 // GPU-seconds
)

// WithPolluxFilter returns o with MinDuration and MaxGPUTime set to Pollux's
// trace filter.
func (o Options) WithPolluxFilter() Options {
	o.MinDuration = PolluxMinDuration
	o.MaxGPUTime = PolluxMaxGPUTime
	return o
}

// Reasons a row is skipped, as used in Workload.SkipReasons.
const (
	ReasonMalformed     = "malformed row"      // wrong field count or unparsable field
	ReasonBadSubmit     = "bad submit"         // negative, NaN or infinite submit time
	ReasonBadDuration   = "bad duration"       // negative, NaN or infinite duration
	ReasonBadGPUs       = "bad gpus"           // GPUs <= 0 (except Alibaba CPU-only pods)
	ReasonUnknownModel  = "unknown model"      // model not in ModelNames
	ReasonDuplicate     = "duplicate name"     // Name already used by an earlier row
	ReasonBadResources  = "bad resources"      // negative CPU, memory or batch size
	ReasonPending       = "pending"            // Alibaba pod never scheduled (always skipped)
	ReasonCPUOnly       = "cpu-only"           // Alibaba pod with num_gpu 0 (always skipped)
	ReasonShortDuration = "duration below min" // Options.MinDuration filter
	ReasonLongGPUTime   = "gpu time above max" // Options.MaxGPUTime filter
	ReasonBadArch       = "bad arch"           // negative PS shards, or PS shards on a ring job
)

// Sentinel errors wrapped by ParseError.Err (test with errors.Is).
var (
	ErrEmpty         = errors.New("datasets: empty workload")
	ErrUnknownFormat = errors.New("datasets: unknown format")
	ErrMissingColumn = errors.New("datasets: missing column")
	ErrNegative      = errors.New("datasets: negative value")
	ErrNotFinite     = errors.New("datasets: not a finite number")
	ErrBadGPUs       = errors.New("datasets: gpus must be >= 1")
	ErrUnknownModel  = errors.New("datasets: unknown model")
	ErrDuplicateName = errors.New("datasets: duplicate job name")
	ErrDuplicateNode = errors.New("datasets: duplicate node name")
	ErrVersion       = errors.New("datasets: unsupported format version")
	ErrBadArch       = errors.New("datasets: bad architecture")
	ErrTooLarge      = errors.New("datasets: beyond the bound")
)

// MaxSeconds bounds a job's submit time (after rebasing: its distance from
// the workload's first job) and its duration, in seconds: 1e8 s, about 3.2
// years, eight times the longest job and the longest span of the shipped
// traces (Alibaba PAI v2023: a 145-day job in a 149-day trace). It is the
// simulator's bound (env.MaxTime): a row beyond it is a data error
// (ErrTooLarge), reported like any other, rather than a replay that never
// ends.
const MaxSeconds = 1e8

// MaxBatchSize bounds a job's global batch size: 2^24 samples, 512 times
// the largest in the shipped traces (32,768, the Pollux workloads') and
// over a hundred times the largest published data-parallel batches
// (BERT's 64k with LAMB). A row beyond it is a data error (ErrTooLarge)
// naming its line and column, like a time beyond MaxSeconds, not a batch
// the throughput model takes silently.
const MaxBatchSize = 1 << 24

// ParseError reports a problem with one field of one row of an input file.
// Decoders return it (possibly wrapped) for every data problem; use
// errors.As to get at it.
type ParseError struct {
	File  string // Options.Source
	Line  int    // 1-based line in the file (1-based row for Parquet); 0 if not about a row
	Field string // column name, or "header" / "row"
	Err   error
}

// Error formats the error as "FILE:LINE: field FIELD: ERR".
func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: field %s: %v", e.File, e.Line, e.Field, e.Err)
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// builder accumulates rows for one decode, applying validation, SkipBad and
// the filters in one place so every format behaves alike.
type builder struct {
	o     Options
	w     *Workload
	names map[string]struct{}
	// ps decides the rows that do not say their architecture.
	ps PSRule
	// lines holds the line (or row) each job of w.Jobs was read from, for
	// the checks finish makes after rebasing.
	lines []int
	// absolute is set by formats whose Submit values are absolute times.
	absolute bool
	// columns maps a Job field name ("submit", "gpus", ...) to the format's
	// column name, for error messages.
	columns map[string]string
}

// col returns the input column that holds the Job field named field.
func (b *builder) col(field string) string {
	if c, ok := b.columns[field]; ok {
		return c
	}
	return field
}

func newBuilder(f Format, o Options) *builder {
	ps := PSRule{Share: FormatDefaultShare}
	if o.PS != nil {
		ps = *o.PS
	}
	return &builder{o: o, w: &Workload{Name: o.Source, Format: f}, names: make(map[string]struct{}, 1024), ps: ps.resolve(f)}
}

// reserve sizes the job list, its line numbers and the name set for n
// rows, when nothing has been added yet: growing a list of 82k jobs by
// doubling copied it (and had the collector scan it) again and again.
func (b *builder) reserve(n int) {
	if len(b.w.Jobs) > 0 || n <= cap(b.w.Jobs) {
		return
	}
	n = min(n, 1<<22) // a bound on the up-front allocation; append grows past it
	b.w.Jobs = make([]Job, 0, n)
	b.lines = make([]int, 0, n)
	if len(b.names) == 0 {
		b.names = make(map[string]struct{}, n)
	}
}

// skip counts a row left out for reason.
func (b *builder) skip(reason string) {
	if b.w.SkipReasons == nil {
		b.w.SkipReasons = make(map[string]int)
	}
	b.w.SkipReasons[reason]++
	b.w.Skipped++
}

// bad handles a bad row: with SkipBad it counts it and returns nil,
// otherwise it returns the ParseError.
func (b *builder) bad(line int, field, reason string, err error) error {
	if b.o.SkipBad {
		b.skip(reason)
		return nil
	}
	return &ParseError{File: b.o.Source, Line: line, Field: b.col(field), Err: err}
}

// add validates j (read from line), decides its architecture by the
// builder's PSRule and appends it. A nil return with the job not added
// means it was skipped.
func (b *builder) add(line int, j Job) error { return b.addArch(line, j, false) }

// addArch is add for a row that may say its architecture: with known set,
// j.Arch and j.PSShards are the row's and are kept.
func (b *builder) addArch(line int, j Job, known bool) error {
	switch {
	case j.Name == "":
		return b.bad(line, "name", ReasonMalformed, errors.New("empty name"))
	case math.IsNaN(j.Submit) || math.IsInf(j.Submit, 0):
		return b.bad(line, "submit", ReasonBadSubmit, ErrNotFinite)
	case j.Submit < 0:
		return b.bad(line, "submit", ReasonBadSubmit, fmt.Errorf("%w: %v", ErrNegative, j.Submit))
	case math.IsNaN(j.Duration) || math.IsInf(j.Duration, 0):
		return b.bad(line, "duration", ReasonBadDuration, ErrNotFinite)
	case j.Duration < 0:
		return b.bad(line, "duration", ReasonBadDuration, fmt.Errorf("%w: %v", ErrNegative, j.Duration))
	case j.Duration > MaxSeconds:
		return b.bad(line, "duration", ReasonBadDuration, fmt.Errorf("%w: %v s, want at most %g s (MaxSeconds)", ErrTooLarge, j.Duration, float64(MaxSeconds)))
	case j.GPUs <= 0:
		return b.bad(line, "gpus", ReasonBadGPUs, fmt.Errorf("%w: got %d", ErrBadGPUs, j.GPUs))
	case j.BatchSize < 0:
		return b.bad(line, "batch_size", ReasonBadResources, fmt.Errorf("%w: %d", ErrNegative, j.BatchSize))
	case j.BatchSize > MaxBatchSize:
		return b.bad(line, "batch_size", ReasonBadResources, fmt.Errorf("%w: %d, want at most %d (MaxBatchSize)", ErrTooLarge, j.BatchSize, MaxBatchSize))
	case j.CPUMilli < 0:
		return b.bad(line, "cpu_milli", ReasonBadResources, fmt.Errorf("%w: %d", ErrNegative, j.CPUMilli))
	case j.MemoryMiB < 0:
		return b.bad(line, "memory_mib", ReasonBadResources, fmt.Errorf("%w: %d", ErrNegative, j.MemoryMiB))
	case known && j.PSShards < 0:
		return b.bad(line, "ps_shards", ReasonBadArch, fmt.Errorf("%w: %d PS shards", ErrBadArch, j.PSShards))
	case known && j.Arch == ArchRing && j.PSShards != 0:
		return b.bad(line, "ps_shards", ReasonBadArch, fmt.Errorf("%w: a ring job with %d PS shards", ErrBadArch, j.PSShards))
	}
	if !known {
		j.Arch, j.PSShards = b.ps.Decide(j.Name, j.GPUs)
	}
	if j.Model == "" {
		j.Model = AssignModel(j.Name, j.GPUTime())
	} else if !IsModel(j.Model) {
		return b.bad(line, "model", ReasonUnknownModel, fmt.Errorf("%w: %q", ErrUnknownModel, j.Model))
	}
	if _, dup := b.names[j.Name]; dup {
		return b.bad(line, "name", ReasonDuplicate, fmt.Errorf("%w: %q", ErrDuplicateName, j.Name))
	}
	if b.o.MinDuration > 0 && j.Duration > 0 && j.Duration < b.o.MinDuration {
		b.skip(ReasonShortDuration)
		return nil
	}
	if b.o.MaxGPUTime > 0 && j.GPUTime() >= b.o.MaxGPUTime {
		b.skip(ReasonLongGPUTime)
		return nil
	}
	b.names[j.Name] = struct{}{}
	b.w.Jobs = append(b.w.Jobs, j)
	b.lines = append(b.lines, line)
	return nil
}

// finish rebases (when asked; Origin records the shift), checks the
// submit times against MaxSeconds, sorts and checks for emptiness.
func (b *builder) finish(rebase bool) (*Workload, error) {
	w := b.w
	if len(w.Jobs) == 0 {
		return nil, &ParseError{File: b.o.Source, Field: "row", Err: ErrEmpty}
	}
	if rebase {
		b.rebase()
	}
	kept := w.Jobs[:0]
	for i, j := range w.Jobs {
		if j.Submit > MaxSeconds {
			what := "submit"
			if rebase {
				what = "submit after the first job's"
			}
			if err := b.bad(b.lines[i], "submit", ReasonBadSubmit, fmt.Errorf("%w: %s %v s, want at most %g s (MaxSeconds)", ErrTooLarge, what, j.Submit, float64(MaxSeconds))); err != nil {
				return nil, err
			}
			delete(b.names, j.Name)
			continue
		}
		kept = append(kept, j)
	}
	w.Jobs = kept
	if len(w.Jobs) == 0 {
		return nil, &ParseError{File: b.o.Source, Field: "row", Err: ErrEmpty}
	}
	sortJobs(w.Jobs)
	return w, nil
}

// rebase shifts the submit times so that the earliest is 0, recording
// the shift in Origin for a trace of absolute times.
func (b *builder) rebase() {
	w := b.w
	min := w.Jobs[0].Submit
	for _, j := range w.Jobs[1:] {
		min = math.Min(min, j.Submit)
	}
	for i := range w.Jobs {
		w.Jobs[i].Submit -= min
	}
	if b.absolute {
		w.Origin = int64(min)
	}
}

// sortJobs sorts by Submit, keeping input order among equal times. It
// sorts (submit, index) pairs and then moves each job once: a stable
// sort of the jobs themselves moved their 150-byte records O(n log² n)
// times. No allocation beyond the pairs.
func sortJobs(jobs []Job) {
	// Submit times are finite here (addArch refuses the others), where
	// cmp.Compare is the plain < and > order.
	if slices.IsSortedFunc(jobs, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) }) {
		return
	}
	type key struct {
		submit float64
		i      int
	}
	keys := make([]key, len(jobs))
	for i := range jobs {
		keys[i] = key{jobs[i].Submit, i}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(a.submit, b.submit); c != 0 {
			return c
		}
		return a.i - b.i // input order among equal times: the sort is stable
	})
	// Position i takes the job at keys[i].i: follow each cycle of that
	// permutation, moving every job once, in place.
	for i := range keys {
		if keys[i].i == i {
			continue
		}
		held, j := jobs[i], i
		for {
			k := keys[j].i
			keys[j].i = j // done
			if k == i {
				jobs[j] = held
				break
			}
			jobs[j] = jobs[k]
			j = k
		}
	}
}
