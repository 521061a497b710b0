package pqlog

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/drover-sched/drover/internal/inputfile"
)

// Log is what ReadDir found in a log directory.
type Log[T any] struct {
	// Records holds every record of the sealed files, in index order and
	// file order within a file.
	Records []T
	// Files lists the sealed files read, in index order.
	Files []string
	// Partial lists the unsealed files that were skipped (.tmp and .wal):
	// a live Writer's, or those a crash left behind, which the next
	// Writer recovers. Their records are not in Records.
	Partial []string
}

// ReadDir reads every sealed log file of dir in index order. Unsealed
// files are skipped and listed in Log.Partial; files with other names are
// ignored. A sealed file that cannot be read is an error naming it.
func ReadDir[T any](f *Format[T], dir string) (*Log[T], error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Log, err)
	}
	type entry struct {
		index int
		path  string
	}
	var sealed []entry
	log := &Log[T]{}
	for _, e := range ents {
		i, kind, ok := f.parseName(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if kind != kindSealed {
			log.Partial = append(log.Partial, p)
			continue
		}
		sealed = append(sealed, entry{i, p})
	}
	sort.Slice(sealed, func(a, b int) bool { return sealed[a].index < sealed[b].index })
	sort.Strings(log.Partial)
	for _, s := range sealed {
		recs, err := ReadFile(f, s.path)
		if err != nil {
			return nil, err
		}
		log.Records = append(log.Records, recs...)
		log.Files = append(log.Files, s.path)
	}
	return log, nil
}

// ReadFile reads the records of one sealed log file: a regular file of
// at most inputfile.Log bytes.
func ReadFile[T any](f *Format[T], path string) ([]T, error) {
	data, err := inputfile.ReadFile(path, inputfile.Log)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Log, err)
	}
	return Decode(f, data, path)
}
