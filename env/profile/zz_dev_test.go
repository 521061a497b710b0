package profile

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func readRef(t *testing.T, path string) [][]float64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var row []float64
		for _, s := range strings.Split(sc.Text(), ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				t.Fatal(err)
			}
			row = append(row, v)
		}
		out = append(out, row)
	}
	return out
}

func TestDevCompare(t *testing.T) {
	ms := loadAll(t)
	for _, name := range []string{"bert", "cifar10", "ncf", "imagenet", "deepspeech2", "yolov3"} {
		m := ms[name]
		pts, vals := m.ndPoints()
		ref := readRef(t, "/tmp/ref/"+name+"_pts.csv")
		for i := range ref {
			for k := range 3 {
				if ref[i][k] != pts[i][k] {
					t.Fatalf("%s pt %d", name, i)
				}
			}
			for k := range 2 {
				if ref[i][3+k] != vals[i][k] {
					t.Errorf("%s val %d %v %v", name, i, ref[i][3+k], vals[i][k])
				}
			}
		}
		q := readRef(t, "/tmp/ref/"+name+"_q.csv")
		simp, ok := pinnedTriangulation(pts)
		if !ok {
			t.Fatal("not pinned")
		}
		st := time.Now()
		own := delaunay3(pts)
		dt := time.Since(st)
		for _, variant := range []struct {
			n string
			s [][4]int32
		}{{"pinned", simp}, {"delaunay", own}} {
			li := newLinearND(pts, vals, variant.s)
			maxRel, nanMis, nbad, nok := 0.0, 0, 0, 0
			for _, r := range q {
				v, ok := li.at([3]float64{r[0], r[1], r[2]})
				if math.IsNaN(r[3]) != !ok {
					nanMis++
					continue
				}
				if !ok {
					continue
				}
				nok++
				rel := 0.0
				for k := range 2 {
					rel = math.Max(rel, math.Abs(v[k]-r[3+k])/math.Abs(r[3+k]))
				}
				if rel > 1e-9 {
					nbad++
				}
				maxRel = math.Max(maxRel, rel)
			}
			fmt.Printf("%-12s %-9s tets=%5d q=%6d nanMismatch=%5d maxRel=%.3g frac>1e-9=%.3f build=%v\n", name, variant.n, len(variant.s), len(q), nanMis, maxRel, float64(nbad)/float64(nok), dt)
		}
	}
}
