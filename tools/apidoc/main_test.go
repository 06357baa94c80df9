package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"fris.dev/tools/apidoc/build"
)

// TestDocumentIsCurrent fails when openapi.json is not what its sources
// make: a proto's HTTP rule or api.yaml changed without `make apidoc`.
func TestDocumentIsCurrent(t *testing.T) {
	g, err := os.ReadFile(fromTest(generated))
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.ReadFile(fromTest(written))
	if err != nil {
		t.Fatal(err)
	}
	want, err := build.Build(g, w)
	if err != nil {
		t.Fatal(err)
	}
	served, err := os.ReadFile(fromTest(out))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served, want) {
		t.Fatal("openapi.json is stale: run make apidoc")
	}
}

// TestDocumentIsValid loads the document the gateway serves as a client would and
// validates it against OpenAPI 3.
func TestDocumentIsValid(t *testing.T) {
	served, err := os.ReadFile(fromTest(out))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := build.Load(served)
	if err != nil {
		t.Fatal(err)
	}
	if n := doc.Paths.Len(); n < 50 {
		t.Fatalf("%d paths: the document lost most of them", n)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if len(op.Tags) != 1 {
				t.Errorf("%s %s: tags %v, want one group", method, path, op.Tags)
			}
			if op.Summary == "" {
				t.Errorf("%s %s has no summary", method, path)
			}
		}
	}
}

// fromTest makes a path relative to the tools module, as the command runs,
// relative to this package's directory, where its tests run.
func fromTest(p string) string { return filepath.Join("..", p) }
