// Package leakcheck fails a test that leaves goroutines running: servers,
// watchers and agents that a test starts must all have ended by the time
// the test and its cleanups are done.
//
// Call Check first in a test, so that its cleanup runs last (cleanups run
// last-in first-out), after the ones that stop what the test started:
//
//	func TestServer(t *testing.T) {
//		leakcheck.Check(t)
//		srv := start(t) // registers its own stop with t.Cleanup
//		...
//	}
//
// A test that stops things itself before it ends can check at that point
// with Wait and the count it took at its start.
package leakcheck
