//go:build unix

package ppo

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) the process has used, or
// false where it is not available.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
