package pqlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Recovery is what a new Writer found of one unsealed file in its
// directory.
type Recovery struct {
	// File is the sealed file written from the write-ahead log, or, when
	// nothing could be recovered, the unsealed file left in place.
	File string
	// Records is how many records were recovered into File.
	Records int
	// LostBytes is how many bytes could not be recovered: a write-ahead
	// log's torn or corrupt tail (the records a killed process was
	// writing), or a whole unreadable log, or a whole .tmp file without a
	// write-ahead log (a writer from before the log had one).
	LostBytes int64
	// Lost names the file whose bytes were lost and says why; empty when
	// nothing was.
	Lost string
}

// String describes the recovery in one line.
func (r Recovery) String() string {
	s := fmt.Sprintf("%s: %d records recovered", r.File, r.Records)
	if r.LostBytes > 0 {
		s += fmt.Sprintf(", %d bytes lost (%s)", r.LostBytes, r.Lost)
	}
	return s
}

// recoverDir seals what earlier writers left unsealed in dir and returns
// what it did and the index after the highest in dir. For each file index
// with a write-ahead log: when the sealed file exists (a crash after the
// seal, before the log's removal) the log is removed; otherwise its
// complete frames become the sealed file (rowGroup records per row group,
// written to the .tmp, fsynced, renamed, the directory fsynced), then the
// log and the .tmp are removed. A .tmp without a log, and a log whose
// header is not this format's, cannot be read: they stay in place and are
// reported with their size. Sealed files are never touched.
func recoverDir[T any](f *Format[T], dir string, rowGroup int) ([]Recovery, int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", f.Log, err)
	}
	type files struct{ sealed, tmp, wal bool }
	byIndex := map[int]*files{}
	next := 1
	for _, e := range ents {
		i, kind, ok := f.parseName(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		next = max(next, i+1)
		fs := byIndex[i]
		if fs == nil {
			fs = &files{}
			byIndex[i] = fs
		}
		switch kind {
		case kindSealed:
			fs.sealed = true
		case kindTmp:
			fs.tmp = true
		case kindWAL:
			fs.wal = true
		}
	}
	var idx []int
	for i := range byIndex {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var out []Recovery
	for _, i := range idx {
		fs := byIndex[i]
		sealed := filepath.Join(dir, f.FileName(i))
		tmp := sealed + TmpSuffix
		wal := filepath.Join(dir, f.walName(i))
		switch {
		case fs.wal && fs.sealed:
			if err := os.Remove(wal); err != nil {
				return nil, 0, fmt.Errorf("%s: %w", f.Log, err)
			}
		case fs.wal:
			r, err := recoverWAL(f, wal, tmp, sealed, rowGroup)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, r)
		case fs.tmp && !fs.sealed:
			st, err := os.Stat(tmp)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %w", f.Log, err)
			}
			out = append(out, Recovery{File: tmp, LostBytes: st.Size(), Lost: tmp + ": unsealed, without a write-ahead log"})
		}
	}
	if len(out) > 0 {
		if err := syncDir(f.Log, dir); err != nil {
			return nil, 0, err
		}
	}
	return out, next, nil
}

// recoverWAL turns one write-ahead log into the sealed file.
func recoverWAL[T any](f *Format[T], wal, tmp, sealed string, rowGroup int) (Recovery, error) {
	data, err := os.ReadFile(wal)
	if err != nil {
		return Recovery{}, fmt.Errorf("%s: %w", f.Log, err)
	}
	recs, lost, err := ReadFrames(f, data)
	if errors.Is(err, ErrWALHeader) {
		return Recovery{File: wal, LostBytes: int64(lost), Lost: fmt.Sprintf("%s: %v", wal, err)}, nil
	}
	r := Recovery{File: sealed, Records: len(recs), LostBytes: int64(lost)}
	if lost > 0 {
		r.Lost = fmt.Sprintf("%s: torn or corrupt tail at byte %d", wal, len(data)-lost)
	}
	if len(recs) == 0 {
		r.File = wal
	} else {
		var buf bytes.Buffer
		if err := f.encode(&buf, recs, rowGroup); err != nil {
			return Recovery{}, fmt.Errorf("%s: recover %s: %w", f.Log, wal, err)
		}
		if err := writeSynced(tmp, buf.Bytes()); err != nil {
			return Recovery{}, fmt.Errorf("%s: recover %s: %w", f.Log, wal, err)
		}
		if err := os.Rename(tmp, sealed); err != nil {
			return Recovery{}, fmt.Errorf("%s: %w", f.Log, err)
		}
		if err := syncDir(f.Log, filepath.Dir(sealed)); err != nil {
			return Recovery{}, err
		}
	}
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return Recovery{}, fmt.Errorf("%s: %w", f.Log, err)
	}
	if err := os.Remove(wal); err != nil {
		return Recovery{}, fmt.Errorf("%s: %w", f.Log, err)
	}
	return r, nil
}

// writeSynced replaces path's contents with data and fsyncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
