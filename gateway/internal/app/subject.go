package app

import (
	"context"
	"net/http"

	"fris.dev/gateway/internal/addrlimit"
)

// The per-address budgets (-max-conns-per-addr, -max-inflight-per-addr)
// are the strangers'. A request that shows a signed-in subject in its
// headers (a bearer token the gateway can vouch for at once, an Explorer
// session in memory) counts against its subject's budgets instead
// (-max-conns-per-subject, -max-inflight-per-subject), so many researchers
// behind one address (a hospital's NAT) do not share a stranger's
// allowance. Nothing but the headers is read for it, and no service is
// called; what a request without one holds stays its address's.

type subjectKey struct{}

// withSubject finds the request's signed-in subject with find, keeps it
// for subjectOf and moves the request's connection to the subject's
// budget (it stays there: a connection moves once).
func withSubject(find func(*http.Request) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := find(r); s != "" {
			addrlimit.MoveToSubject(r.Context(), s)
			r = r.WithContext(context.WithValue(r.Context(), subjectKey{}, s))
		}
		next.ServeHTTP(w, r)
	})
}

// subjectOf is the signed-in subject withSubject found; "" for a stranger.
func subjectOf(r *http.Request) string {
	s, _ := r.Context().Value(subjectKey{}).(string)
	return s
}
