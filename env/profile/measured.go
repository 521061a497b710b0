package profile

import (
	"cmp"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/drover-sched/drover/internal/inputfile"
)

// Measured is a Profile backed by the measured Pollux traces of one model.
// It reproduces the semantics of Pollux's simulator/applications.py
// (petuum/adaptdl, branch osdi21-artifact): 1-D linear interpolation in the
// per-GPU batch size for measured placements, and 3-D piecewise-linear
// (Delaunay) interpolation over (nodes, replicas, local_bsz) otherwise.
//
// A Measured is safe for concurrent use: Throughput memoizes its results
// behind a mutex.
type Measured struct {
	name          string
	initBatchSize int
	maxBatchSize  int
	minLocalBsz   int
	maxLocalBsz   int
	maxEpochs     int

	// placements are the rows of placements.csv sorted by (placement,
	// local_bsz), stably; fileOrder[i] is the index in placements of the
	// file's row i.
	placements  []PlacementRow
	fileOrder   []int32
	scalability []ScalabilityRow
	// byPlacement maps a placement id to its rows sorted by local_bsz.
	byPlacement map[string][]PlacementRow
	// valBsz are the validated batch sizes, ascending; val[i] is the curve
	// measured at valBsz[i].
	valBsz []int
	val    [][]ValidationRow
	// progress[e] is Progress(e) for every epoch the curves all reach.
	progress []float64

	ndOnce sync.Once
	nd     *linearND

	mu    sync.Mutex
	cache map[string]cached
}

// cached is a memoized TryThroughput result: the step and sync times, or
// the reason the query has no value.
type cached struct {
	v      [2]float64
	reason string
}

var _ Profile = (*Measured)(nil)

// Load reads the profile of one model from dir (placements.csv,
// scalability.csv and validation-<bsz>.csv files); the model name is the
// base name of dir. Pollux's per-model overrides (max epochs, yolov3's max
// local batch size) are applied by name.
func Load(dir string) (*Measured, error) { return new(loader).load(dir) }

// loader reads profile files through one buffer, reused from file to file
// and model to model: a start-up on this kind of machine pays for every
// fresh page it touches, and the decoded rows keep nothing of the files
// (placement strings are copied once each, in intern).
type loader struct {
	buf    []byte
	intern map[string]string
}

// read returns the contents of path, valid until the next read.
func (l *loader) read(path string) (string, error) {
	f, err := inputfile.Open(path, inputfile.Trace)
	if err != nil {
		return "", err
	}
	defer f.Close()
	size := 0
	if f.Size() < math.MaxInt32 {
		size = int(f.Size())
	}
	b := l.buf[:0]
	if cap(b) < size+1 {
		// Room for the largest measured file (ncf's placements.csv,
		// 83 KB) at once: pages never written cost nothing.
		b = make([]byte, 0, max(size+512, 2*cap(b), 128<<10))
	}
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		if len(b) == cap(b) { // the file grew since Stat
			b = slices.Grow(b, 4096)
		}
	}
	l.buf = b
	if len(b) == 0 {
		return "", nil
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// load is Load through l.
func (l *loader) load(dir string) (*Measured, error) {
	name := filepath.Base(filepath.Clean(dir))
	if l.intern == nil {
		l.intern = make(map[string]string)
	}
	read := func(file string) (string, error) {
		b, err := l.read(filepath.Join(dir, file))
		if err != nil {
			return "", fmt.Errorf("load profile %s: %w", name, err)
		}
		return b, nil
	}
	named := func(file string, err error) error {
		if pe, ok := err.(*ParseError); ok {
			pe.File = filepath.Join(dir, file)
		}
		return fmt.Errorf("load profile %s: %w", name, err)
	}
	b, err := read("placements.csv")
	if err != nil {
		return nil, err
	}
	pl, err := parsePlacements(b, l.intern)
	if err != nil {
		return nil, named("placements.csv", err)
	}
	if b, err = read("scalability.csv"); err != nil {
		return nil, err
	}
	sc, err := parseScalability(b)
	if err != nil {
		return nil, named("scalability.csv", err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "validation-*.csv"))
	if err != nil {
		return nil, fmt.Errorf("load profile %s: %w", name, err)
	}
	val := make(map[int][]ValidationRow, len(files))
	for _, f := range files {
		base := filepath.Base(f)
		bsz, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(base, "validation-"), ".csv"))
		if err != nil || bsz <= 0 {
			return nil, fmt.Errorf("load profile %s: bad validation file name %s", name, base)
		}
		if b, err = read(base); err != nil {
			return nil, err
		}
		rows, err := parseValidation(b)
		if err != nil {
			return nil, named(base, err)
		}
		val[bsz] = rows
	}
	return newMeasured(name, pl, sc, val)
}

