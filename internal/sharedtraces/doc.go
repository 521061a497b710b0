// Package sharedtraces finds the public traces that tests and benchmarks
// read: ../shared/traces beside the repository root. The project never
// copies them in; a test that needs them skips itself where they are absent.
//
// # Usage
//
//	func TestReplay(t *testing.T) {
//		path := sharedtraces.Path(t, "philly", "pollux_philly.csv.gz")
//		...
//	}
package sharedtraces
