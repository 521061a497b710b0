package profile

import (
	"math"
	"math/big"
	"math/bits"
)

// This file holds a 3-D Delaunay tetrahedralization (Bowyer-Watson with
// exact predicates) and the piecewise-linear interpolator built on it, the
// counterpart of scipy.interpolate.LinearNDInterpolator.
//
// Ties (five or more cospherical points, which the grid-like Pollux point
// sets are full of) are broken by symbolic perturbation of the lifted
// coordinate |p|^2 ("simulation of simplicity"): point i is lowered by
// delta^(n-i) for an infinitesimal delta, so among tied points the one that
// comes later in the input wins. The result is a genuine Delaunay
// triangulation of the input and does not depend on anything but the input
// order. Qhull, which scipy uses, breaks the same ties through its merge
// history, so in degenerate regions the two triangulations differ, and so do
// the interpolated values; the package documentation quantifies the effect.

// tet is a tetrahedron of the triangulation under construction: four point
// indices ordered so that orient3d > 0, and the neighbour across the face
// opposite each vertex (-1 when none).
type tet struct {
	v     [4]int32
	nb    [4]int32
	alive bool
}

// delaunay3 triangulates pts and returns the simplices (point indices) of the
// tetrahedra, in a deterministic order. Exact duplicates of an earlier point
// are left out of the triangulation, as Qhull's "Qc" does.
func delaunay3(pts [][3]float64) [][4]int32 { return delaunay3Mode(pts, false) }

// delaunay3Mode is delaunay3; exactOnly evaluates every predicate with the
// exact math/big path, bypassing the floating-point filters (for tests).
func delaunay3Mode(pts [][3]float64, exactOnly bool) [][4]int32 {
	n := len(pts)
	if n < 4 {
		return nil
	}
	// Super-tetrahedron far outside the points: its vertices are n..n+3.
	lo, hi := pts[0], pts[0]
	for _, p := range pts {
		for k := range 3 {
			lo[k] = math.Min(lo[k], p[k])
			hi[k] = math.Max(hi[k], p[k])
		}
	}
	ext := 1.0
	for k := range 3 {
		ext = math.Max(ext, hi[k]-lo[k])
	}
	// A power of two keeps the super vertices exactly representable.
	s := math.Ldexp(1, math.Ilogb(ext)+24)
	var c [3]float64
	for k := range 3 {
		c[k] = math.Round((lo[k] + hi[k]) / 2)
	}
	all := make([][3]float64, n, n+4)
	copy(all, pts)
	all = append(all,
		[3]float64{c[0] - s, c[1] - s, c[2] - s},
		[3]float64{c[0] + 3*s, c[1] - s, c[2] - s},
		[3]float64{c[0] - s, c[1] + 3*s, c[2] - s},
		[3]float64{c[0] - s, c[1] - s, c[2] + 3*s},
	)
	d := &triangulator{pts: all, n: n, exactOnly: exactOnly}
	// Dead tetrahedra stay in the list: the profiles' grids create 30 to
	// 60 per point, so reserving that saves the list's regrowth copies.
	d.tets = make([]tet, 0, 64*n)
	d.mark = make([]bool, 0, 64*n)
	t0 := tet{v: [4]int32{int32(n), int32(n + 1), int32(n + 2), int32(n + 3)}, nb: [4]int32{-1, -1, -1, -1}, alive: true}
	if d.orient(t0.v[0], t0.v[1], t0.v[2], t0.v[3]) < 0 {
		t0.v[0], t0.v[1] = t0.v[1], t0.v[0]
	}
	d.tets = append(d.tets, t0)
	seen := make(map[[3]float64]bool, n)
	last := int32(0)
	for i := range n {
		if seen[pts[i]] {
			continue
		}
		seen[pts[i]] = true
		last = d.insert(int32(i), last)
	}
	var out [][4]int32
	for _, t := range d.tets {
		if !t.alive || t.v[0] >= int32(n) || t.v[1] >= int32(n) || t.v[2] >= int32(n) || t.v[3] >= int32(n) {
			continue
		}
		out = append(out, t.v)
	}
	return out
}

type triangulator struct {
	pts  [][3]float64
	n    int // number of real points; super vertices follow
	tets []tet
	// exactOnly disables the floating-point filters of the predicates.
	exactOnly bool
	scratch   intScratch
	// scratch
	stack, cavity []int32
	mark          []bool
	open          map[[2]int32]openFace
}

