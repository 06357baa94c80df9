package routes

import (
	"net/http"
	"strings"
)

// CanonicalMDRPrefix is the prefix the registry's HTTP rules are written for.
const CanonicalMDRPrefix = "/v3/api/mdr"

// mdrPaths are group B's paths below the prefix; all are GET. The last six
// are not in the spec: common-mdrclient calls them.
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
	"/dataelementgroups/{urn}/slots",
	"/members",
	"/search/local",
	"/representations",
	"/dataelements/{urn}/catalog",
	"/catalogs/{urn}/codes",
}

// MDR registers group B under prefix. The handler is grpc-gateway's mux,
// which knows the paths under the canonical prefix, so a configured prefix
// is rewritten to it first.
func MDR(mux Mux, prefix string, gw http.Handler) {
	prefix = strings.TrimRight(prefix, "/")
	h := asGET(canonical(prefix, CanonicalMDRPrefix, gw))
	for _, p := range mdrPaths {
		mux.Handle("GET "+prefix+p, h)
	}
}
