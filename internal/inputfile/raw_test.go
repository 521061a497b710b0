package inputfile

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rawReadsAllowed are the files of the module that may open or read a
// file directly (os.Open, os.ReadFile, tls.LoadX509KeyPair) rather than
// through this package, and why. Everything else that reads a path goes
// through ReadFile or Open.
var rawReadsAllowed = map[string]string{
	"internal/inputfile/inputfile.go":       "the reader itself",
	"internal/loadgen/proc.go":              "/proc/PID files of a process it started, not a user's path",
	"internal/pqlog/recover.go":             "the write-ahead logs its own writer left, recovered before the writer reopens the directory",
	"internal/pqlog/writer.go":              "opens its directory to sync it",
	"train/runlog/run.go":                   "opens a run directory to list it",
	"internal/testpki/testpki.go":           "test certificates it wrote itself",
	"internal/pqlog/pqlogtest/pqlogtest.go": "test helper over files the test wrote",
	"serve/state/persist.go":                "opens the state directory to sync it",
	"datasets/llm/lmm2025_digitise.go":      "a go:generate tool reading the shared traces' published figures, not a user's path",
	"scripts/splitwise/replay/main.go":      "a measurement script timed against SplitwiseSim (scripts/splitwise/speed.sh): its reads are part of what is timed, as SplitwiseSim's are",
}

// TestNoRawReads: no package of the module reads a file by os.Open,
// os.ReadFile or tls.LoadX509KeyPair outside rawReadsAllowed, so that
// every path a user gives meets the same limits (a device, a FIFO or a
// huge file refused, naming the path). Tests are exempt, and so are
// calls on a string literal (a fixed path such as /proc/loadavg).
func TestNoRawReads(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	raw := map[string][]string{} // file -> calls at lines
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if len(call.Args) > 0 {
				if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					return true // a fixed path ("/proc/loadavg"), not a user's
				}
			}
			switch pkg.Name + "." + sel.Sel.Name {
			case "os.Open", "os.ReadFile", "tls.LoadX509KeyPair":
				raw[rel] = append(raw[rel], fmt.Sprintf("%s:%d", rel, fset.Position(call.Pos()).Line))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files := slices.Sorted(func(yield func(string) bool) {
		for f := range raw {
			if !yield(f) {
				return
			}
		}
	})
	for _, f := range files {
		if _, ok := rawReadsAllowed[f]; !ok {
			t.Errorf("%s reads a file directly (%s): use inputfile.ReadFile or Open with a limit, or add the file to rawReadsAllowed with the reason", f, strings.Join(raw[f], ", "))
		}
	}
	for f := range rawReadsAllowed {
		if _, ok := raw[f]; !ok {
			t.Logf("rawReadsAllowed lists %s, which reads nothing directly any more: remove it", f)
		}
	}
}
