// Package progress shows how far long work has got: a bar redrawn in place
// on a terminal, or a log line every few seconds otherwise (CI logs, pipes).
//
// # Usage
//
//	bar := progress.New(os.Stderr, "sim", total)
//	for ... { bar.Set(done) }
//	bar.Finish()
package progress
