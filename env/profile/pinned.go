package profile

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"sync"
)

// Pinned triangulations.
//
// Pollux interpolates with scipy's LinearNDInterpolator, whose Delaunay
// triangulation comes from Qhull ("Qbb Qc Qz Q12 Qt"). The Pollux point sets
// are grid-like, so most Delaunay cells have five or more cospherical
// vertices and Qhull splits them into tetrahedra by its own merge history;
// another valid Delaunay triangulation interpolates differently (by up to
// tens of percent). To reproduce Pollux exactly, qhull.bin.gz records, for
// each shipped point set, the tetrahedra scipy 1.10.1 returns
// (scipy.spatial.Delaunay(points).simplices, dropping those whose
// barycentric transform is NaN, i.e. degenerate, in scipy's order). A point
// set is recognised by its FNV-1a hash; any other point set falls back to
// delaunay3.
//
// Format (little-endian), gzip-compressed:
//
//	magic "DRQH", version byte 1, uint16 entry count, then per entry:
//	uint64 points hash, uint32 point count, uint32 simplex count,
//	simplex count x 4 uint16 point indices.

//go:embed qhull.bin.gz
var qhullBin []byte

var (
	pinnedOnce sync.Once
	pinnedSets map[uint64]pinnedEntry
	pinnedErr  error
)

type pinnedEntry struct {
	npts int
	simp [][4]int32
}

// pointsHash is the FNV-1a 64 hash of the points' float64 bit patterns.
func pointsHash(pts [][3]float64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, p := range pts {
		for _, x := range p {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
			h.Write(b[:])
		}
	}
	return h.Sum64()
}

func pinnedTriangulation(pts [][3]float64) ([][4]int32, bool) {
	pinnedOnce.Do(func() {
		pinnedSets, pinnedErr = decodePinned(qhullBin)
	})
	if pinnedErr != nil {
		panic("profile: corrupt embedded qhull.bin.gz: " + pinnedErr.Error())
	}
	e, ok := pinnedSets[pointsHash(pts)]
	if !ok || e.npts != len(pts) {
		return nil, false
	}
	return e.simp, true
}

// pinnedSet is one recorded triangulation, for encodePinned.
type pinnedSet struct {
	pts  [][3]float64
	simp [][4]int32
}

func encodePinned(sets []pinnedSet) ([]byte, error) {
	var raw bytes.Buffer
	raw.WriteString("DRQH")
	raw.WriteByte(1)
	le := binary.LittleEndian
	raw.Write(le.AppendUint16(nil, uint16(len(sets))))
	for _, s := range sets {
		if len(s.pts) > math.MaxUint16 {
			return nil, errors.New("profile: too many points to pin")
		}
		raw.Write(le.AppendUint64(nil, pointsHash(s.pts)))
		raw.Write(le.AppendUint32(nil, uint32(len(s.pts))))
		raw.Write(le.AppendUint32(nil, uint32(len(s.simp))))
		for _, t := range s.simp {
			for _, v := range t {
				raw.Write(le.AppendUint16(nil, uint16(v)))
			}
		}
	}
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	zw.Write(raw.Bytes())
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func decodePinned(data []byte) (map[uint64]pinnedEntry, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	if len(raw) < 7 || string(raw[:4]) != "DRQH" || raw[4] != 1 {
		return nil, errors.New("bad header")
	}
	le := binary.LittleEndian
	n := int(le.Uint16(raw[5:]))
	raw = raw[7:]
	out := make(map[uint64]pinnedEntry, n)
	for range n {
		if len(raw) < 16 {
			return nil, errors.New("truncated entry")
		}
		h := le.Uint64(raw)
		npts := int(le.Uint32(raw[8:]))
		ns := int(le.Uint32(raw[12:]))
		raw = raw[16:]
		if len(raw) < 8*ns {
			return nil, errors.New("truncated simplices")
		}
		simp := make([][4]int32, ns)
		for i := range simp {
			for k := range 4 {
				v := int32(le.Uint16(raw[8*i+2*k:]))
				if int(v) >= npts {
					return nil, fmt.Errorf("simplex vertex %d out of range", v)
				}
				simp[i][k] = v
			}
		}
		raw = raw[8*ns:]
		out[h] = pinnedEntry{npts: npts, simp: simp}
	}
	return out, nil
}
