package declog

import "github.com/drover-sched/drover/internal/pqlog"

// Log is what ReadDir found in a log directory.
type Log struct {
	// Records holds every record of the sealed files, in the order they
	// were appended.
	Records []Record
	// Files lists the sealed files read, in order.
	Files []string
	// Partial lists the unsealed files that were skipped (.tmp and .wal):
	// those a live Writer is writing, or those a crash left behind (the
	// next Writer on the directory recovers them). Their records are not
	// in Records.
	Partial []string
}

// ReadDir reads every sealed log file of dir in index order and returns
// their records in the order they were appended. Unsealed files are
// skipped and listed in Log.Partial; files with other names are ignored.
// A sealed file that cannot be read is an error naming it.
func ReadDir(dir string) (*Log, error) {
	l, err := pqlog.ReadDir(format, dir)
	if err != nil {
		return nil, err
	}
	return &Log{Records: l.Records, Files: l.Files, Partial: l.Partial}, nil
}

// ReadFile reads the records of one sealed log file.
func ReadFile(path string) ([]Record, error) { return pqlog.ReadFile(format, path) }
