package mustjson

import (
	"errors"
	"strings"
	"testing"
)

type params struct {
	X float64 `json:"x"`
}

func (p params) Validate() error {
	if p.X < 0 {
		return errors.New("x < 0")
	}
	return nil
}

func TestDecode(t *testing.T) {
	if got := Decode[params]("p.json", []byte(`{"x": 2}`)); got.X != 2 {
		t.Errorf("got %+v", got)
	}
	for _, tt := range []struct{ data, want string }{
		{`{"x": -1}`, "p.json: x < 0"},
		{`{"x": 1, "y": 2}`, `p.json: json: unknown field "y"`},
		{`{"x": `, "p.json: unexpected EOF"},
		{`{"x": 1} {}`, "p.json: trailing data"},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), tt.want) {
					t.Errorf("%s: panic %v, want %q", tt.data, r, tt.want)
				}
			}()
			Decode[params]("p.json", []byte(tt.data))
		}()
	}
}
