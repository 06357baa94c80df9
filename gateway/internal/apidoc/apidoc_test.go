package apidoc

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

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
