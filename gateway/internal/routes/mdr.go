// Package routes maps the documented REST paths onto the services.
package routes

import (
	"net/http"
	"strings"
)

// CanonicalMDRPrefix is the prefix the registry's HTTP rules are written for.
const CanonicalMDRPrefix = "/v3/api/mdr"

// mdrPaths are group B's paths below the prefix; all are GET.
var mdrPaths = []string{
	"/namespaces",
	"/namespaces/{namespace}/members",
	"/namespaces/{namespace}/search",
	"/dataelements/{urn}",
	"/dataelements/{urn}/labels",
	"/dataelements/{urn}/validations",
	"/dataelements/{urn}/uimodel",
	"/dataelements/{urn}/slots",
	"/dataelementgroups/{urn}/labels",
	"/dataelementgroups/{urn}/members",
	"/records/{urn}/labels",
	"/records/{urn}/members",
}

// MDR registers group B under prefix. The handler is grpc-gateway's mux,
// which knows the paths under the canonical prefix, so a configured prefix
// is rewritten to it first.
func MDR(mux Mux, prefix string, gw http.Handler) {
	prefix = strings.TrimRight(prefix, "/")
	h := gw
	if prefix != CanonicalMDRPrefix {
		h = rewritePrefix(prefix, CanonicalMDRPrefix, gw)
	}
	for _, p := range mdrPaths {
		mux.Handle("GET "+prefix+p, asGET(h))
	}
}

// asGET lets HEAD through as GET; net/http drops the body of HEAD responses.
func asGET(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			r = r.Clone(r.Context())
			r.Method = http.MethodGet
		}
		next.ServeHTTP(w, r)
	})
}

func rewritePrefix(from, to string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = to + strings.TrimPrefix(r.URL.Path, from)
		if r.URL.RawPath != "" {
			r2.URL.RawPath = to + strings.TrimPrefix(r.URL.RawPath, from)
		}
		next.ServeHTTP(w, r2)
	})
}
