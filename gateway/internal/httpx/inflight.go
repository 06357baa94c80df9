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
// occupy the gateway for everyone.
func LimitInFlight(held *addrlimit.Counter, addr func(*http.Request) string, fail func(w http.ResponseWriter, r *http.Request, status int, msg string), next http.Handler) http.Handler {
	if held == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := addrlimit.Key(addr(r))
		if !held.Acquire(key) {
			w.Header().Set("Retry-After", InFlightRetry)
			if r.ContentLength != 0 {
				// Else net/http would read the unread body before it
				// answers, at whatever pace the client sends it.
				w.Header().Set("Connection", "close")
			}
			fail(w, r, http.StatusTooManyRequests, "too many requests in flight from your address; try again shortly")
			return
		}
		defer held.Release(key)
		next.ServeHTTP(w, r)
	})
}
