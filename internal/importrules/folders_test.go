package importrules

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestNoFolderCycle: no top-level folder of the module (env, policies,
// agents, train, serve, datasets, checkpoints, internal, ...) depends on
// itself through the others, tests excluded. A package-level cycle is a
// compile error; a folder-level one is the layering gone in a circle
// (serve -> train -> serve/declog was one).
func TestNoFolderCycle(t *testing.T) {
	g, err := moduleGraph()
	if err != nil {
		t.Fatal(err)
	}
	if c := FolderCycle(Folders(g)); c != nil {
		t.Errorf("folder-level cycle: %s", strings.Join(c, " -> "))
	}
}

func TestFolderCycle(t *testing.T) {
	m := func(rel string) string { return Module + "/" + rel }
	tests := []struct {
		name    string
		g       Graph
		folders map[string][]string
		cycle   []string
	}{
		{
			name: "layers",
			g: Graph{
				m("serve"):           {m("policies/gate"), m("datasets/declog"), "fmt"},
				m("policies/gate"):   {"fmt"},
				m("train"):           {m("policies/gate"), m("train/runlog")},
				m("train/runlog"):    nil,
				m("datasets/declog"): nil,
			},
			folders: map[string][]string{"datasets": nil, "policies": nil, "serve": {"datasets", "policies"}, "train": {"policies"}},
		},
		{
			// The cycle of issue 31: train/direct read serve's decision log
			// while serve imported train.
			name: "serve and train",
			g: Graph{
				m("serve"):        {m("train"), m("serve/declog")},
				m("serve/declog"): nil,
				m("train"):        nil,
				m("train/direct"): {m("serve/declog")},
			},
			folders: map[string][]string{"serve": {"train"}, "train": {"serve"}},
			cycle:   []string{"serve", "train", "serve"},
		},
		{
			name: "three folders, found from the first in order",
			g: Graph{
				m("internal/agent"): {m("serve/proto")},
				m("serve"):          {m("datasets")},
				m("serve/proto"):    nil,
				m("datasets"):       {m("internal/pqlog")},
				m("internal/pqlog"): nil,
				m("env"):            {m("datasets")},
			},
			folders: map[string][]string{"datasets": {"internal"}, "env": {"datasets"}, "internal": {"serve"}, "serve": {"datasets"}},
			cycle:   []string{"datasets", "internal", "serve", "datasets"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Folders(tt.g)
			if d := cmp.Diff(tt.folders, f, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("Folders (-want,+got):\n%s", d)
			}
			if d := cmp.Diff(tt.cycle, FolderCycle(f)); d != "" {
				t.Errorf("FolderCycle (-want,+got):\n%s", d)
			}
		})
	}
}
