package extender

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzExtenderArgs checks the streaming decoder of the extender's
// request against encoding/json: a body it accepts, json.Unmarshal
// accepts and decodes to the same ExtenderArgs (compared as JSON); a body
// it refuses, json.Unmarshal refuses too, unless it was refused for
// holding more than maxNodes nodes or names.
func FuzzExtenderArgs(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `[1,2]`, `3`, `"x"`, `{} {}`, `{"Pod": `, `{"Pod":null,"Nodes":null,"NodeNames":null}`,
		`{"Pod":{"metadata":{"name":"w-0","namespace":"ml","annotations":{"drover.io/job-id":"j"}},"spec":{"containers":[{"name":"t","resources":{"limits":{"nvidia.com/gpu":"2"}}}]}},` +
			`"Nodes":{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"},"status":{"allocatable":{"nvidia.com/gpu":"4"}}},{"metadata":{"name":"b"}}]}}`,
		`{"pod":{},"nodenames":["a","b","c","d"]}`,
		`{"Pod":{},"Nodes":{"items":[{},{},{},{}]}}`,
		`{"Pod":{},"Nodes":{"items":[{"metadata":{"name":3}}]}}`,
		`{"Pod":{},"Nodes":{"items":null,"Items":[{}]},"x":[{"y":[1,{}]},null,true]}`,
		`{"Pod":{},"Pod":{"metadata":{"name":"b"}},"NodeNames":["a"],"NodeNames":[]}`,
		`{"Pod":{},"Nodes":{"items":[{"metadata":{"name":"a"}}]},"Nodes":{"items":[{}]}}`,
		`{"Pod":{},"NodeNames":[null,"a"]}`,
		"{\"Pod\":{},\"NodeNames\":[\"\xff\"]}",
		`{"ſPod":1,"Pod":{"metadata":{"name":"\u212a"}}}`,
	} {
		f.Add([]byte(s))
	}
	const maxNodes = 3
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := decodeArgs(bytes.NewReader(body), maxNodes)
		want := &ExtenderArgs{}
		werr := json.Unmarshal(body, want)
		if err != nil {
			var tm *tooManyError
			if werr == nil && !errors.As(err, &tm) {
				t.Fatalf("refused %q (%v), which json.Unmarshal accepts", body, err)
			}
			return
		}
		if werr != nil {
			t.Fatalf("accepted %q, which json.Unmarshal refuses: %v", body, werr)
		}
		gb, err1 := json.Marshal(got)
		wb, err2 := json.Marshal(want)
		if err1 != nil || err2 != nil {
			return // e.g. a quantity that decodes but does not encode: nothing to compare
		}
		if !bytes.Equal(gb, wb) && !duplicateKeys(body) {
			t.Fatalf("%q decoded as\n%s\njson.Unmarshal:\n%s", body, gb, wb)
		}
	})
}

// duplicateKeys reports whether body may name one of the streamed
// arrays twice, where encoding/json reuses the first array's elements
// and decodeArgs starts afresh.
func duplicateKeys(body []byte) bool {
	s := strings.ToLower(string(body))
	return strings.Count(s, `"items"`) > 1 || strings.Count(s, `"nodes"`) > 1
}