// openFace is a new tetrahedron's face through the inserted point, by
// tetrahedron and the index of the vertex opposite it.
type openFace struct {
	t int32
	k int
}

// locate walks from tet start to a tetrahedron containing point p.
func (d *triangulator) locate(p int32, start int32) int32 {
	t := start
	for !d.tets[t].alive {
		t = int32(len(d.tets) - 1)
		for !d.tets[t].alive {
			t--
		}
	}
	for steps := 0; steps < 4*len(d.tets)+16; steps++ {
		moved := false
		tt := &d.tets[t]
		for k := range 4 {
			v := tt.v
			v[k] = p
			if d.orient(v[0], v[1], v[2], v[3]) < 0 && tt.nb[k] >= 0 {
				t = tt.nb[k]
				moved = true
				break
			}
		}
		if !moved {
			return t
		}
	}
	// The visibility walk terminates on Delaunay triangulations; a scan is
	// the safety net.
	for i := range d.tets {
		if !d.tets[i].alive {
			continue
		}
		v := d.tets[i].v
		inside := true
		for k := range 4 {
			w := v
			w[k] = p
			if d.orient(w[0], w[1], w[2], w[3]) < 0 {
				inside = false
				break
			}
		}
		if inside {
			return int32(i)
		}
	}
	panic("profile: delaunay point location failed")
}

// insert adds point p and returns a live tetrahedron incident to it.
func (d *triangulator) insert(p int32, start int32) int32 {
	t0 := d.locate(p, start)
	if len(d.mark) < len(d.tets) {
		d.mark = append(d.mark, make([]bool, len(d.tets)-len(d.mark)+len(d.tets))...)
	}
	d.cavity = d.cavity[:0]
	d.stack = append(d.stack[:0], t0)
	d.mark[t0] = true
	for len(d.stack) > 0 {
		t := d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		d.cavity = append(d.cavity, t)
		for _, nb := range d.tets[t].nb {
			if nb < 0 || d.mark[nb] {
				continue
			}
			v := d.tets[nb].v
			if d.inSphere(v[0], v[1], v[2], v[3], p) {
				d.mark[nb] = true
				d.stack = append(d.stack, nb)
			}
		}
	}
	// New tetrahedra: one per cavity boundary face, coned to p. open holds
	// the faces through p still waiting for their second tetrahedron (only
	// looked up, never ranged over: its order does not matter).
	if d.open == nil {
		d.open = make(map[[2]int32]openFace)
	}
	open := d.open
	clear(open)
	var newest int32
	for _, t := range d.cavity {
		for k := range 4 {
			nb := d.tets[t].nb[k]
			if nb >= 0 && d.mark[nb] {
				continue
			}
			nt := tet{v: d.tets[t].v, nb: [4]int32{-1, -1, -1, -1}, alive: true}
			nt.v[k] = p
			nt.nb[k] = nb
			id := int32(len(d.tets))
			d.tets = append(d.tets, nt)
			newest = id
			if nb >= 0 {
				for j := range 4 {
					if d.tets[nb].nb[j] == t {
						d.tets[nb].nb[j] = id
					}
				}
			}
			// Link to the other new tetrahedra across the faces through p.
			for j := range 4 {
				if j == k {
					continue
				}
				var e [2]int32
				m := 0
				for i := range 4 {
					if i != j && i != k {
						e[m] = nt.v[i]
						m++
					}
				}
				if e[0] > e[1] {
					e[0], e[1] = e[1], e[0]
				}
				if o, ok := open[e]; ok {
					d.tets[id].nb[j] = o.t
					d.tets[o.t].nb[o.k] = id
					delete(open, e)
				} else {
					open[e] = openFace{id, j}
				}
			}
		}
	}
	for _, t := range d.cavity {
		d.tets[t].alive = false
		d.mark[t] = false
	}
	if len(d.mark) < len(d.tets) {
		d.mark = append(d.mark, make([]bool, len(d.tets)-len(d.mark))...)
	}
	return newest
}

