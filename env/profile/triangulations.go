package profile

import (
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"errors"
	"math"
	"sync"
)

// Building a model's 3-D interpolator is mostly its Delaunay
// triangulation (exact predicates, 5-30 ms per Pollux model), which
// depends on nothing but the interpolation points. triangulations.bin
// holds the triangulations of the six Pollux models' points, computed by
// delaunay3 and keyed by a SHA-256 of the points, so that a run whose
// measured profiles are the shared Pollux traces reads them instead of
// triangulating. Any other point set (another profile directory, an edited
// file) misses the key and is triangulated at run time, with the same
// result. The file holds point indices only, no measurements. Its format
// is docs/format/triangulations.md; TestTriangulationsFile checks that
// regenerating it from ../shared/traces gives the same bytes, and that the
// interpolators built from it predict exactly what freshly built ones do.

//go:generate go test -run ^TestTriangulationsFile$ -update .

//go:embed triangulations.bin
var triangulationsBin []byte

// triMagic opens triangulations.bin: a name and the format version.
const triMagic = "DRTRI\x01"

// triEntry is one model's triangulation in triangulations.bin, not yet
// decoded.
type triEntry struct {
	name  string
	npts  int
	nsimp int
	block []byte // the simplices, delta-coded (docs/format/triangulations.md)
}

var errTriCorrupt = errors.New("profile: corrupt triangulations file")

// triIndex maps the points key of each triangulation in triangulations.bin
// to its entry; it reads only the headers.
var triIndex = sync.OnceValue(func() map[[sha256.Size]byte]triEntry {
	idx, err := decodeTriIndex(triangulationsBin)
	if err != nil {
		// TestTriangulationsFile keeps the embedded file valid; a bad one
		// only costs the run-time triangulation.
		return nil
	}
	return idx
})

// pointsKey is the SHA-256 of the point count and the points' float64
// bits, little-endian, in order: what a triangulation depends on.
func pointsKey(pts [][3]float64) [sha256.Size]byte {
	b := make([]byte, 0, 8+24*len(pts))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(pts)))
	for _, p := range pts {
		for _, x := range p {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
	}
	return sha256.Sum256(b)
}

// triangulate returns delaunay3(pts), from triangulations.bin when it holds
// that point set's triangulation.
func triangulate(pts [][3]float64) [][4]int32 {
	if e, ok := triIndex()[pointsKey(pts)]; ok && e.npts == len(pts) {
		if simp, err := decodeSimplices(e.block, e.npts, e.nsimp); err == nil {
			return simp
		}
	}
	return delaunay3(pts)
}

// appendTriangulation appends one model's entry of triangulations.bin:
// its name, the key of its points, the counts and the simplex block.
func appendTriangulation(b []byte, name string, pts [][3]float64, simp [][4]int32) []byte {
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	key := pointsKey(pts)
	b = append(b, key[:]...)
	b = binary.AppendUvarint(b, uint64(len(pts)))
	b = binary.AppendUvarint(b, uint64(len(simp)))
	var block []byte
	var prev [4]int32
	for _, s := range simp {
		for k, v := range s {
			block = binary.AppendVarint(block, int64(v-prev[k]))
		}
		prev = s
	}
	b = binary.AppendUvarint(b, uint64(len(block)))
	return append(b, block...)
}

// encodeTriangulations encodes triangulations.bin from the models' names,
// point sets and simplices, in the given order.
func encodeTriangulations(names []string, pts [][][3]float64, simp [][][4]int32) []byte {
	b := []byte(triMagic)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for i, name := range names {
		b = appendTriangulation(b, name, pts[i], simp[i])
	}
	return b
}

// decodeTriIndex reads the headers of a triangulations file, keyed by the
// points key; the simplex blocks stay encoded.
func decodeTriIndex(b []byte) (map[[sha256.Size]byte]triEntry, error) {
	if len(b) < len(triMagic) || string(b[:len(triMagic)]) != triMagic {
		return nil, errTriCorrupt
	}
	b = b[len(triMagic):]
	uv := func() (int, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > math.MaxInt32 {
			return 0, false
		}
		b = b[n:]
		return int(v), true
	}
	count, ok := uv()
	// An entry takes at least its key and four bytes of lengths.
	if !ok || count > len(b)/(sha256.Size+4) {
		return nil, errTriCorrupt
	}
	idx := make(map[[sha256.Size]byte]triEntry, count)
	for range count {
		var e triEntry
		n, ok := uv()
		if !ok || n > len(b) {
			return nil, errTriCorrupt
		}
		e.name, b = string(b[:n]), b[n:]
		if len(b) < sha256.Size {
			return nil, errTriCorrupt
		}
		key := [sha256.Size]byte(b[:sha256.Size])
		b = b[sha256.Size:]
		var ok1, ok2, ok3 bool
		e.npts, ok1 = uv()
		e.nsimp, ok2 = uv()
		n, ok3 = uv()
		if !ok1 || !ok2 || !ok3 || n > len(b) {
			return nil, errTriCorrupt
		}
		e.block, b = b[:n], b[n:]
		idx[key] = e
	}
	if len(b) != 0 {
		return nil, errTriCorrupt
	}
	return idx, nil
}

// decodeSimplices decodes a simplex block of nsimp simplices over npts
// points, checking every index.
func decodeSimplices(block []byte, npts, nsimp int) ([][4]int32, error) {
	if nsimp > len(block)/4 { // each simplex takes at least 4 bytes
		return nil, errTriCorrupt
	}
	out := make([][4]int32, nsimp)
	var prev [4]int32
	for i := range out {
		for k := range 4 {
			d, n := binary.Varint(block)
			if n <= 0 {
				return nil, errTriCorrupt
			}
			block = block[n:]
			v := int64(prev[k]) + d
			if v < 0 || v >= int64(npts) {
				return nil, errTriCorrupt
			}
			out[i][k] = int32(v)
		}
		prev = out[i]
	}
	if len(block) != 0 {
		return nil, errTriCorrupt
	}
	return out, nil
}
