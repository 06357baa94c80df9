package repocheck

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxLines is the house rule: a hand-written Go file that would cross it is
// split by meaning, so that every file can be read in one sitting.
const maxLines = 500

// TestNoGoFileOver500Lines walks the whole workspace (from go.work up the
// tree) and fails for every hand-written Go file over maxLines lines.
// Generated code (protoc's and grpc-gateway's outputs, or any file with Go's
// "Code generated ... DO NOT EDIT." marker) and vendored code are exempt:
// no one reads or edits them by hand.
func TestNoGoFileOver500Lines(t *testing.T) {
	root := workspaceRoot(t)
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			// Hidden directories (.git, .fris's data), vendored code,
			// binaries and node modules hold nothing written here.
			if path != root && (strings.HasPrefix(name, ".") || name == "vendor" ||
				name == "node_modules" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || generatedName(name) {
			return nil
		}
		n, generated, err := countLines(path)
		if err != nil {
			return err
		}
		if generated {
			return nil
		}
		checked++
		if n > maxLines {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s: %d lines, over %d: split it by meaning", rel, n, maxLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A walk from the wrong place would pass on nothing.
	if checked < 100 {
		t.Fatalf("checked only %d Go files under %s: is it the workspace root?", checked, root)
	}
}

// generatedName: the generators' own file names.
func generatedName(name string) bool {
	for _, s := range []string{".pb.go", ".pb.gw.go", "_grpc.pb.go"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// countLines counts the file's lines and reports whether it carries Go's
// generated-code marker (go.dev/s/generatedcode) before its package clause.
func countLines(path string) (n int, generated bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	header := true
	for sc.Scan() {
		n++
		line := sc.Text()
		if header {
			if strings.HasPrefix(line, "package ") {
				header = false
			} else if strings.HasPrefix(line, "// Code generated ") && strings.HasSuffix(line, " DO NOT EDIT.") {
				generated = true
			}
		}
	}
	return n, generated, sc.Err()
}

// workspaceRoot is the nearest directory above the test's that holds go.work.
func workspaceRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.work above the test's directory")
		}
		dir = parent
	}
}