// Predicates. Each is first evaluated in float64 following Shewchuk's
// orient3d and insphere ("Adaptive Precision Floating-Point Arithmetic and
// Fast Robust Geometric Predicates", 1997, and predicates.c), with his
// static error bounds o3derrboundA and isperrboundA: when |det| exceeds
// the bound times the permanent computed alongside, the float64 sign is
// the exact sign, including the rounding of the coordinate differences.
// Otherwise the determinant is evaluated exactly: with math/big integers
// when all coordinates involved are integers (the Pollux point sets and the
// super-tetrahedron are), else with the math/big.Float Laplace expansion.
// The products are converted explicitly to float64 so that the compiler
// cannot fuse them into FMAs, which the error analysis does not assume.

const (
	epsilon      = 1.0 / (1 << 53) // Shewchuk's epsilon: half an ulp of 1
	o3dErrBoundA = (7 + 56*epsilon) * epsilon
	ispErrBoundA = (16 + 224*epsilon) * epsilon
)

// orient returns the sign of Shewchuk's orient3d(a, b, c, d): positive when
// d lies below the plane of a, b, c seen counterclockwise from above.
func (d *triangulator) orient(a, b, c, e int32) int {
	pa, pb, pc, pd := d.pts[a], d.pts[b], d.pts[c], d.pts[e]
	if !d.exactOnly {
		if s, ok := orientFilter(pa, pb, pc, pd); ok {
			return s
		}
		if s, ok := orientInt(pa, pb, pc, pd); ok {
			return s
		}
	}
	return orientBig(pa, pb, pc, pd)
}

// orientFilter is orient3d's float64 stage: ok is false when the sign is
// not certain.
func orientFilter(pa, pb, pc, pd [3]float64) (int, bool) {
	adx, bdx, cdx := pa[0]-pd[0], pb[0]-pd[0], pc[0]-pd[0]
	ady, bdy, cdy := pa[1]-pd[1], pb[1]-pd[1], pc[1]-pd[1]
	adz, bdz, cdz := pa[2]-pd[2], pb[2]-pd[2], pc[2]-pd[2]
	bdxcdy, cdxbdy := float64(bdx*cdy), float64(cdx*bdy)
	cdxady, adxcdy := float64(cdx*ady), float64(adx*cdy)
	adxbdy, bdxady := float64(adx*bdy), float64(bdx*ady)
	det := float64(adz*(bdxcdy-cdxbdy)) + float64(bdz*(cdxady-adxcdy)) + float64(cdz*(adxbdy-bdxady))
	perm := float64((math.Abs(bdxcdy)+math.Abs(cdxbdy))*math.Abs(adz)) +
		float64((math.Abs(cdxady)+math.Abs(adxcdy))*math.Abs(bdz)) +
		float64((math.Abs(adxbdy)+math.Abs(bdxady))*math.Abs(cdz))
	bound := o3dErrBoundA * perm
	if det > bound || -det > bound {
		return sign(det), true
	}
	return 0, false
}

// orientBig is orient3d evaluated exactly with math/big.Float.
func orientBig(pa, pb, pc, pd [3]float64) int {
	rows := [][]*big.Float{
		{bf(pa[0]), bf(pa[1]), bf(pa[2]), bf(1)},
		{bf(pb[0]), bf(pb[1]), bf(pb[2]), bf(1)},
		{bf(pc[0]), bf(pc[1]), bf(pc[2]), bf(1)},
		{bf(pd[0]), bf(pd[1]), bf(pd[2]), bf(1)},
	}
	// det[a-d; b-d; c-d] equals det[[a,1];[b,1];[c,1];[d,1]] with the sign of
	// the row-reduction (+1 for this layout).
	return bigDet(rows).Sign()
}

// maxExactInt bounds the coordinates the integer paths accept, so that their
// differences fit in an int64.
const maxExactInt = 1 << 61

// intDiffs returns the coordinates of ps[i] - ps[len(ps)-1] as integers, or
// ok false when a coordinate is not an integer of magnitude below
// maxExactInt.
func intDiffs(ps [][3]float64, out [][3]int64) bool {
	last := len(ps) - 1
	var o [3]int64
	for k := range 3 {
		x := ps[last][k]
		if x != math.Trunc(x) || math.Abs(x) >= maxExactInt {
			return false
		}
		o[k] = int64(x)
	}
	for i := range last {
		for k := range 3 {
			x := ps[i][k]
			if x != math.Trunc(x) || math.Abs(x) >= maxExactInt {
				return false
			}
			out[i][k] = int64(x) - o[k]
		}
	}
	return true
}