// LoadAll loads every model directory under root (e.g. .../pollux_apps),
// keyed by model name.
func LoadAll(root string) (map[string]*Measured, error) { return LoadModels(root, nil) }

// LoadModels is LoadAll for the named models only (all of them when names
// is nil): a workload that runs two models reads two directories. A name
// without a directory under root is not an error; the result lacks it, as
// LoadAll's would.
func LoadModels(root string, names []string) (map[string]*Measured, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("load profiles: %w", err)
	}
	out := make(map[string]*Measured)
	var l loader
	for _, e := range entries {
		if !e.IsDir() || names != nil && !slices.Contains(names, e.Name()) {
			continue
		}
		m, err := l.load(filepath.Join(root, e.Name()))
		if err != nil {
			return nil, err
		}
		out[m.Name()] = m
	}
	return out, nil
}

// byPlacementBsz sorts placement rows by (placement, local_bsz), moving a
// permutation with them.
type byPlacementBsz struct {
	rows []PlacementRow
	perm []int32
}

func (s byPlacementBsz) Len() int { return len(s.rows) }
func (s byPlacementBsz) Less(i, j int) bool {
	a, b := &s.rows[i], &s.rows[j]
	if a.Placement != b.Placement {
		return a.Placement < b.Placement
	}
	return a.LocalBsz < b.LocalBsz
}
func (s byPlacementBsz) Swap(i, j int) {
	s.rows[i], s.rows[j] = s.rows[j], s.rows[i]
	s.perm[i], s.perm[j] = s.perm[j], s.perm[i]
}

// filePlacements yields the rows of placements.csv in file order.
func (m *Measured) filePlacements() iter.Seq[PlacementRow] {
	return func(yield func(PlacementRow) bool) {
		for _, i := range m.fileOrder {
			if !yield(m.placements[i]) {
				return
			}
		}
	}
}

// newMeasured validates decoded traces and builds a Measured, applying the
// Pollux overrides for name.
func newMeasured(name string, pl []PlacementRow, sc []ScalabilityRow, val map[int][]ValidationRow) (*Measured, error) {
	if len(pl) == 0 {
		return nil, fmt.Errorf("load profile %s: placements.csv has no rows", name)
	}
	if len(val) == 0 {
		return nil, fmt.Errorf("load profile %s: no validation-<bsz>.csv files", name)
	}
	m := &Measured{name: name, placements: pl, scalability: sc, cache: make(map[string]cached)}
	for bsz := range val {
		m.valBsz = append(m.valBsz, bsz)
	}
	slices.Sort(m.valBsz)
	m.maxEpochs = math.MaxInt
	for _, bsz := range m.valBsz {
		rows := val[bsz]
		if len(rows) == 0 {
			return nil, fmt.Errorf("load profile %s: validation-%d.csv has no rows", name, bsz)
		}
		m.val = append(m.val, rows)
		m.maxEpochs = min(m.maxEpochs, len(rows))
	}
	m.initBatchSize = m.valBsz[0]
	m.maxBatchSize = m.valBsz[len(m.valBsz)-1]
	m.minLocalBsz, m.maxLocalBsz = pl[0].LocalBsz, pl[0].LocalBsz
	for _, r := range pl {
		m.minLocalBsz = min(m.minLocalBsz, r.LocalBsz)
		m.maxLocalBsz = max(m.maxLocalBsz, r.LocalBsz)
	}
	// Each placement's rows, in file order, then stably by local_bsz (as
	// interp1d sorts its x values): one stable sort by (placement,
	// local_bsz) leaves them so, each a run of the sorted rows. The rows
	// are sorted in place, with their file order kept as a permutation
	// (a tenth of a copy's size).
	m.fileOrder = make([]int32, len(pl))
	for i := range m.fileOrder {
		m.fileOrder[i] = int32(i)
	}
	sort.Stable(byPlacementBsz{pl, m.fileOrder})
	m.byPlacement = make(map[string][]PlacementRow)
	for i := 0; i < len(pl); {
		j := i + 1
		for j < len(pl) && pl[j].Placement == pl[i].Placement {
			j++
		}
		m.byPlacement[pl[i].Placement] = pl[i:j:j]
		i = j
	}
	inv := make([]int32, len(pl))
	for i, f := range m.fileOrder {
		inv[f] = int32(i)
	}
	m.fileOrder = inv
	if o, ok := polluxOverrides[name]; ok {
		if o.maxEpochs > 0 {
			m.maxEpochs = o.maxEpochs
		}
		if o.maxLocalBsz > 0 {
			m.maxLocalBsz = o.maxLocalBsz
		}
	}
	if m.maxBatchSize < m.minLocalBsz {
		return nil, fmt.Errorf("load profile %s: max batch size %d below min local batch size %d", name, m.maxBatchSize, m.minLocalBsz)
	}
	minLen := math.MaxInt
	for i, rows := range m.val {
		if len(rows) < m.maxEpochs {
			return nil, fmt.Errorf("load profile %s: validation-%d.csv has %d epochs, want %d", name, m.valBsz[i], len(rows), m.maxEpochs)
		}
		minLen = min(minLen, len(rows))
	}
	m.progress = make([]float64, minLen+1)
	for e := 1; e <= minLen; e++ {
		m.progress[e] = m.curvesProgress(e)
	}
	return m, nil
}

