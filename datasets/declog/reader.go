package declog

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/drover-sched/drover/internal/inputfile"
	"github.com/drover-sched/drover/internal/pqlog"
)

// Log is what ReadDir found in a log directory.
type Log struct {
	// Records holds every record of the sealed files, in the order they
	// were appended, then (ReadDirTail only) those of the unsealed tail.
	Records []Record
	// Files lists the sealed files read, in order.
	Files []string
	// Partial lists the unsealed files that were skipped (.tmp and .wal):
	// those a live Writer is writing, or those a crash left behind (the
	// next Writer on the directory recovers them). ReadDir leaves their
	// records out; ReadDirTail reads those of the .wal files.
	Partial []string
	// Tail counts the records ReadDirTail read from the unsealed files'
	// write-ahead logs (the last len(Tail) of Records).
	Tail int
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

// ReadDirTail reads dir as ReadDir does, then the records of its unsealed
// files' write-ahead logs: what a live Writer has appended to its current
// file so far (all but the records of its last WAL delay, and a frame
// being written as the file is read), or what a crash left for the next
// Writer to recover. A file sealed while it is read is read sealed.
// Log.Tail counts the tail's records.
func ReadDirTail(dir string) (*Log, error) {
	for try := 0; ; try++ {
		l, err := ReadDir(dir)
		if err != nil {
			return nil, err
		}
		vanished := false
		for _, p := range l.Partial {
			if !strings.HasSuffix(p, WALSuffix) || slices.Contains(l.Files, strings.TrimSuffix(p, WALSuffix)+FileSuffix) {
				continue // a .tmp, or a WAL whose file is sealed already
			}
			data, err := inputfile.ReadFile(p, inputfile.Log)
			if errors.Is(err, fs.ErrNotExist) {
				vanished = true // sealed since the listing: list again
				break
			}
			if err != nil {
				return nil, err
			}
			recs, _, err := pqlog.ReadFrames(format, data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			l.Records = append(l.Records, recs...)
			l.Tail += len(recs)
		}
		if !vanished || try == 2 {
			return l, nil
		}
	}
}

// ReadFile reads the records of one sealed log file.
func ReadFile(path string) ([]Record, error) { return pqlog.ReadFile(format, path) }
