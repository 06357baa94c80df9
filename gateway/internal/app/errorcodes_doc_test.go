package app

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"fris.dev/gateway/internal/apierr"
)

// docRepoRoot is the repository as a clone's reader finds it.
const docRepoRoot = "../../.."

// docStatusCodes is the `error` of a JSON error body for every 4xx and 5xx
// status, as apierr writes it: the codes that follow the status.
func docStatusCodes(t *testing.T) map[int]string {
	t.Helper()
	out := map[int]string{}
	for s := 400; s < 600; s++ {
		if http.StatusText(s) == "" {
			continue
		}
		rec := httptest.NewRecorder()
		apierr.WriteJSON(rec, s, "x")
		var b apierr.Body
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
			t.Fatalf("status %d: %v", s, err)
		}
		out[s] = b.Error
	}
	return out
}

// docReasonCall is a call whose argument at index arg is an error code that
// replaces the status's: a reason a service attaches (the gateway turns it
// into the body's `error`), or a code the gateway writes itself.
var docReasonCall = map[string]int{"rpcerr.WithReason": 1, "apierr.WriteOAuth": 2}

// docReasonCodes finds every code given to a docReasonCall in the repository's
// Go code (tests excluded), as a string literal or a string constant of
// the calling package. A call whose code cannot be read fails the test:
// it might answer a code the doc does not list.
func docReasonCodes(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	byDir := map[string][]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(docRepoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != docRepoRoot && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules" || n == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.Contains(p, ".pb.") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		byDir[filepath.Dir(p)] = append(byDir[filepath.Dir(p)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, files := range byDir {
		consts := map[string]string{}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				vs, ok := n.(*ast.ValueSpec)
				if !ok {
					return true
				}
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							consts[name.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
				return true
			})
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				x, ok := sel.X.(*ast.Ident)
				if !ok {
					return true
				}
				arg, ok := docReasonCall[x.Name+"."+sel.Sel.Name]
				if !ok || len(call.Args) <= arg {
					return true
				}
				where := fset.Position(call.Pos()).String()
				var code string
				switch a := call.Args[arg].(type) {
				case *ast.BasicLit:
					code, _ = strconv.Unquote(a.Value)
				case *ast.Ident:
					var known bool
					if code, known = consts[a.Name]; !known {
						t.Errorf("%s: the error code %s is not a string constant of its package: this test cannot read it", where, a.Name)
						return true
					}
				default:
					t.Errorf("%s: the error code is not a string literal or constant: this test cannot read it", where)
					return true
				}
				if code != "" { // "": the status's own code
					out[code] = append(out[code], where)
				}
				return true
			})
		}
	}
	return out
}

var (
	docCode      = regexp.MustCompile("`([a-z_]+)`")
	docStatusNum = regexp.MustCompile(`\b[45]\d\d\b`)
)

// docErrorCodes reads the section "Error bodies" of interfaceDoc: every
// backticked word outside code blocks (what the section mentions), and for
// each table row whose first cell is a code, the statuses its second cell
// names (what it lists).
func docErrorCodes(t *testing.T) (codes map[string]bool, rows map[string][]int) {
	t.Helper()
	b, err := os.ReadFile(interfaceDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n### Error bodies\n")
	if !ok {
		t.Fatalf("%s has no section \"### Error bodies\"", interfaceDoc)
	}
	if i := strings.Index(sec, "\n#"); i >= 0 {
		sec = sec[:i]
	}
	codes, rows = map[string]bool{}, map[string][]int{}
	fence := false
	for _, line := range strings.Split(sec, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		for _, m := range docCode.FindAllStringSubmatch(line, -1) {
			codes[m[1]] = true
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.TrimSpace(cells[0]) != "" {
			continue
		}
		m := docCode.FindStringSubmatch(strings.TrimSpace(cells[1]))
		if m == nil {
			continue
		}
		for _, s := range docStatusNum.FindAllString(cells[2], -1) {
			n, _ := strconv.Atoi(s)
			rows[m[1]] = append(rows[m[1]], n)
		}
	}
	return codes, rows
}

// TestInterfaceDocListsEveryErrorCode fails when the code can answer an
// `error` that docs/interface.md, "Error bodies", does not mention, when
// the doc's table lists one the code never answers, or when the doc's table pairs a
// code with a status the gateway answers with another code.
func TestInterfaceDocListsEveryErrorCode(t *testing.T) {
	byStatus := docStatusCodes(t)
	reasons := docReasonCodes(t)
	doc, rows := docErrorCodes(t)
	if len(reasons) < 3 {
		t.Fatalf("found %d reason codes in the code (%v): the search no longer finds them", len(reasons), reasons)
	}

	produced := map[string]string{} // code -> where it comes from
	for s, c := range byStatus {
		produced[c] = "the status " + strconv.Itoa(s) + " (gateway/internal/apierr)"
	}
	for c, where := range reasons {
		produced[c] = strings.Join(where, ", ")
	}
	var names []string
	for c := range produced {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		if !doc[c] {
			t.Errorf("the gateway answers the error code `%s` (%s), which %s, \"Error bodies\", does not mention", c, produced[c], interfaceDoc)
		}
	}
	for c := range rows {
		if _, ok := produced[c]; !ok {
			t.Errorf("%s, \"Error bodies\", lists `%s`, which no code answers", interfaceDoc, c)
		}
	}
	for c, statuses := range rows {
		if _, reason := reasons[c]; reason {
			continue // a reason replaces whatever its status says
		}
		for _, s := range statuses {
			if got := byStatus[s]; got != c {
				t.Errorf("%s pairs `%s` with %d; the gateway answers %d with `%s`", interfaceDoc, c, s, s, got)
			}
		}
	}
}
