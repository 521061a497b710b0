package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest function cmd/drover may hold, in lines
// from its func keyword to its closing brace (issue 31: the command
// parses flags, wires and prints; what does more belongs in a library).
const maxFuncLines = 80

// TestFunctionLength fails for a function or function literal of the
// command (tests excluded) longer than maxFuncLines.
func TestFunctionLength(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			what := ""
			switch x := n.(type) {
			case *ast.FuncDecl:
				what = x.Name.Name
			case *ast.FuncLit:
				what = "a function literal"
			default:
				return true
			}
			checked++
			from, to := fset.Position(n.Pos()), fset.Position(n.End())
			if lines := to.Line - from.Line + 1; lines > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines, want at most %d: move what it does into a library or a helper", name, from.Line, what, lines, maxFuncLines)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no function checked")
	}
}
