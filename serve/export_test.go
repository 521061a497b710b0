package serve

// SlowLiveSTRN makes k's stateful STRN run as a policy on a view instead
// of runLiveSTRN's fast path, the reference the fast path is checked
// against.
func SlowLiveSTRN(k *Core) { k.live.slowSTRN = true }
