package env

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// EventKind says what happened to a job.
type EventKind uint8

// The event kinds.
const (
	// Arrive: the job was submitted.
	Arrive EventKind = iota
	// Start: the job got an allocation (first start or restart).
	Start
	// Preempt: the job lost its allocation before finishing.
	Preempt
	// Finish: the job reached its target.
	Finish
)

var kindNames = [...]string{"arrive", "start", "preempt", "finish"}

// String returns the EventKind's name as the command line and logs spell it.
func (k EventKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is one entry of the simulator's event log.
type Event struct {
	// Time is the simulated time in seconds.
	Time float64
	// Kind says what happened.
	Kind EventKind
	// Job is the job's ID.
	Job int
	// Nodes is the new allocation of a Start event (a node per worker).
	Nodes []int
}

// AppendText appends the event as one line of text (without a newline):
// time with millisecond precision, kind, job name, and for starts the
// placement as node:GPUs pairs.
func (e Event) AppendText(b []byte, jobs []Job) []byte {
	b = strconv.AppendFloat(b, e.Time, 'f', 3, 64)
	b = append(b, ' ')
	b = append(b, e.Kind.String()...)
	b = append(b, ' ')
	if e.Job >= 0 && e.Job < len(jobs) {
		b = append(b, jobs[e.Job].Spec.Name...)
	} else {
		b = strconv.AppendInt(b, int64(e.Job), 10)
	}
	for i := 0; i < len(e.Nodes); {
		k := i
		for k < len(e.Nodes) && e.Nodes[k] == e.Nodes[i] {
			k++
		}
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(e.Nodes[i]), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(k-i), 10)
		i = k
	}
	return b
}

// WriteLog writes the event log as text, one event per line.
func WriteLog(w io.Writer, events []Event, jobs []Job) error {
	var b []byte
	for _, e := range events {
		b = e.AppendText(b[:0], jobs)
		b = append(b, '\n')
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// LogString returns the event log as text.
func LogString(events []Event, jobs []Job) string {
	var sb strings.Builder
	_ = WriteLog(&sb, events, jobs)
	return sb.String()
}
