package procfs

import (
	"fmt"
	"strconv"
	"strings"
)

// lineErr formats a data error the way compilers do, "proc/stat:3: msg",
// so that an agent's log names the file and line that did not parse.
func lineErr(name string, line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
}

// splitLines returns data's lines without their newlines; line i+1 of the
// file is element i. A final newline does not add an empty line.
func splitLines(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// parseCount parses a non-negative decimal counter.
func parseCount(s string) (uint64, bool) {
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}
