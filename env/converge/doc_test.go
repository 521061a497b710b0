package converge

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the parameter table in doc.go from the fit")

const docTableHeader = "// # Fitted parameters"

// docTable returns doc.go split around its generated table: the lines up
// to and including the table's introduction, the table, and the rest.
func docTable(t *testing.T, doc string) (head, table, tail string) {
	t.Helper()
	i := strings.Index(doc, docTableHeader)
	if i < 0 {
		t.Fatalf("doc.go has no %q section", docTableHeader)
	}
	lines := strings.SplitAfter(doc[i:], "\n")
	n := 0
	// Skip to the first table line (a tab-indented comment line).
	for n < len(lines) && !strings.HasPrefix(lines[n], "//\t") {
		n++
	}
	start := n
	// The table runs to the next section header.
	for n < len(lines) && !strings.HasPrefix(lines[n], "// #") {
		n++
	}
	head = doc[:i] + strings.Join(lines[:start], "")
	table = strings.Join(lines[start:n], "")
	tail = strings.Join(lines[n:], "")
	return head, table, tail
}

// commentTable renders Model.Table as the doc comment's indented block.
func commentTable(m *Model) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(m.Table(), "\n"), "\n") {
		if l == "" {
			b.WriteString("//\n")
			continue
		}
		b.WriteString("//\t" + strings.TrimRight(l, " ") + "\n")
	}
	b.WriteString("//\n")
	return b.String()
}

// The parameter table in doc.go is the fit's: it cannot drift.
func TestDocTable(t *testing.T) {
	raw, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	head, table, tail := docTable(t, string(raw))
	want := commentTable(Default())
	if table == want {
		return
	}
	if *rewrite {
		if err := os.WriteFile("doc.go", []byte(head+want+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("doc.go's parameter table differs from the fit; rerun with -rewrite.\ngot:\n%s\nwant:\n%s", table, want)
}
