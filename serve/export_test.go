package serve

// SlowLiveSTRN makes k's stateful STRN run as a policy on a view instead
// of runLiveSTRN's fast path, the reference the fast path is checked
// against.
func SlowLiveSTRN(k *Core) { k.live.slowSTRN = true }

// SlowLiveSAS makes k's stateful SAS get every running job of the store in
// its view's Active at every request, the reference the aggregate
// (runningAgg, sas.Occupancy) is checked against.
func SlowLiveSAS(k *Core) { k.live.slowSAS = true }
