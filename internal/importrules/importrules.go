package importrules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
)

// Module is the module path that module-relative patterns ("./env/...")
// stand under.
const Module = "github.com/drover-sched/drover"

// Rule forbids a set of packages to depend on another.
type Rule struct {
	// Packages are the patterns of the packages the rule governs. A
	// pattern is an import path, or ./path for one inside Module; a final
	// "/..." also matches every package below the path, as with the go
	// command ("./env/..." is env and env/trace, not envtest).
	Packages []string
	// Except are patterns of packages among Packages that the rule does
	// not govern.
	Except []string
	// Forbid are the patterns of the packages that no governed package may
	// depend on, directly or through others.
	Forbid []string
	// Reason says which part of the layering the rule keeps; it is printed
	// with each violation.
	Reason string
	// Pending, when set, names the work that will make the rule hold
	// (e.g. "issue 31, serve layers"): its violations are reported
	// without failing the check. That work clears it when it lands.
	Pending string
}

// Graph is a package import graph: each package's import path mapped to
// the import paths it imports directly.
type Graph map[string][]string

// Violation is one forbidden dependency: Importer, governed by Rule,
// depends on Forbidden through Path.
type Violation struct {
	// Rule is the rule broken.
	Rule Rule
	// Importer is the governed package and Forbidden the package it must
	// not depend on.
	Importer, Forbidden string
	// Path is a shortest chain of imports from Importer to Forbidden,
	// both included, through packages the rule neither governs nor
	// forbids (see Check).
	Path []string
}

// String describes v with module paths shortened, e.g.
// "env/trace must not depend on policies/firstfit (reason): env/trace ->
// env/x -> policies/firstfit", and the pending work if any.
func (v Violation) String() string {
	path := make([]string, len(v.Path))
	for i, p := range v.Path {
		path[i] = short(p)
	}
	s := fmt.Sprintf("%s must not depend on %s (%s): %s", short(v.Importer), short(v.Forbidden), v.Rule.Reason, strings.Join(path, " -> "))
	if v.Rule.Pending != "" {
		s += " [pending: " + v.Rule.Pending + "]"
	}
	return s
}

// short trims Module from an import path.
func short(p string) string {
	if s, ok := strings.CutPrefix(p, Module+"/"); ok {
		return s
	}
	return p
}

// Match reports whether import path p matches pattern (see
// Rule.Packages).
func Match(pattern, p string) bool {
	if rel, ok := strings.CutPrefix(pattern, "./"); ok {
		pattern = Module + "/" + rel
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

// matchAny reports whether p matches one of patterns.
func matchAny(patterns []string, p string) bool {
	return slices.ContainsFunc(patterns, func(pat string) bool { return Match(pat, p) })
}

// Check returns the violations of rules in g: for each package of g that
// a rule governs, each package matching the rule's Forbid that it reaches
// through packages the rule neither governs nor forbids, with a shortest
// such path. These are the arrows that cross the layer: a package that
// depends on a forbidden one only through another governed package (serve/
// extender through serve) or only through another forbidden one (train's
// own imports) is left to that package's report, so Check finds a
// violation exactly when some governed package depends on a forbidden one,
// and each once. Violations come in the order of g's sorted import paths,
// then of rules, then of the forbidden packages' paths.
func Check(g Graph, rules []Rule) []Violation {
	pkgs := make([]string, 0, len(g))
	for p := range g {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	governs := func(r Rule, p string) bool { return matchAny(r.Packages, p) && !matchAny(r.Except, p) }
	var vs []Violation
	for _, p := range pkgs {
		for _, r := range rules {
			if !governs(r, p) {
				continue
			}
			parent := reach(g, p, func(x string) bool { return governs(r, x) || matchAny(r.Forbid, x) })
			var hits []string
			for q := range parent {
				if q != p && matchAny(r.Forbid, q) {
					hits = append(hits, q)
				}
			}
			slices.Sort(hits)
			for _, q := range hits {
				path := []string{q}
				for x := q; x != p; {
					x = parent[x]
					path = append(path, x)
				}
				slices.Reverse(path)
				vs = append(vs, Violation{Rule: r, Importer: p, Forbidden: q, Path: path})
			}
		}
	}
	return vs
}

// reach runs a breadth-first search of g from p that does not go on from
// the packages (other than p) for which stop is true. It returns each
// reached package's predecessor on a shortest path from p.
func reach(g Graph, p string, stop func(string) bool) map[string]string {
	parent := map[string]string{p: ""}
	queue := []string{p}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if x != p && stop(x) {
			continue
		}
		for _, y := range g[x] {
			if _, seen := parent[y]; !seen {
				parent[y] = x
				queue = append(queue, y)
			}
		}
	}
	return parent
}

// Load returns the import graph of the packages that patterns name (go
// command patterns, e.g. Module+"/...") and of everything they depend on,
// as go list -deps reports it under the default build tags, tests
// excluded. It runs the go command found in PATH (go test puts its own
// first), in the current directory.
func Load(ctx context.Context, patterns ...string) (Graph, error) {
	args := append([]string{"list", "-deps", "-json=ImportPath,Imports"}, patterns...)
	cmd := exec.CommandContext(ctx, "go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	g := Graph{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		g[p.ImportPath] = p.Imports
	}
	return g, nil
}
