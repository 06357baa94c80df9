package httpx

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"fris.dev/gateway/internal/apierr"
)

// CleanTarget refuses with 400 a request whose path or query, once
// percent-decoded, is not valid UTF-8 or holds a NUL byte. Every path and
// query parameter travels to a service as a proto string, which must be
// UTF-8: without this check the gRPC client fails to marshal the request
// and the client sees a 500 for its own mistake. No id FRIS issues or
// stores holds a NUL. Requests whose path textErrors names (the XML and
// text groups) get a plain-text reason, all others the JSON error body.
func CleanTarget(textErrors func(path string) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reason := targetProblem(r.URL)
		if reason == "" {
			next.ServeHTTP(w, r)
			return
		}
		if textErrors(r.URL.Path) {
			apierr.WriteText(w, http.StatusBadRequest, reason)
			return
		}
		apierr.WriteJSON(w, http.StatusBadRequest, reason)
	})
}

// targetProblem says what is wrong with u's path or query, or "".
func targetProblem(u *url.URL) string {
	if p := textProblem(u.Path); p != "" {
		return "the path " + p
	}
	if u.RawQuery == "" {
		return ""
	}
	// A query that does not decode is left to the handlers, as before: they
	// ignore what they cannot parse.
	if q, err := url.QueryUnescape(u.RawQuery); err == nil {
		if p := textProblem(q); p != "" {
			return "the query " + p
		}
	}
	return ""
}

func textProblem(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "holds a NUL byte"
	}
	return ""
}

// Under reports whether path is prefix or lies below it.
func Under(path, prefix string) bool {
	prefix = strings.TrimRight(prefix, "/")
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// LimitSegments refuses with 400 a request whose path has a segment (the
// text between two slashes, percent-decoded) longer than max bytes: no id
// any service stores is that long, so the request is refused before any
// service spends work on it. textErrors chooses the body as in CleanTarget.
func LimitSegments(max int, textErrors func(path string) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := longestSegment(r.URL.EscapedPath())
		if n <= max {
			next.ServeHTTP(w, r)
			return
		}
		reason := fmt.Sprintf("a path segment is longer than %d bytes (%d sent)", max, n)
		if textErrors(r.URL.Path) {
			apierr.WriteText(w, http.StatusBadRequest, reason)
			return
		}
		apierr.WriteJSON(w, http.StatusBadRequest, reason)
	})
}

// longestSegment is the length of p's longest segment once decoded (an
// escaped slash, %2F, is part of its segment).
func longestSegment(p string) int {
	longest := 0
	for seg := range strings.SplitSeq(p, "/") {
		n := len(seg)
		if strings.IndexByte(seg, '%') >= 0 {
			if d, err := url.PathUnescape(seg); err == nil {
				n = len(d)
			}
		}
		longest = max(longest, n)
	}
	return longest
}
