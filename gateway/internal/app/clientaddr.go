package app

import (
	"context"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"fris.dev/gateway/internal/clientaddr"
	"fris.dev/pkg/identity"
)

type clientAddrKey struct{}

// withClientAddr remembers the address the HTTP client connected from, for
// the services' audit log and abuse limits, and whether it reached the
// gateway over TLS, for Secure cookies and the Explorer's redirect URI
// (clientaddr.TLS). The address is the connection's, or, when the
// connection comes from a trusted proxy (-trusted-proxies), the client
// address the proxies recorded in X-Forwarded-For; TLS is the connection's,
// or a trusted proxy's X-Forwarded-Proto: https. A client's own
// X-Forwarded-For and X-Forwarded-Proto are never believed
// (docs/security.md).
func withClientAddr(proxies clientaddr.Proxies, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := proxies.Of(r.RemoteAddr, r.Header.Values("X-Forwarded-For"))
		tls := r.TLS != nil || proxies.ForwardedTLS(r.RemoteAddr, r.Header.Values("X-Forwarded-Proto"))
		ctx := clientaddr.WithTLS(context.WithValue(r.Context(), clientAddrKey{}, addr), tls)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// clientAddrOf is the address withClientAddr remembered for r.
func clientAddrOf(r *http.Request) string {
	addr, _ := r.Context().Value(clientAddrKey{}).(string)
	return addr
}

// clientAddrMetadata puts the remembered client address into a call's
// outgoing metadata, replacing any value, so every call to every service
// carries it whichever handler (grpc-gateway, the hand-written ones, the
// login page) makes it.
func clientAddrMetadata(ctx context.Context) context.Context {
	addr, _ := ctx.Value(clientAddrKey{}).(string)
	if addr == "" {
		return ctx
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	md.Set(identity.KeyClientAddr, addr)
	return metadata.NewOutgoingContext(ctx, md)
}

func clientAddrUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(clientAddrMetadata(ctx), method, req, reply, cc, opts...)
}

func clientAddrStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(clientAddrMetadata(ctx), desc, cc, method, opts...)
}

// forwardClientAddr is the dial option that adds the client address to
// every call.
func forwardClientAddr() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(clientAddrUnary), grpc.WithChainStreamInterceptor(clientAddrStream)}
}
