// Package apidoc serves the gateway's API reference: the OpenAPI 3
// document of every public path (openapi.json, made by `make apidoc` from
// the protos' HTTP rules and api.yaml, see package build) and a page that
// renders it with the vendored Redoc, so that it works offline.
package apidoc

import (
	_ "embed"
	"net/http"
)

// The paths the reference is served at. They are fixed: the document
// names paths under the default prefixes, whatever the gateway's flags.
const (
	DocumentPath = "/api/openapi.json"
	PagePath     = "/api/docs"
	ScriptPath   = "/api/docs/redoc.standalone.js"
)

var (
	//go:embed openapi.json
	document []byte
	//go:embed page.html
	page []byte
	//go:embed redoc/redoc.standalone.js
	script []byte
)

// Document is the OpenAPI document the gateway serves.
func Document() []byte { return document }

// Mux is what registering the reference needs of the gateway's mux.
type Mux interface {
	Handle(pattern string, handler http.Handler)
}

// Register adds the document, the page and the page's script to mux.
func Register(mux Mux) {
	mux.Handle("GET "+DocumentPath, static("application/json; charset=utf-8", document))
	mux.Handle("GET "+PagePath, static("text/html; charset=utf-8", page))
	mux.Handle("GET "+ScriptPath, static("text/javascript; charset=utf-8", script))
}

// static answers fixed bytes. The gateway's ETag layer makes them
// conditional; no-cache (the default) keeps a new release's document from
// being shadowed by a cached one.
func static(contentType string, body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", contentType)
		h.Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(body)
	})
}
