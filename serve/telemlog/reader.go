package telemlog

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

// Log is what ReadDir found in a log directory.
type Log struct {
	// Samples holds every sample of the sealed files, sorted by time, then
	// node id (samples equal in both keep their file order).
	Samples []Sample
	// Files lists the sealed files read, in index order.
	Files []string
	// Partial lists the unsealed .tmp files that were skipped: the file a
	// live Writer is writing, or one a crash left behind. Their samples
	// are not in Samples.
	Partial []string
}

// Nodes returns the distinct node ids of the log's samples, sorted.
func (l *Log) Nodes() []string {
	var ids []string
	seen := map[string]bool{}
	for _, s := range l.Samples {
		if !seen[s.Node] {
			seen[s.Node] = true
			ids = append(ids, s.Node)
		}
	}
	slices.Sort(ids)
	return ids
}

// ReadDir reads every sealed telemetry file of dir (telemetry-*.parquet)
// and returns their samples sorted by time, then node. Unsealed .tmp files
// are skipped and listed in Log.Partial; files with other names (a
// decision log's among them) are ignored. A sealed file that cannot be
// read is an error naming it (a *FormatError with its path).
func ReadDir(dir string) (*Log, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("telemlog: %w", err)
	}
	type entry struct {
		index int
		path  string
	}
	var sealed []entry
	log := &Log{}
	for _, e := range ents {
		i, tmp, ok := parseName(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if tmp {
			log.Partial = append(log.Partial, p)
			continue
		}
		sealed = append(sealed, entry{i, p})
	}
	sort.Slice(sealed, func(a, b int) bool { return sealed[a].index < sealed[b].index })
	sort.Strings(log.Partial)
	for _, s := range sealed {
		samples, err := ReadFile(s.path)
		if err != nil {
			return nil, err
		}
		log.Samples = append(log.Samples, samples...)
		log.Files = append(log.Files, s.path)
	}
	slices.SortStableFunc(log.Samples, func(a, b Sample) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Node, b.Node)
	})
	return log, nil
}

// ReadFile reads the samples of one sealed log file, in file order.
func ReadFile(path string) ([]Sample, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("telemlog: %w", err)
	}
	return Decode(data, path)
}
