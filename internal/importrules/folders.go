package importrules

import (
	"slices"
	"strings"
)

// Folders returns the folder-level graph of g: for each top-level folder
// of Module (env, policies, serve, ...), the other top-level folders its
// packages import directly. Packages outside Module are left out.
func Folders(g Graph) map[string][]string {
	folder := func(p string) (string, bool) {
		rel, ok := strings.CutPrefix(p, Module+"/")
		if !ok {
			return "", false
		}
		top, _, _ := strings.Cut(rel, "/")
		return top, true
	}
	f := map[string][]string{}
	for p, imports := range g {
		a, ok := folder(p)
		if !ok {
			continue
		}
		if _, seen := f[a]; !seen {
			f[a] = nil
		}
		for _, q := range imports {
			if b, ok := folder(q); ok && b != a && !slices.Contains(f[a], b) {
				f[a] = append(f[a], b)
			}
		}
	}
	for _, to := range f {
		slices.Sort(to)
	}
	return f
}

// FolderCycle returns a cycle of the folder-level graph f (Folders), the
// first folder repeated at the end ("internal", "serve", "datasets",
// "internal"), or nil when f has none. Of several cycles it returns the
// one found first in sorted order, so the answer is the same from run to
// run.
func FolderCycle(f map[string][]string) []string {
	names := make([]string, 0, len(f))
	for a := range f {
		names = append(names, a)
	}
	slices.Sort(names)
	const (
		unseen = iota
		open   // on the current path
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(a string) []string
	visit = func(a string) []string {
		state[a] = open
		path = append(path, a)
		for _, b := range f[a] {
			switch state[b] {
			case open:
				i := slices.Index(path, b)
				return append(slices.Clone(path[i:]), b)
			case unseen:
				if c := visit(b); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[a] = done
		return nil
	}
	for _, a := range names {
		if state[a] == unseen {
			if c := visit(a); c != nil {
				return c
			}
		}
	}
	return nil
}
