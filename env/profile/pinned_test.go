package profile

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var qhullDir = flag.String("qhull-dir", "", "rewrite qhull.bin.gz from <dir>/<model>_tri.txt (scipy simplices, one per line)")

// TestWritePinned regenerates qhull.bin.gz. The input files hold, one
// simplex per line, scipy.spatial.Delaunay(points).simplices (scipy 1.10.1)
// for each model's ndPoints, without the simplices whose transform is NaN.
func TestWritePinned(t *testing.T) {
	if *qhullDir == "" {
		t.Skip("-qhull-dir not set")
	}
	ms := loadAll(t)
	names := make([]string, 0, len(ms))
	for n := range ms {
		names = append(names, n)
	}
	slices.Sort(names)
	var sets []pinnedSet
	for _, n := range names {
		pts, _ := ms[n].ndPoints()
		f, err := os.Open(filepath.Join(*qhullDir, n+"_tri.txt"))
		if err != nil {
			t.Fatal(err)
		}
		var simp [][4]int32
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			var s [4]int32
			for k := range 4 {
				v, err := strconv.Atoi(fs[k])
				if err != nil {
					t.Fatal(err)
				}
				s[k] = int32(v)
			}
			simp = append(simp, s)
		}
		f.Close()
		sets = append(sets, pinnedSet{pts: pts, simp: simp})
	}
	b, err := encodePinned(sets)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("qhull.bin.gz", b, 0o644); err != nil {
		t.Fatal(err)
	}
}
