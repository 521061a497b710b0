package telemlog

import (
	"cmp"
	"slices"

	"github.com/drover-sched/drover/internal/pqlog"
)

// Log is what ReadDir found in a log directory.
type Log struct {
	// Samples holds every sample of the sealed files, sorted by time, then
	// node id (samples equal in both keep their file order).
	Samples []Sample
	// Files lists the sealed files read, in index order.
	Files []string
	// Partial lists the unsealed files that were skipped (.tmp and .wal):
	// those a live Writer is writing, or those a crash left behind (the
	// next Writer on the directory recovers them). Their samples are not
	// in Samples.
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
// and returns their samples sorted by time, then node. Unsealed files
// (.tmp and .wal) are skipped and listed in Log.Partial; files with other
// names (a decision log's among them) are ignored. A sealed file that
// cannot be read is an error naming it (a *FormatError with its path).
func ReadDir(dir string) (*Log, error) {
	l, err := pqlog.ReadDir(format, dir)
	if err != nil {
		return nil, err
	}
	log := &Log{Samples: l.Records, Files: l.Files, Partial: l.Partial}
	slices.SortStableFunc(log.Samples, func(a, b Sample) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Node, b.Node)
	})
	return log, nil
}

// ReadFile reads the samples of one sealed log file, in file order.
func ReadFile(path string) ([]Sample, error) { return pqlog.ReadFile(format, path) }
