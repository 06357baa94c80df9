package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// What the public port does not give away: the gateway's metrics are on its
// operations port only, and a client cannot make its cookies Secure (or the
// Explorer's redirect URI https) by sending X-Forwarded-Proto; a trusted
// proxy can.
func TestPublicPortExposure(t *testing.T) {
	t.Parallel()
	s := NewStack(t, Options{GatewayArgs: []string{"-trusted-proxies", "127.0.0.2/32"}})
	seedAuth(t, s)

	t.Run("metrics on the ops port only", func(t *testing.T) {
		s.Get(t, "/metrics", http.StatusNotFound)
		if s.GatewayOps == "" {
			t.Fatal("the gateway logged no ops address")
		}
		res, err := http.Get("http://" + s.GatewayOps + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(b), "fris_http_requests_total") {
			t.Fatalf("ops /metrics = %d, want 200 with fris_http_requests_total:\n%.300s", res.StatusCode, b)
		}
	})

	// The login page's CSRF cookie is Secure only when the browser came
	// over TLS, as a trusted proxy (127.0.0.2) may say.
	secure := func(t *testing.T, from string) bool {
		t.Helper()
		c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext,
		}}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, s.URL+"/oauth2/authorize?client_id="+demoClient, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Forwarded-Proto", "https")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		cookies := res.Cookies()
		if res.StatusCode != 200 || len(cookies) != 1 {
			t.Fatalf("authorize from %s: %d, cookies %v", from, res.StatusCode, cookies)
		}
		return cookies[0].Secure
	}
	t.Run("X-Forwarded-Proto from a client", func(t *testing.T) {
		if secure(t, "127.0.0.3") {
			t.Fatal("an untrusted client's X-Forwarded-Proto: https made the cookie Secure")
		}
	})
	t.Run("X-Forwarded-Proto from a trusted proxy", func(t *testing.T) {
		if !secure(t, "127.0.0.2") {
			t.Fatal("a trusted proxy's X-Forwarded-Proto: https did not make the cookie Secure")
		}
	})
}