// Name returns the model name.
func (m *Measured) Name() string { return m.name }

// InitBatchSize returns the smallest validated batch size.
func (m *Measured) InitBatchSize() int { return m.initBatchSize }

// MaxBatchSize returns the largest validated batch size.
func (m *Measured) MaxBatchSize() int { return m.maxBatchSize }

// MinLocalBsz returns the smallest local_bsz in placements.csv.
func (m *Measured) MinLocalBsz() int { return m.minLocalBsz }

// MaxLocalBsz returns the largest local_bsz in placements.csv, or Pollux's
// override (yolov3: 8).
func (m *Measured) MaxLocalBsz() int { return m.maxLocalBsz }

// MaxEpochs returns Pollux's max_epochs for the model (the shortest
// validation curve when Pollux sets none).
func (m *Measured) MaxEpochs() int { return m.maxEpochs }

// canonicalPlacement returns Pollux's placement id: the non-zero entries
// rotated to the lexicographically smallest rotation, concatenated as
// decimal numbers. It panics on an empty placement or a negative count.
func canonicalPlacement(buf []byte, placement []int) (id []byte, nodes, replicas int) {
	var nz [64]int
	p := nz[:0]
	for _, g := range placement {
		if g < 0 {
			panic("profile: negative GPU count in placement")
		}
		if g > 0 {
			p = append(p, g)
			replicas += g
		}
	}
	if len(p) == 0 {
		panic("profile: empty placement")
	}
	best := 0
	for i := 1; i < len(p); i++ {
		for k := range p {
			a, b := p[(i+k)%len(p)], p[(best+k)%len(p)]
			if a != b {
				if a < b {
					best = i
				}
				break
			}
		}
	}
	for k := range p {
		buf = strconv.AppendInt(buf, int64(p[(best+k)%len(p)]), 10)
	}
	return buf, len(p), replicas
}

// Throughput returns the step time and sync time at a per-GPU batch size,
// as Pollux's get_throughput. Results are memoized.
//
// It panics when Pollux's scipy code would fail: a measured placement at a
// local batch size outside its measured range ("profile: local batch size out
// of range"), or another placement outside the convex hull of the
// measurements ("profile: placement outside measured range"). Use
// TryThroughput to test first.
func (m *Measured) Throughput(placement []int, localBsz int) (step, sync float64) {
	step, sync, err := m.TryThroughput(placement, localBsz)
	if err != "" {
		panic(err)
	}
	return step, sync
}

// TryThroughput is Throughput that reports, instead of panicking, why a
// query has no value: reason is "" on success, else Throughput's panic
// message (step and sync are then NaN). Failures are memoized too. It still
// panics on an empty placement or a negative GPU count.
func (m *Measured) TryThroughput(placement []int, localBsz int) (step, sync float64, reason string) {
	var kb [80]byte
	id, nodes, replicas := canonicalPlacement(kb[:0], placement)
	idLen := len(id)
	key := strconv.AppendInt(append(id, ':'), int64(localBsz), 10)
	m.mu.Lock()
	c, hit := m.cache[string(key)]
	m.mu.Unlock()
	if !hit {
		c = m.throughput(id[:idLen], nodes, replicas, localBsz)
		m.mu.Lock()
		m.cache[string(key)] = c
		m.mu.Unlock()
	}
	if c.reason != "" {
		return math.NaN(), math.NaN(), c.reason
	}
	return c.v[0], c.v[1], ""
}

