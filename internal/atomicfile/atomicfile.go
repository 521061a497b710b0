package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Mode is the permission a written file gets (before the umask of
// whoever later copies it): readable by all, writable by its owner.
const Mode os.FileMode = 0o644

// Write writes what write produces to path atomically. On any error
// path is left as it was and the temporary file is removed. The error
// is write's own error, or the file system's cause without the temporary
// file's name.
func Write(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".drover-tmp-*")
	if err != nil {
		return pathless(err)
	}
	defer os.Remove(f.Name()) // fails harmlessly once renamed
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	err = f.Chmod(Mode)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	return pathless(err)
}

// WriteBytes writes data to path atomically (Write).
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// pathless is err without the path an *os.PathError or *os.LinkError
// carries (the temporary file's name, or the target's, which the caller
// names itself).
func pathless(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
