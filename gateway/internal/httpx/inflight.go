package httpx

import (
	"net/http"

	"fris.dev/gateway/internal/addrlimit"
)

// InFlightRetry is the Retry-After, in seconds, of a request refused by
// LimitInFlight.
const InFlightRetry = "1"

// LimitInFlight refuses a request with 429 and Retry-After (answered by
// fail, in the group's error format) while its client address (addr:
// the one the gateway derives, behind trusted proxies the client's, not
// the proxy's), grouped by addrlimit.Key, has held the counter's
// maximum of requests in flight, so that one host's slow requests cannot
// occupy the gateway for everyone. A request of a signed-in subject
// (subject(r) not "") counts against bySubject under its subject instead:
// the address's budget is the strangers', and many signed-in users may
// share one address (a hospital's NAT), each with a results stream open.
func LimitInFlight(held, bySubject *addrlimit.Counter, addr, subject func(*http.Request) string, fail func(w http.ResponseWriter, r *http.Request, status int, msg string), next http.Handler) http.Handler {
	if held == nil && bySubject == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, key := held, ""
		if s := subject(r); s != "" {
			c, key = bySubject, s
		} else {
			key = addrlimit.Key(addr(r))
		}
		if !c.Acquire(key) {
			w.Header().Set("Retry-After", InFlightRetry)
			if r.ContentLength != 0 {
				// Else net/http would read the unread body before it
				// answers, at whatever pace the client sends it.
				w.Header().Set("Connection", "close")
			}
			msg := "too many requests in flight from your address; try again shortly"
			if c == bySubject {
				msg = "too many requests of yours in flight; try again shortly"
			}
			fail(w, r, http.StatusTooManyRequests, msg)
			return
		}
		defer c.Release(key)
		next.ServeHTTP(w, r)
	})
}