// orientInt is orient3d exactly in integers; ok is false unless all
// coordinates are integers below maxExactInt.
func orientInt(pa, pb, pc, pd [3]float64) (int, bool) {
	var m [3][3]int64
	if !intDiffs([][3]float64{pa, pb, pc, pd}, m[:]) {
		return 0, false
	}
	if s, ok := orientSmall(&m); ok {
		return s, true
	}
	return orientBigInt(&m), true
}

// smallOrient bounds the differences orientSmall takes: below 2^40, a 2x2
// minor is below 2^81, each cofactor term below 2^121 and their sum below
// 2^123, so 128-bit arithmetic is exact. The super-tetrahedron's vertices
// (2^24 times the points' extent away) stay within it for the profiles.
const smallOrient = 1 << 40

// orientSmall is orientInt's determinant in 128-bit integers for
// differences below smallOrient in magnitude; ok is false for larger ones.
func orientSmall(m *[3][3]int64) (int, bool) {
	for i := range 3 {
		for k := range 3 {
			if d := m[i][k]; d <= -smallOrient || d >= smallOrient {
				return 0, false
			}
		}
	}
	var acc i128
	for j := range 3 {
		// Cofactor of m[0][j] from the other two rows.
		j1, j2 := (j+1)%3, (j+2)%3
		minor := mul64(m[1][j1], m[2][j2]).sub(mul64(m[1][j2], m[2][j1]))
		acc = acc.add(minor.mulSmall(m[0][j]))
	}
	return acc.sign(), true
}

// i128 is a signed 128-bit integer in two's complement.
type i128 struct{ hi, lo uint64 }

// mul64 returns a*b exactly.
func mul64(a, b int64) i128 {
	hi, lo := bits.Mul64(absInt64(a), absInt64(b))
	r := i128{hi, lo}
	if (a < 0) != (b < 0) {
		r = r.neg()
	}
	return r
}

func (x i128) neg() i128 {
	lo, c := bits.Sub64(0, x.lo, 0)
	hi, _ := bits.Sub64(0, x.hi, c)
	return i128{hi, lo}
}

func (x i128) add(y i128) i128 {
	lo, c := bits.Add64(x.lo, y.lo, 0)
	hi, _ := bits.Add64(x.hi, y.hi, c)
	return i128{hi, lo}
}

func (x i128) sub(y i128) i128 {
	lo, c := bits.Sub64(x.lo, y.lo, 0)
	hi, _ := bits.Sub64(x.hi, y.hi, c)
	return i128{hi, lo}
}

// mulSmall returns x*y when the product fits in 127 bits and |x| < 2^127.
func (x i128) mulSmall(y int64) i128 {
	neg := int64(x.hi) < 0
	if neg {
		x = x.neg()
	}
	u := absInt64(y)
	hi, lo := bits.Mul64(x.lo, u)
	r := i128{hi + x.hi*u, lo}
	if neg != (y < 0) {
		r = r.neg()
	}
	return r
}

func (x i128) sign() int {
	switch {
	case x.hi == 0 && x.lo == 0:
		return 0
	case int64(x.hi) < 0:
		return -1
	}
	return 1
}

// orientBigInt is orientInt's determinant in big integers, for any int64
// differences.
func orientBigInt(m *[3][3]int64) int {
	var x [3][3]big.Int
	for i := range 3 {
		for k := range 3 {
			x[i][k].SetInt64(m[i][k])
		}
	}
	var det, t, u big.Int
	for j := range 3 {
		// Cofactor of x[0][j] from the other two rows.
		j1, j2 := (j+1)%3, (j+2)%3
		t.Mul(&x[1][j1], &x[2][j2])
		u.Mul(&x[1][j2], &x[2][j1])
		t.Sub(&t, &u)
		t.Mul(&t, &x[0][j])
		det.Add(&det, &t)
	}
	return det.Sign()
}

