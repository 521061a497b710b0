//go:build linux

package loadgen

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// waiter sleeps with microsecond precision. Go's time.Sleep wakes an
// otherwise idle process up to a millisecond late on Linux (its network
// poller waits in whole milliseconds), which would add most of a
// millisecond to every latency measured at low rates; a timerfd read
// through the poller wakes within tens of microseconds.
type waiter struct {
	fd  int
	f   *os.File // the timerfd, non-blocking, so reads park the goroutine
	buf [8]byte
}

func newWaiter() (*waiter, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("timerfd_create", err)
	}
	return &waiter{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}, nil
}

// wait sleeps for d (> 0).
func (w *waiter) wait(d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(int64(d), 1))}
	if err := unix.TimerfdSettime(w.fd, 0, &spec, nil); err != nil {
		return os.NewSyscallError("timerfd_settime", err)
	}
	_, err := w.f.Read(w.buf[:])
	return err
}

func (w *waiter) close() { w.f.Close() }