// throughput computes an uncached TryThroughput result for the placement
// with canonical id.
func (m *Measured) throughput(id []byte, nodes, replicas, localBsz int) cached {
	if rows, found := m.byPlacement[string(id)]; found {
		v, ok := interp1d(rows, float64(localBsz))
		if !ok {
			return cached{reason: "profile: local batch size out of range"}
		}
		return cached{v: v}
	}
	m.ndOnce.Do(m.buildND)
	v, ok := m.nd.at([3]float64{float64(min(nodes, 16)), float64(replicas), float64(localBsz)})
	if !ok {
		return cached{reason: "profile: placement outside measured range"}
	}
	return cached{v: v}
}

// interp1d is scipy.interpolate.interp1d(kind="linear") on rows sorted by
// local_bsz, evaluated exactly as scipy does (slope*(x-x_lo)+y_lo).
func interp1d(rows []PlacementRow, x float64) ([2]float64, bool) {
	n := len(rows)
	if x < float64(rows[0].LocalBsz) || x > float64(rows[n-1].LocalBsz) {
		return [2]float64{}, false
	}
	if n == 1 {
		return [2]float64{rows[0].StepTime, rows[0].SyncTime}, true
	}
	// searchsorted(side="left"), clipped to [1, n-1].
	i := sort1(rows, x)
	i = max(1, min(i, n-1))
	lo, hi := rows[i-1], rows[i]
	dx := float64(hi.LocalBsz - lo.LocalBsz)
	return [2]float64{
		(hi.StepTime-lo.StepTime)/dx*(x-float64(lo.LocalBsz)) + lo.StepTime,
		(hi.SyncTime-lo.SyncTime)/dx*(x-float64(lo.LocalBsz)) + lo.SyncTime,
	}, true
}

func sort1(rows []PlacementRow, x float64) int {
	i, _ := slices.BinarySearchFunc(rows, x, func(r PlacementRow, x float64) int { return cmp.Compare(float64(r.LocalBsz), x) })
	return i
}

// ndPoints returns Pollux's 3-D interpolation data: placements grouped by
// (num_nodes, num_replicas, local_bsz) in ascending key order with the mean
// step and sync time (pandas' Kahan-compensated group mean), followed by the
// scalability rows in file order. Values can differ from pandas' in the last
// bit: pandas' CSV float parser is not correctly rounded, strconv is.
func (m *Measured) ndPoints() (pts [][3]float64, vals [][2]float64) {
	type key [3]int
	type acc struct {
		n         int
		sum, comp [2]float64
	}
	// The groups in first-seen order, found by key; sized once (a
	// start-up pays for every fresh page it touches).
	index := make(map[key]int32)
	keys := make([]key, 0, len(m.placements))
	accs := make([]acc, 0, len(m.placements))
	for r := range m.filePlacements() {
		k := key{len(r.Placement), digitSum(r.Placement), r.LocalBsz}
		g, ok := index[k]
		if !ok {
			g = int32(len(accs))
			index[k] = g
			keys = append(keys, k)
			accs = append(accs, acc{})
		}
		a := &accs[g]
		a.n++
		for j, v := range [2]float64{r.StepTime, r.SyncTime} {
			y := v - a.comp[j]
			t := a.sum[j] + y
			a.comp[j] = t - a.sum[j] - y
			a.sum[j] = t
		}
	}
	slices.SortFunc(keys, func(a, b key) int { return slices.Compare(a[:], b[:]) })
	n := len(keys) + len(m.scalability)
	pts, vals = make([][3]float64, 0, n), make([][2]float64, 0, n)
	for _, k := range keys {
		a := accs[index[k]]
		pts = append(pts, [3]float64{float64(k[0]), float64(k[1]), float64(k[2])})
		vals = append(vals, [2]float64{a.sum[0] / float64(a.n), a.sum[1] / float64(a.n)})
	}
	for _, r := range m.scalability {
		pts = append(pts, [3]float64{float64(r.NumNodes), float64(r.NumReplicas), float64(r.LocalBsz)})
		vals = append(vals, [2]float64{r.StepTime, r.SyncTime})
	}
	return pts, vals
}

func digitSum(s string) int {
	n := 0
	for _, c := range s {
		n += int(c - '0')
	}
	return n
}

// buildND builds the 3-D interpolator on this package's own Delaunay
// triangulation of ndPoints (see the package documentation for how it
// differs from scipy's), precomputed in triangulations.bin for the shared
// Pollux traces.
func (m *Measured) buildND() {
	pts, vals := m.ndPoints()
	m.nd = newLinearND(pts, vals, triangulate(pts))
}

// bracket returns the validated batch sizes bracketing batchSize (indices
// into valBsz; equal when batchSize is validated). It panics outside the
// validated range, as Pollux's assertion does.
func (m *Measured) bracket(batchSize int) (lo, hi int) { return bracket(m.valBsz, batchSize) }

