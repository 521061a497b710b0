package profile

import (
	"math"
	"math/big"
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
func delaunay3(pts [][3]float64) [][4]int32 {
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
	d := &triangulator{pts: all, n: n}
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
	// scratch
	stack, cavity []int32
	mark          []bool
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
	// New tetrahedra: one per cavity boundary face, coned to p.
	type faceKey [2]int32
	open := make(map[faceKey]struct {
		t int32
		k int
	})
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
					open[e] = struct {
						t int32
						k int
					}{id, j}
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

// orient returns the sign of Shewchuk's orient3d(a, b, c, d): positive when
// d lies below the plane of a, b, c seen counterclockwise from above.
func (d *triangulator) orient(a, b, c, e int32) int {
	pa, pb, pc, pd := d.pts[a], d.pts[b], d.pts[c], d.pts[e]
	var m [3][3]float64
	for k := range 3 {
		m[0][k] = pa[k] - pd[k]
		m[1][k] = pb[k] - pd[k]
		m[2][k] = pc[k] - pd[k]
	}
	det := m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) -
		m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) +
		m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
	perm := math.Abs(m[0][0])*(math.Abs(m[1][1]*m[2][2])+math.Abs(m[1][2]*m[2][1])) +
		math.Abs(m[0][1])*(math.Abs(m[1][0]*m[2][2])+math.Abs(m[1][2]*m[2][0])) +
		math.Abs(m[0][2])*(math.Abs(m[1][0]*m[2][1])+math.Abs(m[1][1]*m[2][0]))
	if math.Abs(det) > 1e-12*perm {
		return sign(det)
	}
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

// inSphere reports whether point e lies inside the circumsphere of the
// positively oriented tetrahedron (a, b, c, d), ties broken symbolically.
func (d *triangulator) inSphere(a, b, c, dd, e int32) bool {
	idx := [5]int32{a, b, c, dd, e}
	pe := d.pts[e]
	var m [4][4]float64
	for i := range 4 {
		p := d.pts[idx[i]]
		dx, dy, dz := p[0]-pe[0], p[1]-pe[1], p[2]-pe[2]
		m[i] = [4]float64{dx, dy, dz, dx*dx + dy*dy + dz*dz}
	}
	det, perm := det4(m)
	if math.Abs(det) > 1e-10*perm {
		return det > 0
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
	// Tie: point i's height is lowered by delta^(n-i), so the latest point
	// dominates. The coefficient of its perturbation is the determinant with
	// the height column replaced by the unit vector at its row.
	order := [5]int{0, 1, 2, 3, 4}
	for i := 1; i < 5; i++ {
		for j := i; j > 0 && idx[order[j]] > idx[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	for _, r := range order {
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

func det4(m [4][4]float64) (det, perm float64) {
	// Expansion by 2x2 minors of the first two rows.
	pairs := [6][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}
	for i, p := range pairs {
		q := pairs[5-i]
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
