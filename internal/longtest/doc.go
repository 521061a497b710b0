// Package longtest gates the tests that make test leaves to make
// test-long: refits of embedded models compared with the embedded files,
// regenerations of embedded data, exhaustive equivalence runs, training
// runs long enough to learn, and end-to-end runs on the wall clock. They
// took most of the race run's time (issue 31), and the refits check what
// changes only when someone regenerates an embedded model or file, so
// they run when DROVER_LONG=1 (make test-long sets it, without the race
// detector), and make test runs a cheap version of each where one is
// cheap.
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
