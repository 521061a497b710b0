package profile

import (
	"math"
	"sync"
)

// linearND is a piecewise-linear interpolator over a tetrahedralization of
// scattered 3-D points, with the semantics of scipy's LinearNDInterpolator:
// the first simplex (in simplex order) whose barycentric coordinates are all
// within [-eps, 1+eps] is used, and a query outside every simplex has no
// value.
type linearND struct {
	pts      [][3]float64
	vals     [][2]float64
	simp     [][4]int32
	lo, hi   [][3]float64 // per-simplex bounding boxes, for a cheap pre-test
	min, max [3]float64

	// mu guards the barycentric transforms, computed at a simplex's first
	// bounding-box hit: a run queries few simplices of thousands.
	mu sync.Mutex
	// tr holds each simplex's barycentric transform: the inverse of the 3x3
	// matrix of edge vectors (row-major, 9 numbers) followed by the
	// coordinates of its last vertex.
	tr [][12]float64
	// trState is trUnknown until tr[i] is computed, then trOK, or
	// trFlat for simplices too flat to invert (scipy's rcond < 1000*eps
	// test), which are skipped.
	trState []uint8
}

const (
	trUnknown = iota
	trOK
	trFlat
)

// scipy's _do_evaluate uses eps = 100*DBL_EPSILON.
const (
	dblEps  = 2.220446049250313e-16
	baryEps = 100 * dblEps
)

// newLinearND builds the interpolator over the simplices simp of pts, with
// vals[i] the value at pts[i]. The simplices' barycentric transforms are
// computed when a query first needs them.
func newLinearND(pts [][3]float64, vals [][2]float64, simp [][4]int32) *linearND {
	// The builtin min and max are math.Min and math.Max (NaN and signed
	// zeros alike), inlined.
	li := &linearND{pts: pts, vals: vals, simp: simp}
	li.min, li.max = pts[0], pts[0]
	for _, p := range pts {
		for k := range 3 {
			li.min[k] = min(li.min[k], p[k])
			li.max[k] = max(li.max[k], p[k])
		}
	}
	li.tr = make([][12]float64, len(simp))
	li.trState = make([]uint8, len(simp))
	li.lo = make([][3]float64, len(simp))
	li.hi = make([][3]float64, len(simp))
	for i, s := range simp {
		lo, hi := pts[s[0]], pts[s[0]]
		for _, v := range s[1:] {
			for k := range 3 {
				lo[k] = min(lo[k], pts[v][k])
				hi[k] = max(hi[k], pts[v][k])
			}
		}
		for k := range 3 {
			pad := 1e-9 * (hi[k] - lo[k] + 1)
			lo[k] -= pad
			hi[k] += pad
		}
		li.lo[i], li.hi[i] = lo, hi
	}
	return li
}

// transform computes simplex i's barycentric transform if it is not yet,
// and reports whether the simplex is usable (not too flat). li.mu is held.
func (li *linearND) transform(i int) bool {
	switch li.trState[i] {
	case trOK:
		return true
	case trFlat:
		return false
	}
	tr, ok := baryTransform(li.pts, li.simp[i])
	li.tr[i] = tr
	li.trState[i] = trFlat
	if ok {
		li.trState[i] = trOK
	}
	return ok
}

