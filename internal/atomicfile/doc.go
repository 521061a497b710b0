// Package atomicfile writes a file so that readers see the old content or
// the new, never a half-written file: the bytes go to a temporary file
// beside the target, are synced, given mode 0644 (os.CreateTemp makes
// 0600 files, which other users and tools then cannot read) and renamed
// over the target.
//
// It is the one atomic writer of drover's outputs (simulation results,
// checkpoints, run configs, figures); each caller wraps the error with
// its own context. Errors never name the temporary file: a caller names
// the path it was asked to write.
//
// # Usage
//
//	err := atomicfile.Write("jobs.csv", func(w io.Writer) error {
//		_, err := io.WriteString(w, "id,jct\n")
//		return err
//	})
//	if err != nil {
//		return fmt.Errorf("write jobs.csv: %w", err)
//	}
package atomicfile