// inSphere reports whether point e lies inside the circumsphere of the
// positively oriented tetrahedron (a, b, c, d), ties broken symbolically.
func (d *triangulator) inSphere(a, b, c, dd, e int32) bool {
	idx := [5]int32{a, b, c, dd, e}
	if !d.exactOnly {
		pts := [5][3]float64{d.pts[a], d.pts[b], d.pts[c], d.pts[dd], d.pts[e]}
		s, ok := inSphereFilter(pts)
		if !ok {
			s, ok = inSphereInt(pts, &d.scratch)
		}
		if ok {
			if s != 0 {
				return s > 0
			}
			return d.inSphereTie(idx)
		}
	}
	// Exact evaluation of the 5x5 lifted determinant (rows x, y, z, h, 1).
	rows := make([][]*big.Float, 5)
	for i := range 5 {
		p := d.pts[idx[i]]
		h := bf(p[0])
		h.Mul(h, bf(p[0]))
		h.Add(h, new(big.Float).SetPrec(bigPrec).Mul(bf(p[1]), bf(p[1])))
		h.Add(h, new(big.Float).SetPrec(bigPrec).Mul(bf(p[2]), bf(p[2])))
		rows[i] = []*big.Float{bf(p[0]), bf(p[1]), bf(p[2]), h, bf(1)}
	}
	if s := bigDet(rows).Sign(); s != 0 {
		return s > 0
	}
	if !d.exactOnly {
		return d.inSphereTie(idx)
	}
	// Tie: point i's height is lowered by delta^(n-i), so the latest point
	// dominates. The coefficient of its perturbation is the determinant with
	// the height column replaced by the unit vector at its row.
	for _, r := range tieOrder(idx) {
		cr := make([][]*big.Float, 5)
		for i := range 5 {
			cr[i] = append([]*big.Float(nil), rows[i]...)
			cr[i][3] = bf(0)
			if i == r {
				cr[i][3] = bf(1)
			}
		}
		if s := bigDet(cr).Sign(); s != 0 {
			return -s > 0 // lowering: the perturbation enters with a minus sign
		}
	}
	return false
}

