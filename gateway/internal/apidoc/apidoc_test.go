package apidoc

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"fris.dev/gateway/internal/apidoc/build"
)

// TestDocumentIsCurrent fails when openapi.json is not what its sources
// make: a proto's HTTP rule or api.yaml changed without `make apidoc`.
func TestDocumentIsCurrent(t *testing.T) {
	generated, err := os.ReadFile("../../../proto/openapi/fris.swagger.json")
	if err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile("api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := build.Build(generated, written)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(Document(), want) {
		t.Fatal("openapi.json is stale: run make apidoc")
	}
}

// TestDocumentIsValid loads the served document as a client would and
// validates it against OpenAPI 3.
func TestDocumentIsValid(t *testing.T) {
	doc, err := build.Load(Document())
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

func TestServed(t *testing.T) {
	mux := http.NewServeMux()
	Register(mux)
	for _, tc := range []struct{ path, contentType, contains string }{
		{DocumentPath, "application/json; charset=utf-8", `"openapi": "3.0.3"`},
		{PagePath, "text/html; charset=utf-8", `<redoc spec-url="openapi.json"`},
		{ScriptPath, "text/javascript; charset=utf-8", "Redoc"},
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != tc.contentType {
			t.Errorf("GET %s = %d %q, want 200 %q", tc.path, rec.Code, rec.Header().Get("Content-Type"), tc.contentType)
		}
		if !strings.Contains(rec.Body.String(), tc.contains) {
			t.Errorf("GET %s: body lacks %q", tc.path, tc.contains)
		}
	}
}

// TestPageIsOffline fails when the page loads anything from elsewhere: it
// must work on a network without the internet.
func TestPageIsOffline(t *testing.T) {
	external := regexp.MustCompile(`(?i)(src|href|spec-url)="(https?:)?//`)
	if m := external.Find(page); m != nil {
		t.Fatalf("page.html loads %s from another host", m)
	}
	// The page's relative URLs resolve, from PagePath, to the served paths.
	for _, ref := range []string{`spec-url="openapi.json"`, `src="docs/redoc.standalone.js"`} {
		if !bytes.Contains(page, []byte(ref)) {
			t.Errorf("page.html lacks %s", ref)
		}
	}
	if !strings.HasSuffix(ScriptPath, "/docs/redoc.standalone.js") || !strings.HasSuffix(DocumentPath, "/openapi.json") ||
		strings.TrimSuffix(PagePath, "/docs") != strings.TrimSuffix(DocumentPath, "/openapi.json") {
		t.Fatal("the page's relative URLs no longer match the served paths")
	}
}