// baryTransform inverts the matrix whose column k is p_k - p_3 by Gaussian
// elimination with partial pivoting (what LAPACK's getrf/getrs do), and
// rejects it when the 1-norm condition estimate is below 1000*eps, as scipy
// does.
func baryTransform(pts [][3]float64, s [4]int32) ([12]float64, bool) {
	var out [12]float64
	r := pts[s[3]]
	var a [3][3]float64
	for j := range 3 {
		for k := range 3 {
			a[j][k] = pts[s[k]][j] - r[j]
		}
	}
	anorm := 0.0
	for k := range 3 {
		anorm = math.Max(anorm, math.Abs(a[0][k])+math.Abs(a[1][k])+math.Abs(a[2][k]))
	}
	inv := [3][3]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	m := a
	for col := range 3 {
		piv := col
		for i := col + 1; i < 3; i++ {
			if math.Abs(m[i][col]) > math.Abs(m[piv][col]) {
				piv = i
			}
		}
		if m[piv][col] == 0 {
			return out, false
		}
		m[col], m[piv] = m[piv], m[col]
		inv[col], inv[piv] = inv[piv], inv[col]
		for i := range 3 {
			if i == col {
				continue
			}
			f := m[i][col] / m[col][col]
			for k := range 3 {
				m[i][k] -= f * m[col][k]
				inv[i][k] -= f * inv[col][k]
			}
		}
	}
	for i := range 3 {
		d := m[i][i]
		for k := range 3 {
			inv[i][k] /= d
		}
	}
	ainv := 0.0
	for k := range 3 {
		ainv = math.Max(ainv, math.Abs(inv[0][k])+math.Abs(inv[1][k])+math.Abs(inv[2][k]))
	}
	if rcond := 1 / (anorm * ainv); !(rcond >= 1000*dblEps) {
		return out, false
	}
	for i := range 3 {
		copy(out[3*i:3*i+3], inv[i][:])
	}
	copy(out[9:], r[:])
	return out, true
}

// at interpolates at x. ok is false outside the triangulated hull (scipy's
// NaN). At a vertex of the containing simplex it returns that vertex's value
// exactly, where the barycentric sum could be off in the last bit.
func (li *linearND) at(x [3]float64) (v [2]float64, ok bool) {
	for k := range 3 {
		if x[k] < li.min[k]-baryEps || x[k] > li.max[k]+baryEps {
			return v, false
		}
	}
	var c [4]float64
	li.mu.Lock()
	i := li.find(x, &c)
	li.mu.Unlock()
	if i < 0 {
		return v, false
	}
	s := li.simp[i]
	for _, p := range s {
		if li.pts[p] == x {
			return li.vals[p], true
		}
	}
	for k := range 4 {
		for j := range 2 {
			v[j] += c[k] * li.vals[s[k]][j]
		}
	}
	return v, true
}

// bary computes barycentric coordinate k of x in simplex i the way scipy's
// _barycentric_coordinate_single does (coordinate 3 from coordinates 0-2).
func (li *linearND) bary(i int, x [3]float64, c *[4]float64, k int) {
	t := &li.tr[i]
	if k == 3 {
		c[3] = 1 - c[0] - c[1] - c[2]
		return
	}
	c[k] = t[3*k]*(x[0]-t[9]) + t[3*k+1]*(x[1]-t[10]) + t[3*k+2]*(x[2]-t[11])
}

func (li *linearND) inside(i int, x [3]float64, c *[4]float64, eps float64) bool {
	c[3] = 1
	for j := range 3 {
		li.bary(i, x, c, j)
		c[3] -= c[j]
		if !(-eps <= c[j] && c[j] <= 1+eps) {
			return false
		}
	}
	return -eps <= c[3] && c[3] <= 1+eps
}

// find returns the first simplex, in simplex order, that contains x within
// baryEps (scipy's _find_simplex_bruteforce without its special case for
// zero-volume simplices, which a Delaunay triangulation from delaunay3 does
// not contain), or -1. Simplices whose transform scipy would reject are
// skipped. li.mu is held.
func (li *linearND) find(x [3]float64, c *[4]float64) int {
	for i := range li.simp {
		lo, hi := &li.lo[i], &li.hi[i]
		if x[0] < lo[0] || x[0] > hi[0] || x[1] < lo[1] || x[1] > hi[1] || x[2] < lo[2] || x[2] > hi[2] {
			continue
		}
		if li.transform(i) && li.inside(i, x, c, baryEps) {
			return i
		}
	}
	return -1
}