// tieOrder returns the rows 0-4 of idx by decreasing point index: the order
// in which their symbolic perturbations dominate.
func tieOrder(idx [5]int32) [5]int {
	order := [5]int{0, 1, 2, 3, 4}
	for i := 1; i < 5; i++ {
		for j := i; j > 0 && idx[order[j]] > idx[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	return order
}

// inSphereTie breaks an exact insphere tie symbolically, as the exact path
// of inSphere does. The perturbation coefficient of row r, the 5x5
// determinant with the height column (index 3) replaced by the unit vector
// at row r, is by expansion along that column (-1)^(r+3) times the 4x4
// determinant [x y z 1] of the other rows, which is orient3d of those
// points in order.
func (d *triangulator) inSphereTie(idx [5]int32) bool {
	for _, r := range tieOrder(idx) {
		var o [4]int32
		m := 0
		for i := range 5 {
			if i != r {
				o[m] = idx[i]
				m++
			}
		}
		s := d.orient(o[0], o[1], o[2], o[3])
		if (r+3)%2 == 1 {
			s = -s
		}
		if s != 0 {
			return -s > 0 // lowering: the perturbation enters with a minus sign
		}
	}
	return false
}

// inSphereFilter is Shewchuk's insphere float64 stage on p[0..3] = a, b, c,
// d and p[4] = e: the sign of the lifted determinant when certain.
func inSphereFilter(p [5][3]float64) (int, bool) {
	pe := p[4]
	aex, aey, aez := p[0][0]-pe[0], p[0][1]-pe[1], p[0][2]-pe[2]
	bex, bey, bez := p[1][0]-pe[0], p[1][1]-pe[1], p[1][2]-pe[2]
	cex, cey, cez := p[2][0]-pe[0], p[2][1]-pe[1], p[2][2]-pe[2]
	dex, dey, dez := p[3][0]-pe[0], p[3][1]-pe[1], p[3][2]-pe[2]

	aexbey, bexaey := float64(aex*bey), float64(bex*aey)
	ab := aexbey - bexaey
	bexcey, cexbey := float64(bex*cey), float64(cex*bey)
	bc := bexcey - cexbey
	cexdey, dexcey := float64(cex*dey), float64(dex*cey)
	cd := cexdey - dexcey
	dexaey, aexdey := float64(dex*aey), float64(aex*dey)
	da := dexaey - aexdey
	aexcey, cexaey := float64(aex*cey), float64(cex*aey)
	ac := aexcey - cexaey
	bexdey, dexbey := float64(bex*dey), float64(dex*bey)
	bd := bexdey - dexbey

	abc := float64(aez*bc) - float64(bez*ac) + float64(cez*ab)
	bcd := float64(bez*cd) - float64(cez*bd) + float64(dez*bc)
	cda := float64(cez*da) + float64(dez*ac) + float64(aez*cd)
	dab := float64(dez*ab) + float64(aez*bd) + float64(bez*da)

	alift := float64(aex*aex) + float64(aey*aey) + float64(aez*aez)
	blift := float64(bex*bex) + float64(bey*bey) + float64(bez*bez)
	clift := float64(cex*cex) + float64(cey*cey) + float64(cez*cez)
	dlift := float64(dex*dex) + float64(dey*dey) + float64(dez*dez)

	det := (float64(dlift*abc) - float64(clift*dab)) + (float64(blift*cda) - float64(alift*bcd))

	ab_, bc_, cd_ := math.Abs(aexbey)+math.Abs(bexaey), math.Abs(bexcey)+math.Abs(cexbey), math.Abs(cexdey)+math.Abs(dexcey)
	da_, ac_, bd_ := math.Abs(dexaey)+math.Abs(aexdey), math.Abs(aexcey)+math.Abs(cexaey), math.Abs(bexdey)+math.Abs(dexbey)
	az, bz, cz, dz := math.Abs(aez), math.Abs(bez), math.Abs(cez), math.Abs(dez)
	perm := float64((float64(cd_*bz)+float64(bd_*cz)+float64(bc_*dz))*alift) +
		float64((float64(da_*cz)+float64(ac_*dz)+float64(cd_*az))*blift) +
		float64((float64(ab_*dz)+float64(bd_*az)+float64(da_*bz))*clift) +
		float64((float64(bc_*az)+float64(ac_*bz)+float64(ab_*cz))*dlift)
	bound := ispErrBoundA * perm
	if det > bound || -det > bound {
		return sign(det), true
	}
	return 0, false
}

// intScratch holds the big integers of inSphereInt between calls.
type intScratch struct {
	m               [4][4]big.Int
	t, det, a, b, u big.Int
}

// inSphereInt evaluates the insphere determinant exactly in integers (the
// 4x4 determinant of the rows [p_i - e, |p_i - e|^2], which equals the 5x5
// lifted one); ok is false unless all coordinates are integers below
// maxExactInt.
// sc, when not nil, is reused scratch space.
func inSphereInt(p [5][3]float64, sc *intScratch) (int, bool) {
	var dif [4][3]int64
	if !intDiffs(p[:], dif[:]) {
		return 0, false
	}
	if s, ok := inSphereSmall(&dif); ok {
		return s, true
	}
	return inSphereBig(&dif, sc), true
}

// inSphereBig is inSphereInt's determinant in big integers, for any
// int64 differences. sc, when not nil, is reused scratch space.
func inSphereBig(dif *[4][3]int64, sc *intScratch) int {
	if sc == nil {
		sc = new(intScratch)
	}
	m, t := &sc.m, &sc.t
	for i := range 4 {
		m[i][3].SetInt64(0)
		for k := range 3 {
			m[i][k].SetInt64(dif[i][k])
			t.Mul(&m[i][k], &m[i][k])
			m[i][3].Add(&m[i][3], t)
		}
	}
	// Expansion by the 2x2 minors of rows 0-1 and their complements in
	// rows 2-3 (Laplace), as det4.
	det, a, b, u := &sc.det, &sc.a, &sc.b, &sc.u
	det.SetInt64(0)
	for i, pr := range minorPairs {
		q := minorPairs[5-i]
		a.Mul(&m[0][pr[0]], &m[1][pr[1]])
		u.Mul(&m[0][pr[1]], &m[1][pr[0]])
		a.Sub(a, u)
		b.Mul(&m[2][q[0]], &m[3][q[1]])
		u.Mul(&m[2][q[1]], &m[3][q[0]])
		b.Sub(b, u)
		a.Mul(a, b)
		if i == 1 || i == 4 {
			det.Sub(det, a)
		} else {
			det.Add(det, a)
		}
	}
	return det.Sign()
}

// minorPairs are the column pairs of a 4x4 determinant's Laplace expansion
// by the 2x2 minors of rows 0-1: pair i's complement in rows 2-3 is pair
// 5-i, and pairs 1 and 4 enter with a minus sign.
var minorPairs = [6][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}

// smallInt bounds the coordinate differences inSphereSmall takes: below
// 2^19, a lifted entry |d|^2 is below 2^40, a 2x2 minor with the lifted
// column below 2^60 (an int64), one of coordinates below 2^39, each of
// the six products below 2^99 and their sum below 2^102, so 128-bit
// arithmetic is exact.
const smallInt = 1 << 19

// inSphereSmall is inSphereInt's determinant for differences below
// smallInt in magnitude, in int64 minors and a 128-bit sum (the profiles'
// grids, small integers, take this path); ok is false for larger ones.
func inSphereSmall(dif *[4][3]int64) (int, bool) {
	var m [4][4]int64
	for i := range 4 {
		for k := range 3 {
			d := dif[i][k]
			if d <= -smallInt || d >= smallInt {
				return 0, false
			}
			m[i][k] = d
			m[i][3] += d * d
		}
	}
	var hi, lo uint64 // the sum, two's complement
	for i, pr := range minorPairs {
		q := minorPairs[5-i]
		a := m[0][pr[0]]*m[1][pr[1]] - m[0][pr[1]]*m[1][pr[0]]
		b := m[2][q[0]]*m[3][q[1]] - m[2][q[1]]*m[3][q[0]]
		neg := (a < 0) != (b < 0)
		if i == 1 || i == 4 {
			neg = !neg
		}
		ph, pl := bits.Mul64(absInt64(a), absInt64(b))
		var c uint64
		if neg {
			lo, c = bits.Sub64(lo, pl, 0)
			hi, _ = bits.Sub64(hi, ph, c)
		} else {
			lo, c = bits.Add64(lo, pl, 0)
			hi, _ = bits.Add64(hi, ph, c)
		}
	}
	switch {
	case hi == 0 && lo == 0:
		return 0, true
	case int64(hi) < 0:
		return -1, true
	}
	return 1, true
}

// absInt64 is |x| for x > math.MinInt64.
func absInt64(x int64) uint64 {
	if x < 0 {
		return uint64(-x)
	}
	return uint64(x)
}

func det4(m [4][4]float64) (det, perm float64) {
	// Expansion by 2x2 minors of the first two rows.
	for i, p := range minorPairs {
		q := minorPairs[5-i]
		sgn := 1.0
		if i == 1 || i == 4 {
			sgn = -1
		}
		a := m[0][p[0]]*m[1][p[1]] - m[0][p[1]]*m[1][p[0]]
		b := m[2][q[0]]*m[3][q[1]] - m[2][q[1]]*m[3][q[0]]
		det += sgn * a * b
		pa := math.Abs(m[0][p[0]]*m[1][p[1]]) + math.Abs(m[0][p[1]]*m[1][p[0]])
		pb := math.Abs(m[2][q[0]]*m[3][q[1]]) + math.Abs(m[2][q[1]]*m[3][q[0]])
		perm += pa * pb
	}
	return det, perm
}

const bigPrec = 4096

func bf(x float64) *big.Float { return new(big.Float).SetPrec(bigPrec).SetFloat64(x) }

// bigDet is the determinant by Laplace expansion along the first row; exact
// for the float64 inputs used here because bigPrec exceeds the bits needed.
func bigDet(m [][]*big.Float) *big.Float {
	n := len(m)
	if n == 1 {
		return new(big.Float).SetPrec(bigPrec).Set(m[0][0])
	}
	sum := bf(0)
	sub := make([][]*big.Float, n-1)
	for j := range n {
		if m[0][j].Sign() == 0 {
			continue
		}
		for i := 1; i < n; i++ {
			row := make([]*big.Float, 0, n-1)
			row = append(row, m[i][:j]...)
			row = append(row, m[i][j+1:]...)
			sub[i-1] = row
		}
		t := bigDet(sub)
		t.Mul(t, m[0][j])
		if j%2 == 1 {
			sum.Sub(sum, t)
		} else {
			sum.Add(sum, t)
		}
	}
	return sum
}

func sign(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