// bracket returns the indices of the validated batch sizes (ascending)
// bracketing batchSize, equal when batchSize is one of them. It panics
// outside their range, as Pollux's assertion does.
func bracket(sizes []int, batchSize int) (lo, hi int) {
	lo, hi = -1, -1
	for i, b := range sizes {
		if b <= batchSize {
			lo = i
		}
		if b >= batchSize {
			hi = i
			break
		}
	}
	if lo < 0 || hi < 0 {
		panic(fmt.Sprintf("profile: batch size %d outside validated range [%d, %d]", batchSize, sizes[0], sizes[len(sizes)-1]))
	}
	return lo, hi
}

func (m *Measured) row(i, epoch int) ValidationRow {
	if epoch < 0 || epoch >= len(m.val[i]) {
		panic(fmt.Sprintf("profile: epoch %d out of range", epoch))
	}
	return m.val[i][epoch]
}

// lerp is Pollux's ((b-lo)*upper + (hi-b)*lower) / (hi-lo).
func lerp(b, lo, hi int, lower, upper float64) float64 {
	return (float64(b-lo)*upper + float64(hi-b)*lower) / float64(hi-lo)
}

// GradStats returns the gradient squared norm and variance during epoch at a
// global batch size, linearly interpolated between the bracketing validated
// batch sizes (Pollux's get_grad_stats). It panics outside the validated
// batch sizes or epochs.
func (m *Measured) GradStats(batchSize int, epoch int) (sqr, variance float64) {
	lo, hi := m.bracket(batchSize)
	l, u := m.row(lo, epoch), m.row(hi, epoch)
	if lo == hi {
		return l.GradSqr, l.GradVar
	}
	bl, bh := m.valBsz[lo], m.valBsz[hi]
	return lerp(batchSize, bl, bh, l.GradSqr, u.GradSqr), lerp(batchSize, bl, bh, l.GradVar, u.GradVar)
}

// Iteration returns the iterations after completing epoch at a global batch
// size, interpolated like GradStats (Pollux's get_iteration).
func (m *Measured) Iteration(batchSize int, epoch int) float64 {
	lo, hi := m.bracket(batchSize)
	l, u := m.row(lo, epoch), m.row(hi, epoch)
	if lo == hi {
		return l.Iteration
	}
	return lerp(batchSize, m.valBsz[lo], m.valBsz[hi], l.Iteration, u.Iteration)
}

// Progress returns the progress at the end of the given number of epochs:
// 0 for epoch 0, else the minimum over the validation curves of
// progress[epoch-1] (Pollux's get_progress). It panics past the curves.
func (m *Measured) Progress(epoch int) float64 {
	if epoch >= 0 && epoch < len(m.progress) {
		return m.progress[epoch]
	}
	return m.curvesProgress(epoch)
}

// curvesProgress is Progress computed from the curves (newMeasured
// tabulates it).
func (m *Measured) curvesProgress(epoch int) float64 {
	if epoch == 0 {
		return 0
	}
	p := math.Inf(1)
	for i := range m.val {
		p = min(p, m.row(i, epoch-1).Progress)
	}
	return p
}

// FinalMetric returns the validation metric at the completion epoch for a
// global batch size, linearly interpolated between the bracketing
// validated batch sizes (as Iteration is) and clamped to their range. It
// implements env.Accuracy.
func (m *Measured) FinalMetric(batchSize int) float64 {
	batchSize = min(max(batchSize, m.valBsz[0]), m.valBsz[len(m.valBsz)-1])
	e := m.CompletionEpoch(batchSize)
	lo, hi := m.bracket(batchSize)
	l, u := m.row(lo, e), m.row(hi, e)
	if lo == hi {
		return l.Metric
	}
	return lerp(batchSize, m.valBsz[lo], m.valBsz[hi], l.Metric, u.Metric)
}

// CompletionEpoch returns MaxEpochs()-1. Pollux's get_completion_epoch
// returns that when target_metric is None (all shipped models); its
// target-metric loop never updates best_metric, so it returns the same
// value for any target, and it is not reproduced here.
func (m *Measured) CompletionEpoch(batchSize int) int { return m.maxEpochs - 1 }

// Epoch returns the number of epochs completed at a given progress: the
// maximum over the validation curves of the count of epochs whose progress
// is at most the given one (Pollux's get_epoch).
func (m *Measured) Epoch(progress float64) int {
	best := 0
	for _, rows := range m.val {
		n, _ := slices.BinarySearchFunc(rows, progress, func(r ValidationRow, p float64) int {
			if r.Progress <= p {
				return -1
			}
			return 1
		})
		best = max(best, n)
	}
	return best
}
