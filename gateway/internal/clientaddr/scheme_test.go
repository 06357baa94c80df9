package clientaddr

import (
	"crypto/tls"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestForwardedTLS(t *testing.T) {
	trusted, _ := Parse("10.0.0.0/8")
	for _, c := range []struct {
		name   string
		ps     Proxies
		remote string
		proto  []string
		want   bool
	}{
		{"no proxies: header ignored", nil, "10.1.2.3:80", []string{"https"}, false},
		{"untrusted peer: header ignored", trusted, "203.0.113.5:4711", []string{"https"}, false},
		{"trusted peer, https", trusted, "10.1.2.3:80", []string{"https"}, true},
		{"case", trusted, "10.1.2.3:80", []string{"HTTPS"}, true},
		{"trusted peer, http", trusted, "10.1.2.3:80", []string{"http"}, false},
		{"trusted peer, no header", trusted, "10.1.2.3:80", nil, false},
		{"the nearest proxy's value counts", trusted, "10.1.2.3:80", []string{"https, http"}, false},
		{"the nearest proxy's line counts", trusted, "10.1.2.3:80", []string{"http", " https "}, true},
		{"a client's value left of the proxy's is ignored", trusted, "10.1.2.3:80", []string{"https,http"}, false},
		{"garbage", trusted, "10.1.2.3:80", []string{"https;x"}, false},
		{"unparseable remote", trusted, "pipe", []string{"https"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.ps.ForwardedTLS(c.remote, c.proto); got != c.want {
				t.Fatalf("ForwardedTLS(%q, %q) = %v, want %v", c.remote, c.proto, got, c.want)
			}
		})
	}
}

func TestTLS(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-Forwarded-Proto", "https")
	if TLS(r) {
		t.Fatal("TLS believed a header no middleware vouched for")
	}
	if !TLS(r.WithContext(WithTLS(r.Context(), true))) {
		t.Fatal("TLS ignored the middleware's decision")
	}
	r.TLS = &tls.ConnectionState{}
	if !TLS(r) {
		t.Fatal("a TLS connection is not TLS")
	}
}

// FuzzForwardedTLS: whatever X-Forwarded-Proto says, an untrusted peer's
// request is never taken for TLS, and a trusted one's only when the header
// ends in https.
func FuzzForwardedTLS(f *testing.F) {
	for _, s := range []string{"https", "http", "https, http", "HTTPS", "", ",", " https ", "\x00"} {
		f.Add("10.1.2.3:80", s)
		f.Add("203.0.113.5:1", s)
	}
	trusted, _ := Parse("10.0.0.0/8")
	f.Fuzz(func(t *testing.T, remote, proto string) {
		got := trusted.ForwardedTLS(remote, []string{proto})
		if Proxies(nil).ForwardedTLS(remote, []string{proto}) {
			t.Fatal("no proxies, yet the header was believed")
		}
		if got && (!trusted.From(remote) || !strings.HasSuffix(strings.ToLower(strings.TrimSpace(proto)), "https")) {
			t.Fatalf("ForwardedTLS(%q, %q) = true", remote, proto)
		}
	})
}
