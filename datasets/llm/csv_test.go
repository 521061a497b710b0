package llm

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tableRows reads every row of data through openTable, split by the
// table itself when plain is true, by encoding/csv otherwise: each
// record with its line and its fields' columns, or the error with its
// line, then the end (io.EOF) or the header's error.
func tableRows(data []byte, plain bool) []string {
	t, err := openTable(data, "x")
	if err != nil {
		return []string{"header: " + err.Error()}
	}
	if t.plain && !plain {
		t.plain = false // the csv.Reader stands after the header
	}
	if plain && !t.plain {
		return []string{"not plain"}
	}
	var out []string
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			return append(out, "EOF")
		}
		if err != nil {
			out = append(out, fmt.Sprintf("line %d: %v", line, err))
			continue
		}
		cols := make([]string, len(rec))
		for i := range rec {
			l, c := t.r.FieldPos(i)
			if t.plain {
				l, c = t.recLine, t.at[i]
			}
			cols[i] = fmt.Sprintf("%q@%d:%d", rec[i], l, c)
		}
		out = append(out, fmt.Sprintf("line %d: %v", line, cols))
	}
}

// TestTablePlain checks the table's own split of rows without quotes
// against encoding/csv's reading of the same data: records, lines,
// columns and field-count errors, on line endings (CRLF, a lone CR, a CR
// at the end of the data, none at the end), empty and blank lines,
// leading empty lines and a byte-order mark, and random rows.
func TestTablePlain(t *testing.T) {
	tests := []string{
		"a,b\n1,2\n3,4\n",
		"a,b\n1,2\n3,4",
		"a,b\r\n1,2\r\n3,4\r\n",
		"a,b\r\n1,2\r\n3,4\r",
		"a,b\n1,2\r\r\n3,4\r\r",
		"a,b\n1\r2,3\n\r\n\n4,5\n",
		"\n\r\n\na,b\n\n1,2\n",
		"\xef\xbb\xbfa,b\n1,2\n",
		"a,b\n 1 , 2 \n\t,\n,\n",
		"a,b\n1,2,3\n4\n\n5,6\n   \n",
		"a,b\n\r",
		"a,b\n\r\n",
		"a,b",
		"a\n\n\n",
		"a,b\né,ü\n\xff,\x00\n",
	}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("a1,,\n\n\r \té")
	for range 2000 {
		b := []byte("x,y,z\n")
		for range r.IntN(60) {
			b = append(b, alphabet[r.IntN(len(alphabet))])
		}
		tests = append(tests, string(b))
	}
	for _, data := range tests {
		want, got := tableRows([]byte(data), false), tableRows([]byte(data), true)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q: the plain split differs from encoding/csv's (-want,+got):\n%s", data, diff)
		}
	}
	if got := tableRows([]byte("a,b\n\"1\",2\n"), true); !cmp.Equal(got, []string{"not plain"}) {
		t.Errorf("data with a quote: %v, want encoding/csv to read it", got)
	}
}

// FuzzTablePlain: on any data without a double quote, the table's own
// split gives what encoding/csv gives.
func FuzzTablePlain(f *testing.F) {
	f.Add([]byte("a,b\r\n1,2\r\n\n3\r"))
	f.Add([]byte("\xef\xbb\xbf\n\nTIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.IndexByte(data, '"') >= 0 {
			t.Skip()
		}
		want, got := tableRows(data, false), tableRows(data, true)
		if _, err := openTable(data, "x"); err != nil {
			return // both the header's error
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q: the plain split differs from encoding/csv's (-want,+got):\n%s", data, diff)
		}
	})
}
