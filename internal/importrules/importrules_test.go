package importrules

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// moduleGraph loads the module's import graph once for the tests that
// need it.
var moduleGraph = sync.OnceValues(func() (Graph, error) {
	return Load(context.Background(), Module+"/...")
})

// TestLayers is the import-rule check: it fails on every violation of
// an enforced rule, naming the importer, the forbidden package and the
// path between them, and logs those of the pending rules.
func TestLayers(t *testing.T) {
	g, err := moduleGraph()
	if err != nil {
		t.Fatal(err)
	}
	pending := map[string]int{}
	for _, v := range Check(g, Rules) {
		if v.Rule.Pending != "" {
			pending[v.Rule.Reason]++
			t.Log(v)
			continue
		}
		t.Error(v)
	}
	for _, r := range Rules {
		if r.Pending != "" && pending[r.Reason] == 0 {
			t.Logf("pending rule %q (%s) now holds: clear its Pending field", r.Reason, r.Pending)
		}
	}
}

// TestRulesMatchPackages wants every pattern of every rule to match a
// package of the module's graph, so that a misspelt pattern cannot leave
// a rule checking nothing.
func TestRulesMatchPackages(t *testing.T) {
	g, err := moduleGraph()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules {
		for _, pat := range append(append(append([]string(nil), r.Packages...), r.Except...), r.Forbid...) {
			found := false
			for p := range g {
				if Match(pat, p) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("rule %q: pattern %q matches no package", r.Reason, pat)
			}
		}
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"./env/...", Module + "/env", true},
		{"./env/...", Module + "/env/trace", true},
		{"./env/...", Module + "/envtest", false},
		{"./env", Module + "/env/trace", false},
		{"./env", Module + "/env", true},
		{"./...", Module, true},
		{"./...", Module + "/cmd/drover", true},
		{"./...", "gonum.org/v1/plot", false},
		{"gonum.org/v1/plot/...", "gonum.org/v1/plot/vg/draw", true},
		{"gonum.org/v1/plot/...", "gonum.org/v1/plotter", false},
		{"env/...", Module + "/env", false}, // not module-relative without ./
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.path); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

// TestCheck feeds Check made-up graphs and wants the violations a reader
// finds by hand, so that the check can fail.
func TestCheck(t *testing.T) {
	m := func(p string) string { return Module + "/" + p }
	envRule := Rule{Packages: []string{"./env/..."}, Forbid: []string{"./policies/..."}, Reason: "env below policies"}
	cmdRule := Rule{Packages: []string{"./..."}, Except: []string{"./cmd/..."}, Forbid: []string{"./cmd/..."}, Reason: "nothing imports cmd"}
	later := Rule{Packages: []string{"./serve/..."}, Forbid: []string{"./train/..."}, Reason: "serve links no trainer", Pending: "some issue"}
	type found struct {
		Importer, Forbidden, Pending string
		Path                         []string
	}
	tests := []struct {
		name  string
		g     Graph
		rules []Rule
		want  []found
	}{
		{
			name:  "clean",
			g:     Graph{m("policies"): {m("env")}, m("env"): {"fmt"}, "fmt": nil},
			rules: []Rule{envRule},
		},
		{
			name:  "direct import",
			g:     Graph{m("env/trace"): {m("env"), m("policies")}, m("env"): nil, m("policies"): {m("env")}},
			rules: []Rule{envRule},
			want:  []found{{Importer: m("env/trace"), Forbidden: m("policies"), Path: []string{m("env/trace"), m("policies")}}},
		},
		{
			// env/trace reaches policies/firstfit through datasets (three
			// steps) and through x (two): the shortest path is reported.
			// policies, reached only through firstfit, is firstfit's
			// business; env itself is clean.
			name: "through other packages, shortest path",
			g: Graph{
				m("env/trace"):         {m("datasets"), m("x")},
				m("datasets"):          {m("y")},
				m("y"):                 {m("policies/firstfit")},
				m("x"):                 {m("policies/firstfit")},
				m("policies/firstfit"): {m("policies")},
				m("policies"):          {m("env")},
				m("env"):               nil,
			},
			rules: []Rule{envRule},
			want: []found{
				{Importer: m("env/trace"), Forbidden: m("policies/firstfit"), Path: []string{m("env/trace"), m("x"), m("policies/firstfit")}},
			},
		},
		{
			// env/sched reaches policies only through env/placement,
			// which the rule governs too: only env/placement is reported,
			// but through a package of its own layer env/live is.
			name: "the crossing arrow, once",
			g: Graph{
				m("env/sched"):     {m("env/placement")},
				m("env/placement"): {m("policies")},
				m("env/live"):      {m("z")},
				m("z"):             {m("policies")},
				m("policies"):      nil,
			},
			rules: []Rule{envRule},
			want: []found{
				{Importer: m("env/live"), Forbidden: m("policies"), Path: []string{m("env/live"), m("z"), m("policies")}},
				{Importer: m("env/placement"), Forbidden: m("policies"), Path: []string{m("env/placement"), m("policies")}},
			},
		},
		{
			name:  "except exempts, the rest is governed",
			g:     Graph{m("cmd/drover"): {m("cmd/internal")}, m("cmd/internal"): nil, m("serve"): {m("cmd/internal")}},
			rules: []Rule{cmdRule},
			want:  []found{{Importer: m("serve"), Forbidden: m("cmd/internal"), Path: []string{m("serve"), m("cmd/internal")}}},
		},
		{
			name:  "pending rule reported with its work",
			g:     Graph{m("serve"): {m("train")}, m("train"): nil},
			rules: []Rule{envRule, later},
			want:  []found{{Importer: m("serve"), Forbidden: m("train"), Pending: "some issue", Path: []string{m("serve"), m("train")}}},
		},
		{
			name:  "a cycle does not loop",
			g:     Graph{m("env"): {m("env/a")}, m("env/a"): {m("env")}},
			rules: []Rule{envRule},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []found
			for _, v := range Check(tt.g, tt.rules) {
				got = append(got, found{v.Importer, v.Forbidden, v.Rule.Pending, v.Path})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestViolationString wants the message to name the importer, the
// forbidden package, the reason and the path, without the module prefix.
func TestViolationString(t *testing.T) {
	m := func(p string) string { return Module + "/" + p }
	v := Violation{
		Rule:      Rule{Reason: "env below policies", Pending: "issue 31"},
		Importer:  m("env/trace"),
		Forbidden: m("policies/firstfit"),
		Path:      []string{m("env/trace"), m("x"), m("policies/firstfit")},
	}
	want := "env/trace must not depend on policies/firstfit (env below policies): env/trace -> x -> policies/firstfit [pending: issue 31]"
	if got := v.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if strings.Contains(v.String(), Module) {
		t.Error("message keeps the module path")
	}
}
