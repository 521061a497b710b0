// Package longtest gates the tests that make test leaves to make
// test-long: refits of embedded models compared with the embedded files,
// regenerations of embedded data, and exhaustive equivalence runs. They
// took most of the race run's time (issue 31) and check what changes only
// when someone regenerates an embedded model or file, so they run when
// DROVER_LONG=1 (make test-long sets it, without the race detector), and
// make test runs a cheap version of each in their place.
//
// # Usage
//
// A test that is only long:
//
//	func TestFitReproducesDefault(t *testing.T) {
//		longtest.Skip(t, "refits the model on the whole trace")
//		...
//	}
//
// A test whose default run checks a sample of the cases:
//
//	func TestMatchesReference(t *testing.T) {
//		seeds := 20
//		if longtest.Enabled() {
//			seeds = 80
//		}
//		...
//	}
package longtest
