package routes

import (
	"net/http"
	"strings"

	"fris.dev/gateway/internal/authn"
	"fris.dev/pkg/identity"
)

// ResearcherPath is where the researcher API (JSON, bearer tokens) lives
// under the broker's prefix; everything else there is the banks' text API.
func ResearcherPath(prefix string) string {
	return strings.TrimRight(prefix, "/") + "/searchbroker/researcher"
}

// researcherPaths are the researcher API's paths below ResearcherPath and
// the methods each serves, all forwarded to grpc-gateway (the rules of
// researcher.proto). GET reads; every other method writes with a JSON
// body.
var researcherPaths = []struct {
	path    string
	methods []string
}{
	{"/inquiries", []string{http.MethodGet, http.MethodPost}},
	{"/inquiries/{id}", []string{http.MethodGet, http.MethodPut}},
	{"/inquiries/{id}/release", []string{http.MethodPost}},
	{"/inquiries/{id}/close", []string{http.MethodPost}},
	{"/inquiries/{id}/replies", []string{http.MethodGet}},
	{"/inquiries/{id}/reach", []string{http.MethodGet}},
	{"/sites", []string{http.MethodGet}},
}

// researcherRoutes registers the researcher API: c.Researcher, the
// grpc-gateway mux, behind a bearer token with the researcher scope.
func researcherRoutes(handle func(string, methods), prefix string, c BrokerConfig) {
	gw := canonical(prefix, CanonicalBrokerPrefix, c.Researcher)
	// Asking every site a question is a role an operator grants, not
	// something any signed-in (or self-registered) user may do.
	researcher := func(h http.Handler) http.Handler {
		return researcherAuth(c.Verifier, authn.Scope(identity.ScopeResearcher, "fris", h))
	}
	read := researcher(gw)
	write := researcher(jsonBody(nil, gw))
	for _, p := range researcherPaths {
		m := methods{}
		for _, method := range p.methods {
			if method == http.MethodGet {
				m[method] = read
			} else {
				m[method] = write
			}
		}
		handle(ResearcherPath(prefix)+p.path, m)
	}
}

// researcherAuth admits a request only with a bearer access token the
// verifier accepts and passes its identity on (the token itself is not
// forwarded). Without one: 401 with a Bearer challenge, what JSON clients
// expect of an API (RFC 6750). The researcher scope is checked after it
// (authn.Scope): a valid token without it is 403.
func researcherAuth(v authn.Verifier, next http.Handler) http.Handler {
	return authn.Require(v, authn.Challenge{Status: http.StatusUnauthorized, Realm: "fris"}, next)
}
