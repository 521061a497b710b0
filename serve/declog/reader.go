package declog

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Log is what ReadDir found in a log directory.
type Log struct {
	// Records holds every record of the sealed files, in the order they
	// were appended.
	Records []Record
	// Files lists the sealed files read, in order.
	Files []string
	// Partial lists the unsealed .tmp files that were skipped: the file a
	// live Writer is writing, or one a crash left behind. Their records
	// are not in Records.
	Partial []string
}

// ReadDir reads every sealed log file of dir in index order and returns
// their records in the order they were appended. Unsealed .tmp files are
// skipped and listed in Log.Partial; files with other names are ignored.
// A sealed file that cannot be read is an error naming it.
func ReadDir(dir string) (*Log, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("declog: %w", err)
	}
	type entry struct {
		index int
		name  string
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
		recs, err := ReadFile(s.name)
		if err != nil {
			return nil, err
		}
		log.Records = append(log.Records, recs...)
		log.Files = append(log.Files, s.name)
	}
	return log, nil
}

// ReadFile reads the records of one sealed log file.
func ReadFile(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("declog: %w", err)
	}
	return Decode(data, path)
}
