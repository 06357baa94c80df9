package clientaddr

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// From reports whether a connection from remote (host:port) comes from a
// trusted proxy, whose forwarding headers are believed.
func (ps Proxies) From(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	peer, err := netip.ParseAddr(host)
	return err == nil && ps.trusts(peer)
}

// ForwardedTLS reports whether a trusted proxy says the browser reached it
// over TLS: X-Forwarded-Proto's last value (the one the nearest proxy
// wrote) is https. From anyone else the header means nothing: a client
// could otherwise choose the Secure flag of its cookies and the scheme of
// the Explorer's redirect URI.
func (ps Proxies) ForwardedTLS(remote string, proto []string) bool {
	if len(proto) == 0 || !ps.From(remote) {
		return false
	}
	last := proto[len(proto)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	return strings.EqualFold(strings.TrimSpace(last), "https")
}

type tlsKey struct{}

// WithTLS records in ctx whether the browser reached the gateway over TLS,
// as the middleware that knows the trusted proxies decided.
func WithTLS(ctx context.Context, tls bool) context.Context {
	return context.WithValue(ctx, tlsKey{}, tls)
}

// TLS reports whether the browser reached the gateway over TLS: directly,
// or through a trusted proxy that says so (WithTLS). A request that did not
// pass the middleware counts only its own connection.
func TLS(r *http.Request) bool {
	if tls, ok := r.Context().Value(tlsKey{}).(bool); ok {
		return tls
	}
	return r.TLS != nil
}
