package runlog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// RunName names a run as CleanRL does: <env>__<algo>__<seed>__<unix
// seconds>, e.g. "cartpole__ppo__1__1700000000". `drover train` uses it as
// the default run directory under runs/.
func RunName(env, algo string, seed uint64, t time.Time) string {
	return fmt.Sprintf("%s__%s__%d__%d", env, algo, seed, t.Unix())
}

// ErrRunDirNotEmpty is what CheckFreshDir returns for a directory that
// already holds files: a new run's event file, scalars.csv, curve and
// checkpoint would sit beside the old run's and TensorBoard would show
// both as one.
var ErrRunDirNotEmpty = errors.New("runlog: run directory is not empty")

// CheckFreshDir reports whether dir can hold a new run: it does not exist
// yet, or it is an empty directory. Otherwise the error wraps
// ErrRunDirNotEmpty (or says it is not a directory) and suggests the fix:
// another directory, or none for a fresh runs/<run name>, and --resume to
// continue from the checkpoint inside.
func CheckFreshDir(dir string) error {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("runlog: run directory: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("runlog: run directory %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("runlog: run directory %s is a file, not a directory", dir)
	}
	names, err := f.Readdirnames(1)
	if err != nil && err != io.EOF {
		return fmt.Errorf("runlog: run directory %s: %w", dir, err)
	}
	if len(names) > 0 {
		return fmt.Errorf("%w: %s holds %s and maybe more; pass a new --out (or none, for a fresh runs/<env>__<algo>__<seed>__<unix time>), remove it, or --resume %s to continue from its checkpoint into a new directory", ErrRunDirNotEmpty, dir, names[0], dir)
	}
	return nil
}
