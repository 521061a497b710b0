// Package inputfile is how Drover reads a file a user names: a trace
// (drover sim --workload, trace inspect), a node list (sim --cluster), a
// config (train --config), a request (place -request), a checkpoint's
// meta.json and weights, a decision or telemetry log segment, a forecast
// model. Every such read goes through ReadFile or Open with a limit for
// its kind, so that a path of /dev/zero, a FIFO or a mistaken 40 GB file
// is refused at once, naming the path, instead of reading until the
// machine is out of memory (issue 32, item 7).
//
// The rules: the path must name a regular file (after symbolic links):
// a device, a FIFO, a socket or a directory is refused before it is
// opened, since opening a FIFO blocks until a writer comes and reading a
// device may never end. A file larger than the limit is refused with its
// size; one that grows past the limit while it is read fails at
// limit+1 bytes, never truncated silently. Streams inside a file (a
// gzip-compressed trace) are bounded the same way by NewLimitReader.
//
// TrimBOM drops a leading UTF-8 byte-order mark, which editors on Windows
// write and which encoding/csv and encoding/json do not skip; every text
// decoder applies it (ReadText reads and trims in one call).
//
// The limits are constants by kind (Trace, Log, Document, Weights,
// Secret), generous for real inputs: the limit bounds what one mistake
// costs, it is not a quota.
//
// # Usage
//
//	data, err := inputfile.ReadFile(path, inputfile.Trace)
//	if err != nil {
//		return fmt.Errorf("read trace: %w", err) // e.g. "/dev/zero: not a regular file (a character device)"
//	}
//	w, err := datasets.Decode(datasets.FormatAuto, data, datasets.Options{Source: path})
package inputfile
