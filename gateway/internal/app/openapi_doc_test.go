package app

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"fris.dev/gateway/internal/apidoc"
)

// apiRoute is one operation of the served OpenAPI document.
type apiRoute struct{ method, path string }

// apiRoutes lists the document's operations, and the patterns it leaves
// out on purpose (x-fris-not-api: browser pages).
func apiRoutes(t *testing.T) (ops []apiRoute, notAPI []string) {
	t.Helper()
	// Only the operations' methods and paths are needed, so plain JSON
	// will do: the gateway module does not link an OpenAPI library.
	var doc struct {
		Paths  map[string]map[string]json.RawMessage `json:"paths"`
		NotAPI []string                              `json:"x-fris-not-api"`
	}
	if err := json.Unmarshal(apidoc.Document(), &doc); err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths {
		for key := range item {
			switch key {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				ops = append(ops, apiRoute{strings.ToUpper(key), path})
			}
		}
	}
	if len(ops) < 50 {
		t.Fatalf("%d operations in the document: most are lost", len(ops))
	}
	notAPI = doc.NotAPI
	return ops, notAPI
}

// notDescribed tells whether a route-table path is one of the document's
// x-fris-not-api patterns, or below one that ends in "/".
func notDescribed(path string, notAPI []string) bool {
	for _, p := range notAPI {
		if path == p || strings.HasSuffix(p, "/") && strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// TestOpenAPIListsEveryRoute fails when a pattern of the gateway's route
// table has no operation in the OpenAPI document (the same enumeration as
// TestInterfaceDocListsEveryRoute).
func TestOpenAPIListsEveryRoute(t *testing.T) {
	cfg, up := docEnv(t)
	var table patternRecorder
	if _, err := routeTable(t.Context(), &table, nil, cfg, up, stubVerifier{}, slog.New(slog.DiscardHandler), nil); err != nil {
		t.Fatal(err)
	}
	api, notAPI := apiRoutes(t)
	norm := func(p string) string { return docPlaceholder.ReplaceAllString(p, "{}") }
	for _, pattern := range table {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok {
			method, path = "", pattern
		}
		if notDescribed(path, notAPI) {
			continue
		}
		subtree := strings.HasSuffix(path, "/")
		path = norm(strings.TrimSuffix(path, "{$}"))
		found := false
		for _, a := range api {
			if method != "" && a.method != method {
				continue
			}
			if p := norm(a.path); p == path || subtree && strings.HasPrefix(p, path) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("the gateway serves %q, which the OpenAPI document does not describe", pattern)
		}
	}
}

// TestOpenAPIRoutesAreServed fails when the OpenAPI document describes a
// method and path the gateway does not serve (404 or 405 through the whole
// handler).
func TestOpenAPIRoutesAreServed(t *testing.T) {
	cfg, up := docEnv(t)
	h, err := Handler(t.Context(), cfg, up, stubVerifier{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	api, _ := apiRoutes(t)
	if len(api) < 60 {
		t.Fatalf("%d operations in the OpenAPI document: it lost most of them", len(api))
	}
	for _, a := range api {
		target := docPlaceholder.ReplaceAllString(a.path, "x1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(a.method, target, nil))
		if rec.Code == http.StatusNotFound || rec.Code == http.StatusMethodNotAllowed {
			t.Errorf("%s %s (described as %s): %d %s", a.method, target, a.path, rec.Code, strings.TrimSpace(rec.Body.String()))
		}
	}
}
