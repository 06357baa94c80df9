package e2e

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// The tests run side by side: each has its own processes, ports the kernel
// picks, temporary directories and Redis key prefix, and one test at a
// time mostly waits on its processes (about half a core on a two-core
// machine), so running them one after another left the cores idle.

// raiseParallel makes the default of -parallel three times GOMAXPROCS
// instead of GOMAXPROCS, for the waiting (measured on two quiet cores in
// make test: twice GOMAXPROCS 346 s for this package, three times 317 s,
// four times no better); -parallel on the command line wins.
func raiseParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(3*runtime.GOMAXPROCS(0)))
	}
}

// TestEveryTestParallel keeps a new test from running alone by accident:
// every top-level test calls t.Parallel() first, or says why not in a
// comment that begins its body with "Not parallel:" (a test that restarts
// a process on the port it had, which another test's listener could take
// meanwhile, or one whose timing a loaded machine would break).
func TestEveryTestParallel(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" || fn.Body == nil {
				continue
			}
			if callsParallel(fn.Body) || saysWhyNot(f, fn) {
				continue
			}
			t.Errorf("%s: %s neither calls t.Parallel() first nor begins with a \"// Not parallel: why\" comment", fset.Position(fn.Pos()), fn.Name.Name)
		}
	}
}

func callsParallel(body *ast.BlockStmt) bool {
	if len(body.List) == 0 {
		return false
	}
	es, ok := body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Parallel" && len(call.Args) == 0
}

// saysWhyNot finds a "// Not parallel:" comment before the body's first
// statement.
func saysWhyNot(f *ast.File, fn *ast.FuncDecl) bool {
	first := fn.Body.Rbrace
	if len(fn.Body.List) > 0 {
		first = fn.Body.List[0].Pos()
	}
	for _, cg := range f.Comments {
		if cg.Pos() > fn.Body.Lbrace && cg.End() < first && strings.HasPrefix(cg.Text(), "Not parallel:") {
			return true
		}
	}
	return false
}
