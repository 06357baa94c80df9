package login

import (
	"net/http/httptest"
	"testing"

	"fris.dev/gateway/internal/clientaddr"
)

// The CSRF cookie is Secure when the gateway's middleware decided the
// browser came over TLS (a trusted proxy's X-Forwarded-Proto); the header
// alone, which any client can send, does not make it so.
func TestSecureCookieBehindTLS(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tls    bool
		secure bool
	}{{"trusted proxy says https", true, true}, {"header only", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/oauth2/authorize?client_id=c1", nil)
			req.Header.Set("X-Forwarded-Proto", "https")
			if tc.tls {
				req = req.WithContext(clientaddr.WithTLS(req.Context(), true))
			}
			rec := httptest.NewRecorder()
			newHandler(&fakeAuth{}).ServeHTTP(rec, req)
			if c := rec.Result().Cookies(); len(c) != 1 || c[0].Secure != tc.secure {
				t.Fatalf("cookies %v, want one with Secure %v", c, tc.secure)
			}
		})
	}
}
