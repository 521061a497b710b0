package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// Bar reports progress towards a known total. It reads the wall clock,
// which is why it lives outside env/ and agents/.
type Bar struct {
	w        io.Writer
	label    string
	total    int
	tty      bool
	start    time.Time
	last     time.Time
	every    time.Duration
	done     int
	finished bool
	now      func() time.Time
}

// New returns a bar writing to w. It draws in place when w is a terminal and
// logs a line every 5 seconds otherwise.
func New(w io.Writer, label string, total int) *Bar {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	b := &Bar{w: w, label: label, total: total, tty: tty, now: time.Now}
	b.every = 5 * time.Second
	if tty {
		b.every = 100 * time.Millisecond
	}
	b.start = b.now()
	b.last = b.start
	return b
}

// Set records that done of total units are finished, redrawing or logging
// when enough time has passed since the last report.
func (b *Bar) Set(done int) {
	b.done = done
	if t := b.now(); t.Sub(b.last) >= b.every {
		b.last = t
		b.draw(false)
	}
}

// Finish draws the final state and ends the line.
func (b *Bar) Finish() {
	if b.finished {
		return
	}
	b.finished = true
	b.draw(true)
}

func (b *Bar) draw(final bool) {
	frac := 0.0
	if b.total > 0 {
		frac = float64(b.done) / float64(b.total)
	}
	el := b.now().Sub(b.start).Round(100 * time.Millisecond)
	if !b.tty {
		if final || b.done < b.total {
			fmt.Fprintf(b.w, "%s: %d/%d (%.0f%%) in %s\n", b.label, b.done, b.total, 100*frac, el)
		}
		return
	}
	const width = 30
	n := int(frac * width)
	eta := ""
	if frac > 0 && !final {
		left := time.Duration(float64(b.now().Sub(b.start)) * (1 - frac) / frac).Round(time.Second)
		eta = " eta " + left.String()
	}
	fmt.Fprintf(b.w, "\r%s [%s%s] %d/%d %s%s\x1b[K", b.label, strings.Repeat("=", n), strings.Repeat(" ", width-n), b.done, b.total, el, eta)
	if final {
		fmt.Fprintln(b.w)
	}
}
