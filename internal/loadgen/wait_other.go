//go:build !linux

package loadgen

import "time"

// waiter sleeps with time.Sleep (the timerfd waiter is Linux only).
type waiter struct{}

func newWaiter() (*waiter, error) { return &waiter{}, nil }

func (*waiter) wait(d time.Duration) error {
	time.Sleep(d)
	return nil
}

func (*waiter) close() {}
